/**
 * Token counting with the cl100k_base vocabulary, fast enough not to dominate ingest.
 *
 * tiktoken applies BPE to each pre-token ("piece") cut by the encoding's split regex independently, so
 * the count of a text is the sum of the counts of its pieces. We split in JS (a hand-written scanner
 * equivalent to the split regex), memoise the count of every distinct piece and call the WASM encoder
 * only for pieces not seen before. Natural text repeats its pieces constantly, so almost every lookup
 * is a cache hit.
 *
 * Pieces longer than {@link MAX_PIECE_CHARS} (long runs without spaces: base64, minified code, 'aaaa…')
 * are counted in slices of that length. BPE is quadratic in the piece length, so this keeps pathological
 * input linear; the price is that counts for such pieces are approximate (usually within a token or two
 * per slice). Every other piece is counted exactly as tiktoken would.
 */

import { createRequire } from 'node:module';
import type { Tiktoken } from 'tiktoken';
import { fnv1a } from '../fnv.ts';
import { ownString } from '../own-string.ts';

/** Name of the encoding every token figure in rlm refers to. */
export const TOKENIZER = 'cl100k_base';

/** Longest piece handed to the encoder in one go; longer pieces are counted slice by slice. */
export const MAX_PIECE_CHARS = 256;

/**
 * Distinct pieces remembered before the memo is emptied and refilled: half its largest table (2^18 slots,
 * 8 MiB), so a full memo never doubles into a 16 MiB table only to be emptied soon after.
 */
const CACHE_LIMIT = 1 << 17;

// Rust's `\s` (used by tiktoken) is Unicode White_Space; JS `\s` differs on U+0085 and U+FEFF, so spell it out.
const WS = '\\t-\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';

/**
 * cl100k_base's split regex (`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 * ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`) with `\s` spelled as White_Space. It is the
 * specification of {@link pieceEnd}, which implements it by hand: V8 runs this regex at only ~15 MB/s on
 * two-byte strings (any text with a curly quote or an emoji), the hand-written scanner at several times that.
 */
export const PIECE_PATTERN = new RegExp(
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}" +
    `| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*|[${WS}]*[\\r\\n]+|[${WS}]+(?![^${WS}])|[${WS}]+`,
  'u',
);

// Character classes of the split regex, one per UTF-16 code unit.
const OTHER = 0;
const LETTER = 1;
const NUMBER = 2;
/** White_Space other than CR and LF. */
const SPACE = 3;
const NEWLINE = 4;
const SURROGATE = 5;

let classes: Uint8Array | undefined;
/** Classes of astral code points met so far (emoji, rare scripts). */
const astralClasses = new Map<number, number>();

function classTable(): Uint8Array {
  if (classes) return classes;
  const t = new Uint8Array(65536);
  const letter = /\p{L}/u;
  const number = /\p{N}/u;
  const space = new RegExp(`[${WS}]`, 'u');
  for (let c = 0; c < 65536; c++) {
    if (c >= 0xd800 && c <= 0xdfff) t[c] = SURROGATE;
    else if (c === 10 || c === 13) t[c] = NEWLINE;
    else {
      const ch = String.fromCharCode(c);
      t[c] = letter.test(ch) ? LETTER : number.test(ch) ? NUMBER : space.test(ch) ? SPACE : OTHER;
    }
  }
  classes = t;
  return t;
}

/**
 * Class and width of the code point at `i` when `text[i]` is a surrogate, packed as `class | width << 3`.
 * A pair cut by `len` or a lone surrogate is one OTHER code unit, as the regex sees it.
 */
