/**
 * Pieces shared by the chunkers: options, whitespace and line helpers, and the size-window packer that
 * every chunker falls back to for text with no better place to cut.
 *
 * Offsets are UTF-16 code units. A draft's token count is summed from the tokenizer's pieces, which is
 * exact as long as cuts fall on piece boundaries. Two kinds of position always are: any cut the packer
 * picks (it only cuts between pieces), and the start of a line whose whitespace run holds no further
 * line break ({@link isCleanLineStart}). Chunkers only cut at those, so counts add up exactly.
 */

import { grown } from '../../grown.ts';
import type { ChunkDraft } from '../../types.ts';
import { TokenScanner } from '../tokens.ts';

/** Options understood by {@link chunkText}; each chunker reads the ones that concern it. */
export interface ChunkOptions {
  /** size: window size in tokens (default 2000); markdown: section size above which it is split; turn: exchange size above which it is split. */
  chunkTokens?: number;
  /** size: tokens shared by consecutive windows (default 200). */
  overlapTokens?: number;
  /** paragraph: smallest chunk worth keeping alone (default 100). */
  minTokens?: number;
  /** paragraph and markdown splits: largest chunk (default 800); lines: token budget per group (default 800). */
  maxTokens?: number;
  /** Path of the document, for decisions that depend on the file type. */
  path?: string;
  /** Receives problems that did not stop chunking (e.g. invalid JSONL lines skipped). */
  onNote?: (note: string) => void;
}

/** Option values with defaults applied and checked. */
export interface ChunkerSettings {
  chunkTokens: number;
  overlapTokens: number;
  minTokens: number;
  maxTokens: number;
  path?: string;
  onNote: (note: string) => void;
}

/** Extra fields copied onto every draft a helper emits. */
export type DraftExtra = Pick<ChunkDraft, 'section' | 'tags' | 'time'>;

/** True for the code units of Unicode White_Space (the tokenizer's notion of whitespace). */
function isWs(c: number): boolean {
  return (
    (c <= 0x20 && (c === 0x20 || (c >= 0x09 && c <= 0x0d))) ||
    (c >= 0x85 &&
      (c === 0x85 ||
        c === 0xa0 ||
        c === 0x1680 ||
        (c >= 0x2000 && c <= 0x200a) ||
        c === 0x2028 ||
        c === 0x2029 ||
        c === 0x202f ||
        c === 0x205f ||
        c === 0x3000))
  );
}

/** True when `text[start, end)` holds only whitespace. Stops at the first other character. */
export function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (!isWs(text.charCodeAt(i))) return false;
  return true;
}

/**
 * True when `pos` is a cut that never splits a tokenizer piece: the start of the text, or a position
 * right after a line break whose following whitespace contains no other line break.
 */
export function isCleanLineStart(text: string, pos: number): boolean {
  if (pos === 0) return true;
  const prev = text.charCodeAt(pos - 1);
  if (prev !== 10 && prev !== 13) return false;
  for (let i = pos; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return false;
    if (!isWs(c)) return true;
  }
  return true;
}

/**
 * Calls `fn(start, end)` for each line of `text[from, to)`; `end` excludes the `\n`. The last line may
 * be empty when the range ends with a line break.
 */
export function forEachLine(
  text: string,
  from: number,
  to: number,
  fn: (start: number, end: number) => void,
): void {
  let pos = from;
  while (pos < to) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1 || nl >= to) nl = to;
    fn(pos, nl);
    pos = nl + 1;
  }
}

const SENTENCE_END = new Set(['.', '!', '?', '…', '。', '！', '？']);
const CLOSERS = new Set(['"', "'", ')', ']', '»', '”', '’', '*', '_']);

