/**
 * A cheap, deterministic guess at what a chunk is (decision, preference, fact…), from keyword cues in
 * English and French and from the shape of the text. It only feeds filters and ranking hints, so it
 * favours predictability over cleverness: the same text always gets the same type.
 */

import { extname } from 'node:path';
import type { ChunkerName, ChunkType } from '../types.ts';
import { CODE_EXTENSIONS } from './chunkers/index.ts';

/** What the classifier may know besides the text. */
export interface ClassifyHints {
  chunker: ChunkerName;
  path?: string;
}

/** JS `\b` only knows ASCII letters, so "décidé" would never end a word; this boundary knows all letters. */
const BOUNDARY = '(?:(?<=[\\p{L}\\p{N}_])(?![\\p{L}\\p{N}_])|(?<![\\p{L}\\p{N}_])(?=[\\p{L}\\p{N}_]))';

/** Recompiles a literal with Unicode-aware word boundaries. */
function u(re: RegExp): RegExp {
  return new RegExp(re.source.replaceAll('\\b', BOUNDARY), `${re.flags}u`);
}

/** Builds a value on first use: the Unicode-aware patterns take ~20 ms to build, a cost only ingest needs. */
function once<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/** Cue patterns per type; each distinct pattern that matches scores one point. */
const cues = once(
  (): Record<'decision' | 'preference' | 'pattern' | 'note', RegExp[]> => ({
    decision: [
      u(/\bwe(?:'ve| have)? (?:decided|agreed|chose|opted|settled on)\b/i),
      u(/\b(?:decided|agreed) to\b/i),
      u(/\bdecision\s*:/i),
      u(/\bwe(?:'ll| will| are going to) (?:use|go with|adopt|switch to|move to|keep)\b/i),
      u(/\bchose \S+(?: \S+){0,4} over\b/i),
      u(/\bin favou?r of\b/i),
      u(/\bnous avons (?:décidé|choisi|convenu|opté)\b/i),
      u(/\bon a (?:décidé|choisi|opté)\b/i),
      u(/\bdécision\s*:/i),
      u(/\b(?:il est |c'est )?décidé (?:de|que)\b/i),
      u(/\bnous (?:utiliserons|allons utiliser|adopterons)\b/i),
    ],
    preference: [
      u(/\bI (?:really |strongly )?(?:prefer|like|love|hate|dislike)\b/i),
      u(/\bI (?:don't|do not) (?:like|want)\b/i),
      u(/\b(?:always|never) use\b/i),
      u(/\bprefer(?:s|red)? \S+(?: \S+){0,4} (?:over|to|instead of)\b/i),
      u(/\bmy (?:preference|favou?rite)\b/i),
      u(/\bpreference\s*:/i),
      u(/\bje (?:préfère|préférerais|n'aime pas|aime|déteste)\b/i),
      u(/\b(?:toujours|jamais) utiliser\b/i),
      u(/\bn'utilise(?:z)? jamais\b/i),
    ],
    pattern: [
      u(/\bwhenever\b/i),
      u(/\bevery time\b/i),
      u(/\bthe pattern is\b/i),
      u(/\brule of thumb\b/i),
      u(/\btends? to\b/i),
      u(/\bas a rule\b/i),
      u(/\bchaque fois que?\b/i),
      u(/\bà chaque fois\b/i),
      u(/\bune règle\b/i),
      u(/\ba tendance à\b/i),
      u(/\bont tendance à\b/i),
    ],
    note: [
      u(/(?<![^\n])[^\S\n]*(?:[-*]\s*)?(?:note|nb|n\.b\.|ps|todo|fixme|reminder|rappel|à faire)\s*:/i),
      u(/\bTODO\b/),
      u(/\bremember (?:to|that)\b/i),
      u(/\bdon't forget\b/i),
      u(/\bne pas oublier\b/i),
      u(/\bpenser à\b/i),
      u(/\bn'oublie(?:z)? pas\b/i),
      u(/(?<![^\n])[^\S\n]*[-*] \[[ xX]\]/),
    ],
  }),
);

/** Text length that one matching cue can speak for. */
const CHARS_PER_CUE = 2000;

/** Priority when scores tie. */
const ORDER = ['decision', 'preference', 'pattern', 'note'] as const;

/** Statement shapes that read as facts: "X is Y", definitions, dated or numbered claims. */
const factShapes = once(() => [
  u(/\b(?:is|are|was|were) (?:a|an|the|located|born|founded|made|called|known|defined)\b/i),
  u(
    /\b(?:est|sont|était|étaient) (?:un|une|le|la|les|situé|située|né|née|fondé|fondée|appelé|appelée|défini)\b/i,
  ),
  u(/\bthe (?:capital|population|height|length|size|name|author|founder) of\b/i),
  u(/\b(?:la capitale|la population|l'auteur|le fondateur) de\b/i),
  u(/\b(?:means|refers to|consists of|stands for|désigne|signifie)\b/i),
  u(/\b(?:1[0-9]{3}|20[0-9]{2})\b/),
  u(/\b\d+(?:[.,]\d+)?\s?(?:%|km|kg|m|cm|mb|gb|ms|s|years?|ans|mètres|people|habitants)\b/i),
]);

/** Lines that read as code in common languages: declarations, control flow, calls, statement ends. */
const CODE_LINE_ALTERNATIVES = [
  String.raw`(?:export |async )?function\b`,
  String.raw`(?:const|let|var)\s+\w+\s*=`,
  String.raw`(?:def|fn|func)\s+\w+\s*\(`,
  String.raw`class\s+\w+`,
  String.raw`import\s.+(?:from|;|$)`,
  String.raw`from\s+\S+\s+import\b`,
  String.raw`return\b`,
  String.raw`(?:if|for|while|switch|catch)\s*\(`,
  String.raw`(?:if|elif|else|for|while|try|except|finally|with)\b.*:\s*$`,
  String.raw`#include\b`,
  String.raw`package\s+\w`,
  String.raw`(?:public|private|protected)\s`,
  String.raw`[\w.\[\]]+\s*=\s*[\w.]+\(.*\)(?:\s*;)?\s*$`,
  String.raw`[\w.]+\(.*\)(?:\s*;)?\s*$`,
  String.raw`\}\s*(?:else\b|$)`,
  String.raw`.*[;{]\s*$`,
  String.raw`.*=>(?:\s*[{(])?\s*$`,
  String.raw`<\/?[a-z][\w-]*[\s>]`,
];
// The leading whitespace is taken whole (a lookahead and a backreference make it atomic): giving it back
// one character at a time would retry every alternative at each step, time quadratic in a line of spaces.
const CODE_LINE = new RegExp(
  `^(?=(\\s*))\\1(?:${CODE_LINE_ALTERNATIVES.map((alt) => `(?:${alt})`).join('|')})`,
);

/** Guesses the type of a chunk from its text, its chunker and its file's extension. */
export function classifyChunk(text: string, hints: ClassifyHints): ChunkType {
  if (isCodeFile(hints) || looksLikeCode(text)) return 'code';
  let best: (typeof ORDER)[number] | null = null;
  // One cue in a long chunk says little about the chunk: ask for one per CHARS_PER_CUE characters.
  let bestScore = Math.max(1, Math.floor(text.length / CHARS_PER_CUE)) - 1;
  for (const type of ORDER) {
    let score = 0;
    for (const re of cues()[type]) if (re.test(text)) score++;
    if (score > bestScore) {
      best = type;
      bestScore = score;
    }
  }
  if (best !== null) return best;
  if (looksLikeFact(text)) return 'fact';
  return 'text';
}

function isCodeFile(hints: ClassifyHints): boolean {
  if (hints.chunker !== 'lines' || hints.path === undefined) return false;
  return CODE_EXTENSIONS.has(extname(hints.path).slice(1).toLowerCase());
}

/** Mostly fenced code, or lines that mostly look like statements, with code punctuation to match. */
export function looksLikeCode(text: string): boolean {
  const sample = text.length > 20_000 ? text.slice(0, 20_000) : text;
  let fenced = 0;
  // An info string holds no backtick (CommonMark), which also keeps a run of backticks from being retried
  // as a fence opening at every position.
  for (const m of sample.matchAll(/```[^\n`]*\n([\s\S]*?)(?:```|$)/g)) fenced += m[0].length;
  if (fenced > 0 && fenced >= sample.trim().length * 0.5) return true;
  const density = codePunctuationDensity(sample);
  // Prose has almost no code punctuation: skip the per-line patterns, the costly part, for it.
  if (density <= 0.04) return false;
  const lines = sample.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return false;
  const codeLines = lines.filter((l) => CODE_LINE.test(l)).length;
  if (lines.length === 1) return codeLines === 1 && density > 0.08;
  return codeLines / lines.length >= 0.4 && density > 0.04;
}

/**
 * Code punctuation (`{}();=<>[]`) per visible (non-`\s`) character. Counted in one pass: a regex
 * `match` and `replace` here allocated about ten times the ingested text, for every chunk.
 */
function codePunctuationDensity(text: string): number {
  let symbols = 0;
  let visible = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) {
      if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) continue;
      visible++;
      if (CODE_PUNCTUATION[c] === 1) symbols++;
    } else if (!isJsSpace(c)) visible++;
  }
  return symbols / (visible || 1);
}

/** ASCII code units of `{}();=<>[]`. */
const CODE_PUNCTUATION = new Uint8Array(128);
for (const ch of '{}();=<>[]') CODE_PUNCTUATION[ch.charCodeAt(0)] = 1;

/** What JavaScript's `\s` matches above ASCII. */
function isJsSpace(c: number): boolean {
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Short declarative text with a fact shape: a definition, a named quantity, a date. */
function looksLikeFact(text: string): boolean {
  const t = text.trim();
  if (t.length === 0 || t.length > 600 || t.endsWith('?')) return false;
  return factShapes().some((re) => re.test(t));
}