function astral(text: string, i: number, len: number): number {
  const hi = text.charCodeAt(i);
  if (hi > 0xdbff || i + 1 >= len) return OTHER | (1 << 3);
  const lo = text.charCodeAt(i + 1);
  if (lo < 0xdc00 || lo > 0xdfff) return OTHER | (1 << 3);
  const cp = ((hi - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
  let k = astralClasses.get(cp);
  if (k === undefined) {
    const ch = String.fromCodePoint(cp);
    k = /\p{L}/u.test(ch) ? LETTER : /\p{N}/u.test(ch) ? NUMBER : OTHER;
    astralClasses.set(cp, k);
  }
  return k | (2 << 3);
}

/** Class and width (packed like {@link astral}) of the code point at `i`. */
function classAt(t: Uint8Array, text: string, i: number, len: number): number {
  const k = t[text.charCodeAt(i)]!;
  return k === SURROGATE ? astral(text, i, len) : k | (1 << 3);
}

/** Code units the piece scanner has stepped over (and pieces it started), and code units handed to the BPE encoder. */
const work = { scanned: 0, encoded: 0 };

/**
 * Work done by the tokenizer so far in this process: code units its piece scanner stepped over and code
 * units it handed to the BPE encoder. Both must grow linearly with the text whatever its shape; tests and
 * benchmarks compare the growth over two sizes of input instead of timing it.
 */
export function tokenizerWork(): { scanned: number; encoded: number } {
  return { ...work };
}

/**
 * The last long run of each class that {@link pieceEnd} walked, for one text read up to one length. A
 * chunker that cuts a window inside a long piece restarts the scan there ({@link TokenScanner.seek}), and
 * a restart inside a run ends where the run ends: without the memo each restart walks the rest of the run
 * again, and one 20 MB token costs time quadratic in its length. Only runs longer than a slice are kept,
 * so short runs never evict a long one.
 */
class RunMemo {
  /** Per class: start and end of the run, or -1. Class SPACE stands for the whitespace run of pieceEnd. */
  readonly from = new Int32Array(6).fill(-1);
  readonly to = new Int32Array(6);
  /** Last line break inside the memoised whitespace run, or -1. */
  lastBreak = -1;
}

/** True when `j` lies inside the memoised run of class `k` and starts a code point there. */
function inMemo(memo: RunMemo, text: string, j: number, k: number): boolean {
  const from = memo.from[k]!;
  if (from < 0 || j < from || j >= memo.to[k]!) return false;
  // The second half of a surrogate pair is no place a walk from `from` stops at.
  return !(j > from && isLow(text.charCodeAt(j)) && isHigh(text.charCodeAt(j - 1)));
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** End of the run of code points of class `k` starting at `j`. */
function runOf(t: Uint8Array, text: string, j: number, len: number, k: number, memo?: RunMemo): number {
  if (memo !== undefined && inMemo(memo, text, j, k)) return memo.to[k]!;
  const start = j;
  while (j < len) {
    const c = t[text.charCodeAt(j)]!;
    if (c === k) j++;
    else if (c === SURROGATE) {
      const p = astral(text, j, len);
      if ((p & 7) !== k) break;
      j += p >> 3;
    } else break;
  }
  work.scanned += j - start;
  if (memo !== undefined && j - start > MAX_PIECE_CHARS) {
    memo.from[k] = start;
    memo.to[k] = j;
  }
  return j;
}

/**
 * End of the piece that starts at `i` in `text[.., len)`: what {@link PIECE_PATTERN} matches there when
 * the text is cut at `len`. Alternatives are tried in the regex's order. A `memo` (always used with the
 * same text and `len`) lets a restart inside a long run skip to its end instead of walking it again.
 */
export function pieceEnd(text: string, i: number, len: number, memo?: RunMemo): number {
  // Each call looks at a few code units besides the runs it walks (counted by runOf and below).
  work.scanned++;
  const t = classTable();
  const c = text.charCodeAt(i);
  // 's 't 're 've 'm 'll 'd, any case (ſ folds to s)
  if (c === 39 && i + 1 < len) {
    const c1 = text.charCodeAt(i + 1);
    const a = c1 | 0x20;
    if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64 || c1 === 0x17f) return i + 2;
    if (i + 2 < len) {
      const b = text.charCodeAt(i + 2) | 0x20;
      if ((b === 0x65 && (a === 0x72 || a === 0x76)) || (a === 0x6c && b === 0x6c)) return i + 3;
    }
  }
  const first = classAt(t, text, i, len);
  const k = first & 7;
  const next = i + (first >> 3);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (k === LETTER) return runOf(t, text, next, len, LETTER, memo);
  if ((k === OTHER || k === SPACE) && next < len && (classAt(t, text, next, len) & 7) === LETTER) {
    return runOf(t, text, next, len, LETTER, memo);
  }
  // \p{N}{1,3}
  if (k === NUMBER) {
    let j = next;
    for (let n = 1; n < 3 && j < len; n++) {
      const p = classAt(t, text, j, len);
      if ((p & 7) !== NUMBER) break;
      j += p >> 3;
    }
    return j;
  }
  // " ?[^\s\p{L}\p{N}]+[\r\n]*"
  let j = -1;
  if (k === OTHER) j = next;
  else if (c === 32 && next < len && (classAt(t, text, next, len) & 7) === OTHER)
    j = next + (classAt(t, text, next, len) >> 3);
  if (j >= 0) return runOf(t, text, runOf(t, text, j, len, OTHER, memo), len, NEWLINE, memo);
  // Whitespace: "\s*[\r\n]+" ends after the run's last line break; else "\s+(?!\S)" leaves the last
  // space to the next piece when a non-space follows; else "\s+" (a single space before a non-space).
  let end = i;
  let lastBreak = -1;
  if (memo !== undefined && inMemo(memo, text, i, SPACE)) {
    end = memo.to[SPACE]!;
    if (memo.lastBreak >= i) lastBreak = memo.lastBreak;
  } else {
    while (end < len) {
      const w = t[text.charCodeAt(end)];
      if (w === NEWLINE) lastBreak = end;
      else if (w !== SPACE) break;
      end++;
    }
    work.scanned += end - i;
    if (memo !== undefined && end - i > MAX_PIECE_CHARS) {
      memo.from[SPACE] = i;
      memo.to[SPACE] = end;
      memo.lastBreak = lastBreak;
    }
  }
  if (lastBreak >= 0) return lastBreak + 1;
  if (end === len || end - i === 1) return end;
  return end - 1;
}

let encoder: Tiktoken | undefined;

/**
 * tiktoken compiles its WebAssembly when loaded (a few hundred ms of a cold start), so it is loaded on
 * the first count: commands that never count tokens (`rlm grep`, `rlm search`) never pay for it.
 */
function loadEncoder(): Tiktoken {
  const { get_encoding } = createRequire(import.meta.url)('tiktoken') as typeof import('tiktoken');
  return get_encoding(TOKENIZER);
}

function encode(piece: string): number {
  encoder ??= loadEncoder();
  work.encoded += piece.length;
  return encoder.encode_ordinary(piece).length;
}

/**
 * Memo of piece → token count: an open-addressing table keyed by a hash computed straight from the
 * text, so a hit costs neither a substring nor V8's string hashing (a Map lookup was most of the cost).
 * Each slot is 8 int32s: hash, length | tokens << 10, then up to {@link INLINE_CHARS} code units of
 * the piece packed two per int, so most hits are verified exactly without leaving the slot's cache
 * line; longer pieces are verified against `longKeys`. The table starts small and doubles at half load.
 */
const STRIDE = 8;
const INLINE_CHARS = 12;
const INITIAL_SLOTS = 1 << 16;
let slots = 0;
let table = new Int32Array(0);
let longKeys: string[] = [];
let cached = 0;

function allocate(n: number): void {
  slots = n;
  table = new Int32Array(n * STRIDE);
  // Filled by push: `new Array(n)` becomes a slow dictionary-mode array at these sizes.
  longKeys = [];
  for (let i = 0; i < n; i++) longKeys.push('');
}

function grow(): void {
  const oldTable = table;
  const oldKeys = longKeys;
  allocate(slots * 2);
  const mask = slots - 1;
  for (let i = 0; i < oldKeys.length; i++) {
    const h = oldTable[i * STRIDE]!;
    if (h === 0) continue;
    let slot = (h ^ (h >>> 16)) & mask;
    while (table[slot * STRIDE] !== 0) slot = (slot + 1) & mask;
    table.set(oldTable.subarray(i * STRIDE, (i + 1) * STRIDE), slot * STRIDE);
    longKeys[slot] = oldKeys[i]!;
  }
}

/** Drops the memo and its table, giving their memory back (benchmarks measuring a cold cache use it). */
export function clearTokenCache(): void {
  slots = 0;
  table = new Int32Array(0);
  longKeys = [];
  cached = 0;
}

/**
 * Empties a full memo but keeps its table: a memo that fills up once fills up again. Dropping the table
 * and growing a new one from 2 MiB each time (every smaller table garbage once the next was made) left
 * the thread's allocator holding memory nothing used: measured, an ingest's peak fell by 15-35 MB when
 * the table stayed (100 MB to 1 GB of input).
 */
function emptyInPlace(): void {
  table.fill(0);
  longKeys.fill('');
  cached = 0;
}

/** True when slot `base` holds exactly `text[start, start + len)`. */
function sameKey(base: number, slot: number, text: string, start: number, len: number): boolean {
  if (len > INLINE_CHARS) return longKeys[slot] === text.slice(start, start + len);
  for (let k = 0; k < len; k += 2) {
    const hi = k + 1 < len ? text.charCodeAt(start + k + 1) << 16 : 0;
    if (table[base + 2 + (k >> 1)] !== (text.charCodeAt(start + k) | hi)) return false;
  }
  return true;
}

/** Token count of `text[start, end)` taken as one piece, through the memo. */
function pieceTokens(text: string, start: number, end: number): number {
  const h = fnv1a(text, start, end) | 1; // 0 marks an empty slot
  if (slots === 0) allocate(INITIAL_SLOTS);
  const len = end - start;
  const mask = slots - 1;
  let slot = (h ^ (h >>> 16)) & mask;
  for (;;) {
    const base = slot * STRIDE;
    const sh = table[base]!;
    if (sh === 0) break;
    const meta = table[base + 1]!;
    if (sh === h && (meta & 0x3ff) === len && sameKey(base, slot, text, start, len)) return meta >>> 10;
    slot = (slot + 1) & mask;
  }
  const n = encode(text.slice(start, end));
  if (cached >= CACHE_LIMIT) {
    emptyInPlace();
    return n;
  }
  const base = slot * STRIDE;
  table[base] = h;
  table[base + 1] = len | (n << 10);
  if (len > INLINE_CHARS) longKeys[slot] = ownString(text.slice(start, end));
  else {
    for (let k = 0; k < len; k += 2) {
      const hi = k + 1 < len ? text.charCodeAt(start + k + 1) << 16 : 0;
      table[base + 2 + (k >> 1)] = text.charCodeAt(start + k) | hi;
    }
  }
  if (++cached * 2 > slots) grow();
  return n;
}

/** End of the slice of a long piece starting at `from`: at most MAX_PIECE_CHARS, never inside a surrogate pair. */
function sliceEnd(text: string, from: number, pieceTo: number): number {
  if (pieceTo - from <= MAX_PIECE_CHARS) return pieceTo;
  let to = from + MAX_PIECE_CHARS;
  const c = text.charCodeAt(to);
  if (c >= 0xdc00 && c <= 0xdfff) to--;
  return to;
}

/**
 * Walks a text piece by piece (a piece is a pre-token of the tokenizer, or a slice of a long one).
 * Allocation-free per step, so chunkers can afford to visit every piece of a 50 MB document.
 *
 * Scanning `[start, end)` gives exactly the pieces of `text.slice(start, end)` (nothing past `end` is
 * looked at), with offsets in the original text (UTF-16 code units).
 */
export class TokenScanner {
  /** Start of the current piece. */
  start: number;
  /** End (exclusive) of the current piece. */
  end: number;
  /** Tokens of the current piece. */
  tokens: number;
  readonly #text: string;
  readonly #limit: number;
  /** End of the regex piece being sliced when it is longer than MAX_PIECE_CHARS. */
  #pieceTo = -1;
  /** Long runs already walked, so restarts inside them ({@link seek}) stay linear in the text. */
  readonly #runs = new RunMemo();

  constructor(text: string, start = 0, end = text.length) {
    this.#text = text;
    this.#limit = end;
    this.start = start;
    this.end = start;
    this.tokens = 0;
  }

  /** Restarts the scan at `pos`, as if the text began there. */
  seek(pos: number): void {
    this.end = pos;
    this.start = pos;
    this.tokens = 0;
    this.#pieceTo = -1;
  }

  /** Advances to the next piece; false at the end of the range. */
  next(): boolean {
    const text = this.#text;
    const from = this.end;
    if (from >= this.#limit) return false;
    if (this.#pieceTo <= from) this.#pieceTo = pieceEnd(text, from, this.#limit, this.#runs);
    const to = sliceEnd(text, from, this.#pieceTo);
    this.start = from;
    this.end = to;
    this.tokens = pieceTokens(text, from, to);
    return true;
  }
}

/** Number of cl100k_base tokens in `text` (exact except inside pieces longer than {@link MAX_PIECE_CHARS}). */
export function countTokens(text: string): number {
  return rangeTokens(text, 0, text.length);
}

/**
 * `countTokens(text.slice(start, end))` without materialising the slice. With `limit`, stops as soon
 * as the count exceeds it and returns that partial count (some value > limit), so deciding "does this
 * fit?" never scans much more than `limit` tokens.
 */
export function rangeTokens(
  text: string,
  start: number,
  end: number,
  limit = Number.POSITIVE_INFINITY,
): number {
  let total = 0;
  let pos = start;
  while (pos < end) {
    const pieceTo = pieceEnd(text, pos, end);
    do {
      const to = sliceEnd(text, pos, pieceTo);
      total += pieceTokens(text, pos, to);
      pos = to;
    } while (pos < pieceTo);
    if (total > limit) break;
  }
  return total;
}

/**
 * Piece boundaries of `text[start, end)` as `[end, tokens]` pairs: every offset yielded is a place a
 * chunk may be cut without changing the token count of either side. Convenience over {@link TokenScanner}.
 */
export function* tokenBoundaries(
  text: string,
  start = 0,
  end = text.length,
): Generator<[end: number, tokens: number], void, undefined> {
  const scanner = new TokenScanner(text, start, end);
  while (scanner.next()) yield [scanner.end, scanner.tokens];
}
