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

/**
 * A cue pattern and a cheap test that must hold wherever the pattern matches: the literal text any match
 * contains, looked up in the lowercased chunk (or, for a case-sensitive pattern, in the chunk itself).
 * Most chunks hold none of a type's literals, so most patterns never run; where a gate passes, the
 * pattern decides, so the classification is exactly the patterns'. A pattern anchored at line starts
 * (`lineStart`) is tried at line starts only, through a sticky copy: the same matches, found without
 * testing its lookbehind at every position.
 */
interface Cue {
  re: RegExp;
  /** Any of these in the lowercased text (or in the text itself when `cased`). */
  any: readonly string[];
  cased?: boolean;
  lineStart?: boolean;
}

/** Builds a cue; `re` is compiled with Unicode-aware word boundaries ({@link u}). */
function cue(re: RegExp, any: readonly string[], opts: { cased?: boolean; lineStart?: boolean } = {}): Cue {
  const compiled = u(re);
  return {
    re: opts.lineStart ? new RegExp(compiled.source, `${compiled.flags}y`) : compiled,
    any,
    ...opts,
  };
}

/** Cue patterns per type; each distinct pattern that matches scores one point. */
const cues = once(
  (): Record<CueType, Cue[]> => ({
    decision: [
      cue(/\bwe(?:'ve| have)? (?:decided|agreed|chose|opted|settled on)\b/i, [
        'decided',
        'agreed',
        'chose',
        'opted',
        'settled on',
      ]),
      cue(/\b(?:decided|agreed) to\b/i, ['decided to', 'agreed to']),
      cue(/\bdecision\s*:/i, ['decision']),
      cue(/\bwe(?:'ll| will| are going to) (?:use|go with|adopt|switch to|move to|keep)\b/i, [
        "we'll",
        'we will',
        'we are going to',
      ]),
      cue(/\bchose \S+(?: \S+){0,4} over\b/i, ['chose ']),
      cue(/\bin favou?r of\b/i, ['in favor of', 'in favour of']),
      cue(/\bnous avons (?:décidé|choisi|convenu|opté)\b/i, ['nous avons ']),
      cue(/\bon a (?:décidé|choisi|opté)\b/i, ['on a ']),
      cue(/\bdécision\s*:/i, ['décision']),
      cue(/\b(?:il est |c'est )?décidé (?:de|que)\b/i, ['décidé ']),
      cue(/\bnous (?:utiliserons|allons utiliser|adopterons)\b/i, [
        'nous utiliserons',
        'nous allons utiliser',
        'nous adopterons',
      ]),
    ],
    preference: [
      cue(/\bI (?:really |strongly )?(?:prefer|like|love|hate|dislike)\b/i, [
        'prefer',
        'like',
        'love',
        'hate',
      ]),
      cue(/\bI (?:don't|do not) (?:like|want)\b/i, ["i don't", 'i do not']),
      cue(/\b(?:always|never) use\b/i, ['always use', 'never use']),
      cue(/\bprefer(?:s|red)? \S+(?: \S+){0,4} (?:over|to|instead of)\b/i, ['prefer']),
      cue(/\bmy (?:preference|favou?rite)\b/i, ['my preference', 'my favorite', 'my favourite']),
      cue(/\bpreference\s*:/i, ['preference']),
      cue(/\bje (?:préfère|préférerais|n'aime pas|aime|déteste)\b/i, ['je ']),
      cue(/\b(?:toujours|jamais) utiliser\b/i, ['toujours utiliser', 'jamais utiliser']),
      cue(/\bn'utilise(?:z)? jamais\b/i, ["n'utilise"]),
    ],
    pattern: [
      cue(/\bwhenever\b/i, ['whenever']),
      cue(/\bevery time\b/i, ['every time']),
      cue(/\bthe pattern is\b/i, ['the pattern is']),
      cue(/\brule of thumb\b/i, ['rule of thumb']),
      cue(/\btends? to\b/i, ['tend to', 'tends to']),
      cue(/\bas a rule\b/i, ['as a rule']),
      cue(/\bchaque fois que?\b/i, ['chaque fois']),
      cue(/\bà chaque fois\b/i, ['à chaque fois']),
      cue(/\bune règle\b/i, ['une règle']),
      cue(/\ba tendance à\b/i, ['a tendance à']),
      cue(/\bont tendance à\b/i, ['ont tendance à']),
    ],
    note: [
      cue(
        /(?<![^\n])[^\S\n]*(?:[-*]\s*)?(?:note|nb|n\.b\.|ps|todo|fixme|reminder|rappel|à faire)\s*:/i,
        [':'],
        { lineStart: true },
      ),
      cue(/\bTODO\b/, ['TODO'], { cased: true }),
      cue(/\bremember (?:to|that)\b/i, ['remember to', 'remember that']),
      cue(/\bdon't forget\b/i, ["don't forget"]),
      cue(/\bne pas oublier\b/i, ['ne pas oublier']),
      cue(/\bpenser à\b/i, ['penser à']),
      cue(/\bn'oublie(?:z)? pas\b/i, ["n'oublie"]),
      cue(/(?<![^\n])[^\S\n]*[-*] \[[ xX]\]/, ['['], { cased: true, lineStart: true }),
    ],
  }),
);

type CueType = 'decision' | 'preference' | 'pattern' | 'note';

/**
 * Per type, one pattern of every literal its lowercase-gated cues look for: a chunk holding none (most
 * chunks) skips those cues with one scan instead of one per literal.
 */
const typeGates = once(
  (): Record<CueType, RegExp> =>
    Object.fromEntries(
      Object.entries(cues()).map(([type, list]) => {
        const literals = list.filter((c) => !c.cased && !c.lineStart).flatMap((c) => c.any);
        return [type, new RegExp(literals.map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'))];
      }),
    ) as Record<CueType, RegExp>,
);

/**
 * Characters that case-insensitive matching takes for ASCII letters where lowercasing does not (long s,
 * Kelvin sign): in a text holding one, the gates are not trusted and every pattern runs.
 */
const FOLDS_TO_ASCII = /[\u017f\u212a]/;

/**
 * Whether `c` matches `text` (`lower` its lowercase, or null when gates are not trusted; `gated` false
 * when the type's gate already found none of the lowercase literals).
 */
function cueMatches(c: Cue, text: string, lower: string | null, gated = true): boolean {
  if (lower !== null && !c.lineStart) {
    if (!c.cased && !gated) return false;
    if (!c.any.some((lit) => (c.cased ? text : lower).includes(lit))) return false;
  }
  if (!c.lineStart) return c.re.test(text);
  for (let at = 0; ; ) {
    c.re.lastIndex = at;
    if (c.re.test(text)) return true;
    const nl = text.indexOf('\n', at);
    if (nl < 0) return false;
    at = nl + 1;
  }
}

/** Whether every cue whose pattern matches `text` also passes its gate (what makes the gates exact; tests). */
export function cueGatesHold(text: string): boolean {
  const lower = text.toLowerCase();
  for (const list of [...Object.values(cues()), factShapes()]) {
    for (const c of list) if (cueMatches(c, text, null) && !cueMatches(c, text, lower)) return false;
  }
  for (const [type, gate] of Object.entries(typeGates())) {
    const passes = cues()[type as CueType].some((c) => !c.cased && !c.lineStart && cueMatches(c, text, null));
    if (passes && !gate.test(lower)) return false;
  }
  return true;
}

/** Text length that one matching cue can speak for. */
const CHARS_PER_CUE = 2000;

/** Priority when scores tie. */
const ORDER = ['decision', 'preference', 'pattern', 'note'] as const;

/** Statement shapes that read as facts: "X is Y", definitions, dated or numbered claims. */
const DIGITS = '0123456789'.split('');
const factShapes = once((): Cue[] => [
  cue(/\b(?:is|are|was|were) (?:a|an|the|located|born|founded|made|called|known|defined)\b/i, [
    'is ',
    'are ',
    'was ',
    'were ',
  ]),
  cue(
    /\b(?:est|sont|était|étaient) (?:un|une|le|la|les|situé|située|né|née|fondé|fondée|appelé|appelée|défini)\b/i,
    ['est ', 'sont ', 'était ', 'étaient '],
  ),
  cue(/\bthe (?:capital|population|height|length|size|name|author|founder) of\b/i, ['the ']),
  cue(/\b(?:la capitale|la population|l'auteur|le fondateur) de\b/i, [
    'la capitale',
    'la population',
    "l'auteur",
    'le fondateur',
  ]),
  cue(/\b(?:means|refers to|consists of|stands for|désigne|signifie)\b/i, [
    'means',
    'refers to',
    'consists of',
    'stands for',
    'désigne',
    'signifie',
  ]),
  cue(/\b(?:1[0-9]{3}|20[0-9]{2})\b/, ['1', '2'], { cased: true }),
  cue(/\b\d+(?:[.,]\d+)?\s?(?:%|km|kg|m|cm|mb|gb|ms|s|years?|ans|mètres|people|habitants)\b/i, DIGITS),
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
  const lower = FOLDS_TO_ASCII.test(text) ? null : text.toLowerCase();
  for (const type of ORDER) {
    let score = 0;
    const gated = lower === null || typeGates()[type].test(lower);
    for (const c of cues()[type]) if (cueMatches(c, text, lower, gated)) score++;
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
  if (lines.length === 1) return CODE_LINE.test(lines[0]!) && density > 0.08;
  // Lines are tested until the share of code lines is known to reach 0.4 or known not to.
  const n = lines.length;
  let codeLines = 0;
  for (let i = 0; i < n; i++) {
    if (CODE_LINE.test(lines[i]!)) codeLines++;
    if (codeLines / n >= 0.4) return true;
    if ((codeLines + n - i - 1) / n < 0.4) return false;
  }
  return false;
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
  const lower = FOLDS_TO_ASCII.test(t) ? null : t.toLowerCase();
  return factShapes().some((c) => cueMatches(c, t, lower));
}