/** How good a cut at `pos` is: 3 after a blank line, 2 after a sentence end, 1 after a line break, else 0. */
function cutScore(text: string, pos: number, to: number): number {
  const prev = text.charCodeAt(pos - 1);
  if (prev === 10 || prev === 13) {
    // Walk back over the whitespace before this break: another break means a blank line.
    const stop = Math.max(0, pos - 64);
    for (let i = pos - 2; i >= stop; i--) {
      const c = text.charCodeAt(i);
      if (c === 10) return 3;
      if (!isWs(c)) return endsSentenceAt(text, i + 1) ? 2 : 1;
    }
    return 1;
  }
  if (pos < to && !isWs(text.charCodeAt(pos))) return 0;
  return endsSentenceAt(text, pos) ? 2 : 0;
}

/** True when the characters just before `pos` end a sentence (terminal mark, maybe one closing quote). */
function endsSentenceAt(text: string, pos: number): boolean {
  const last = text[pos - 1] ?? '';
  if (SENTENCE_END.has(last)) return true;
  return CLOSERS.has(last) && SENTENCE_END.has(text[pos - 2] ?? '');
}

/** How the packer cuts a range that is too big. */
export interface PackOptions {
  /** Tokens per window (a single piece bigger than this still makes a window alone). */
  maxTokens: number;
  /** Tokens repeated at the start of the next window. */
  overlapTokens: number;
  /** Fraction of the window after which a better cut (blank line, sentence end, line break) is looked for. */
  searchFrom: number;
}

/**
 * Cuts `text[from, to)` into windows of at most `maxTokens` tokens at piece boundaries, preferring the
 * best-scoring cut ({@link cutScore}) in the last part of each window, and emits them in order. Linear
 * in the range length (plus the overlap that is scanned twice).
 */
export function packRange(
  text: string,
  from: number,
  to: number,
  opts: PackOptions,
  emit: (start: number, end: number, tokens: number) => void,
): void {
  const scanner = new TokenScanner(text, from, to);
  // A window holds at most maxTokens + 1 pieces (each piece has at least one token).
  let ends = new Int32Array(Math.min(opts.maxTokens + 2, 1 << 16));
  let cum = new Int32Array(ends.length);
  let start = from;
  while (start < to) {
    scanner.seek(start);
    let n = 0;
    let total = 0;
    let full = false;
    while (scanner.next()) {
      if (n > 0 && total + scanner.tokens > opts.maxTokens) {
        full = true;
        break;
      }
      if (n === ends.length) {
        ends = grown(ends, n + 1);
        cum = grown(cum, n + 1);
      }
      total += scanner.tokens;
      ends[n] = scanner.end;
      cum[n] = total;
      n++;
    }
    if (!full) {
      if (n > 0) emit(start, ends[n - 1]!, total);
      return;
    }
    let cut = n - 1;
    let best = 0;
    const floor = total * opts.searchFrom;
    for (let i = n - 1; i >= 0 && cum[i]! >= floor; i--) {
      const score = cutScore(text, ends[i]!, to);
      if (score > best) {
        best = score;
        cut = i;
        if (score === 3) break;
      }
    }
    emit(start, ends[cut]!, cum[cut]!);
    let next = ends[cut]!;
    if (opts.overlapTokens > 0) {
      // Earliest boundary whose distance to the cut fits in the overlap; always after `start`.
      for (let j = 0; j < cut; j++) {
        if (cum[cut]! - cum[j]! <= opts.overlapTokens) {
          next = ends[j]!;
          break;
        }
      }
    }
    start = next;
  }
}

/** Builds a draft for `text[start, end)`. */
export function draft(
  text: string,
  start: number,
  end: number,
  tokens: number,
  extra: DraftExtra = {},
): ChunkDraft {
  const d: ChunkDraft = { text: text.slice(start, end), start, end, tokens };
  if (extra.section !== undefined) d.section = extra.section;
  if (extra.tags !== undefined && extra.tags.length > 0) d.tags = [...extra.tags];
  if (extra.time !== undefined) d.time = extra.time;
  return d;
}

/** Lowercase slug for tags: letters and digits kept (accents dropped), everything else becomes '-'. */
export function slugify(s: string, max = 60): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+/, '')
    .slice(0, max)
    .replace(/-+$/, '');
}
