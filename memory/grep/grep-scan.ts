/**
 * The scanning core of grep, shared by the in-process literal path and the regex worker. Pure functions
 * over strings, no I/O, so it runs the same on either side of the worker boundary.
 *
 * A document is scanned as one text: its chunks are read back to back (an overlap between chunks read
 * once), so a match that crosses a chunk edge is found, `before`/`after` reach into the neighbouring
 * chunks, and a count counts each occurrence once. Each match is then reported in the chunk it starts in.
 *
 * The scan is bounded by CPU time that grows with the text scanned ({@link ScanClock}): a simple pattern
 * always finishes, however large the text and however loaded the machine, while a pathological one is
 * stopped. A single catastrophic `exec` can only be stopped from outside (the worker is terminated).
 */
import { ownString } from '../own-string.ts';
import type { GrepCounts, GrepDocumentCount, GrepMatch } from '../types.ts';

/** One searchable piece of the corpus. */
export interface GrepChunk {
  id: string;
  text: string;
  /**
   * Document id: consecutive chunks of one document are scanned as one text, and the `document` filter
   * uses it. Chunks without one are scanned alone and never filtered out (the caller chose them).
   */
  document?: string;
  /**
   * UTF-16 offsets of the chunk in its document, when known. Chunks that overlap are then read once, a
   * chunk whose text is not the document's slice (a rendered transcript) is set on a line of its own,
   * and matches get a `documentOffset`. Without offsets, a document's chunks are taken to follow each
   * other exactly, the first at offset 0 (what every chunker but `size` and `turn` produces).
   */
  start?: number;
  end?: number;
}

/** Longest `text` reported for one match; longer lines are cut to a window around the match. */
export const MAX_LINE_CHARS = 500;
/** Characters of the window kept before the match when a line is cut. */
const LEAD_CHARS = 200;
const ELLIPSIS = '…';

/** Default CPU budget of a grep before any text is counted, ms. */
export const GREP_BASE_MS = 2000;
/**
 * CPU time a grep may spend per million characters scanned, on top of the base: 50 ms is 20 MB/s, ten
 * times slower than a simple pattern runs (the repository's grep benchmark), so only a pathological pattern runs out.
 */
export const GREP_MS_PER_MILLION_CHARS = 50;

/** CPU milliseconds used by the calling thread (wall time where the platform cannot say). */
function threadCpuMs(): number {
  if (typeof process.threadCpuUsage === 'function') {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  }
  return performance.now();
}

/** Wall time between two reads of the thread's CPU clock once the wall clock has passed the budget. */
const CPU_CHECK_MS = 20;

/**
 * The budget of one scan: `baseMs` of CPU plus {@link GREP_MS_PER_MILLION_CHARS} for every million
 * characters scanned so far. CPU time, not wall time: on a machine busy with other work a scan takes
 * longer but spends the same CPU, so load never cuts a scan short. Reading the thread's CPU clock is a
 * system call (microseconds), so it is read only once the wall clock, which CPU time never exceeds, has
 * passed the budget.
 */
export class ScanClock {
  readonly baseMs: number;
  private readonly cpu: () => number;
  private readonly wall: () => number;
  private readonly cpuStarted: number;
  private readonly wallStarted: number;
  private credited = 0;
  private nextCpuCheck = 0;
  /** Characters handed to the scan so far. */
  chars = 0;
  /** Set once the budget is spent. */
  spent = false;

  constructor(baseMs: number, clocks: { cpu?: () => number; wall?: () => number } = {}) {
    this.baseMs = baseMs;
    this.cpu = clocks.cpu ?? threadCpuMs;
    this.wall = clocks.wall ?? (() => performance.now());
    this.cpuStarted = this.cpu();
    this.wallStarted = this.wall();
  }

  /** Counts `n` more characters as scanned (the allowance grows with them). */
  add(n: number): void {
    this.chars += n;
  }

  /** True once the CPU used exceeds the base plus the allowance for the characters scanned. */
  over(): boolean {
    if (this.spent) return true;
    const allowed = this.baseMs + (this.chars / 1_000_000) * GREP_MS_PER_MILLION_CHARS + this.credited;
    const wall = this.wall();
    if (wall - this.wallStarted <= allowed || wall < this.nextCpuCheck) return false;
    this.nextCpuCheck = wall + CPU_CHECK_MS;
    this.spent = this.cpu() - this.cpuStarted > allowed;
    return this.spent;
  }

  /** CPU milliseconds used so far, less what was {@link ScanClock.credit}ed. */
  usedMs(): number {
    return this.cpu() - this.cpuStarted - this.credited;
  }

  /** Gives back `ms` of CPU spent on something that is not scanning (reading a file). */
  credit(ms: number): void {
    this.credited += ms;
  }
}

/** Finds the first match at or after `from`: `[start, end)` or null. */
export type Finder = (text: string, from: number) => { start: number; end: number } | null;

/** Settings of one scan, already validated. */
export interface ScanSpec {
  limit: number;
  context: number;
  /** Allowed document ids, or null for all. */
  documents: ReadonlySet<string> | null;
  /** Count every occurrence (and matching lines) per document instead of listing matches. */
  count: boolean;
  clock: ScanClock;
  /** Called now and then while a long scan runs (the worker tells the host it is alive). */
  onProgress?: () => void;
}

/** How a scan ended. */
export interface ScanOutcome {
  truncated: boolean;
  timedOut: boolean;
}

/** A finder for a literal needle via `indexOf`. */
export function literalFinder(needle: string): Finder {
  return (text, from) => {
    const start = text.indexOf(needle, from);
    return start === -1 ? null : { start, end: start + needle.length };
  };
}

/** A finder for a global regex; the regex is reused, so a finder must not be shared between scans running at once. */
export function regexFinder(re: RegExp): Finder {
  return (text, from) => {
    re.lastIndex = from;
    const m = re.exec(text);
    return m === null ? null : { start: m.index, end: m.index + m[0].length };
  };
}

/** Escapes a literal for use inside a RegExp source. */
export function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Where a chunk's text lands in a document's assembled text. */
interface Piece {
  /** Position in the assembled text. */
  at: number;
  chunk: GrepChunk;
  /** Offset in the chunk's text where the piece starts (past an overlap with the previous chunk). */
  from: number;
  /** Document offset of `at`, or -1 when the chunk's text is not a slice of the document. */
  doc: number;
}

/** A document's chunks read back to back. */
export interface DocText {
  text: string;
  pieces: Piece[];
}

const exactOffsets = (c: GrepChunk): boolean =>
  c.start !== undefined && c.end !== undefined && c.end - c.start === c.text.length;

/** Reads a document's chunks (in order) as one text; see {@link GrepChunk} for how offsets are used. */
export function assemble(chunks: readonly GrepChunk[]): DocText {
  const first = chunks[0];
  if (chunks.length === 1 && first !== undefined) {
    const doc = first.start === undefined ? 0 : exactOffsets(first) ? first.start : -1;
    return { text: first.text, pieces: [{ at: 0, chunk: first, from: 0, doc }] };
  }
  const parts: string[] = [];
  const pieces: Piece[] = [];
  let length = 0;
  let lastChar = 10;
  /** Document offset the text so far reaches, or -1 when unknown. */
  let covered = 0;
  for (const c of chunks) {
    let from = 0;
    let doc: number;
    if (c.start === undefined) {
      doc = covered;
    } else if (exactOffsets(c)) {
      if (covered >= 0 && c.start < covered) {
        from = covered - c.start;
        if (from >= c.text.length) continue;
      } else if (covered >= 0 && c.start > covered && lastChar !== 10) {
        // A gap the chunker left out: keep the two sides on separate lines.
        parts.push('\n');
        length++;
      }
      doc = c.start + from;
    } else {
      if (length > 0 && lastChar !== 10) {
        parts.push('\n');
        length++;
      }
      doc = -1;
    }
    const piece = from > 0 ? c.text.slice(from) : c.text;
    if (piece.length === 0) continue;
    pieces.push({ at: length, chunk: c, from, doc });
    parts.push(piece);
    length += piece.length;
    lastChar = piece.charCodeAt(piece.length - 1);
    covered = doc < 0 ? -1 : doc + piece.length;
  }
  return { text: parts.join(''), pieces };
}

/** The piece a position of the assembled text belongs to; a position on an inserted newline goes to the next piece. */
function locate(doc: DocText, pos: number): { piece: Piece; offset: number; documentOffset: number } {
  const { pieces } = doc;
  let lo = 0;
  let hi = pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((pieces[mid] as Piece).at <= pos) lo = mid;
    else hi = mid - 1;
  }
  let piece = pieces[lo] as Piece;
  let inside = pos - piece.at;
  const next = pieces[lo + 1];
  if (next !== undefined && inside >= piece.chunk.text.length - piece.from) {
    piece = next;
    inside = 0;
  }
  return {
    piece,
    offset: piece.from + inside,
    documentOffset: piece.doc < 0 ? -1 : piece.doc + inside,
  };
}

/** Builds the reported match for a hit at `start` of the assembled text. */
function shapeMatch(doc: DocText, start: number, context: number): GrepMatch {
  const text = doc.text;
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  let lineEnd = text.indexOf('\n', start);
  if (lineEnd === -1) lineEnd = text.length;
  if (lineEnd > lineStart && text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
  let from = lineStart;
  let to = lineEnd;
  if (to - from > MAX_LINE_CHARS) {
    from = Math.max(lineStart, start - LEAD_CHARS);
    to = Math.min(lineEnd, from + MAX_LINE_CHARS);
    // Near the line's end the window would shrink; slide it back so it stays full-width.
    if (to - from < MAX_LINE_CHARS) from = Math.max(lineStart, to - MAX_LINE_CHARS);
  }
  const line = `${from > lineStart ? ELLIPSIS : ''}${text.slice(from, to)}${to < lineEnd ? ELLIPSIS : ''}`;
  const at = locate(doc, start);
  // Copies, not views: a match is kept until the scan ends (merged in rank order), and a slice would
  // keep its whole document alive with it. A 100 MB grep held every document it matched in.
  const match: GrepMatch = {
    id: at.piece.chunk.id,
    offset: at.offset,
    text: ownString(line),
    before: context > 0 ? ownString(text.slice(Math.max(0, from - context), from)) : '',
    after: context > 0 ? ownString(text.slice(to, to + context)) : '',
  };
  const document = at.piece.chunk.document;
  if (document !== undefined) match.document = document;
  if (at.documentOffset >= 0 && document !== undefined) match.documentOffset = at.documentOffset;
  return match;
}

/** Counters a scan carries from one document to the next. */
export interface ScanState {
  /** Matches reported so far. */
  found: number;
  /** Finds so far, to space out the clock checks. */
  steps: number;
  /** Per-document counts, in scan order (count mode). */
  counts: GrepDocumentCount[];
}

/** A fresh scan state. */
export function scanState(): ScanState {
  return { found: 0, steps: 0, counts: [] };
}

/** Finds between two looks at the clock: cheap enough, and often enough for the bound. */
const CHECK_EVERY = 63;

/**
 * Scans one document (its chunks, in order). In list mode it reports at most one match per line (the
 * first), like grep, and returns `truncated` when a match beyond `spec.limit` exists; in count mode it
 * counts every occurrence and every matching line into `state.counts`. Returns `timedOut` once the
 * clock's budget is spent, else null.
 */
export function scanDocument(
  chunks: readonly GrepChunk[],
  find: Finder,
  spec: ScanSpec,
  state: ScanState,
  onMatch: (m: GrepMatch) => void,
): 'truncated' | 'timedOut' | null {
  const doc = assemble(chunks);
  const text = doc.text;
  spec.clock.add(text.length);
  const tally: GrepDocumentCount | null = spec.count
    ? { id: chunks[0]?.document ?? chunks[0]?.id ?? '', matches: 0, lines: 0 }
    : null;
  let lineEnd = -1;
  let from = 0;
  let stop: 'truncated' | 'timedOut' | null = null;
  // Like grep, a position at the very end (after a final newline) is not a line of its own.
  while (from < text.length) {
    if ((++state.steps & CHECK_EVERY) === 0) {
      if (spec.clock.over()) {
        stop = 'timedOut';
        break;
      }
      spec.onProgress?.();
    }
    const hit = find(text, from);
    // An empty match after a final newline (`^`, `$`) is not on a line of its own either.
    if (hit === null || (hit.start === text.length && text.charCodeAt(hit.start - 1) === 10)) break;
    if (tally !== null) {
      tally.matches++;
      if (hit.start > lineEnd) {
        tally.lines++;
        lineEnd = text.indexOf('\n', hit.start);
        if (lineEnd === -1) lineEnd = text.length;
      }
      // Every occurrence counts; an empty match must still move forward.
      from = Math.max(hit.end, hit.start + 1);
      continue;
    }
    if (state.found === spec.limit) {
      stop = 'truncated';
      break;
    }
    onMatch(shapeMatch(doc, hit.start, spec.context));
    state.found++;
    let next = text.indexOf('\n', hit.start);
    next = next === -1 ? text.length + 1 : next + 1;
    // A match spanning lines resumes after its end; an empty match must still move forward.
    from = Math.max(next, hit.end, hit.start + 1);
  }
  if (tally !== null && tally.matches > 0) state.counts.push(tally);
  if (stop === null && spec.clock.over()) stop = 'timedOut';
  return stop;
}

/** Splits chunks into runs of one document each (a chunk without a document is a run of its own). */
function* documentRuns(chunks: readonly GrepChunk[]): Generator<GrepChunk[]> {
  let run: GrepChunk[] = [];
  for (const c of chunks) {
    const prev = run[run.length - 1];
    if (prev !== undefined && (c.document === undefined || c.document !== prev.document)) {
      yield run;
      run = [];
    }
    run.push(c);
  }
  if (run.length > 0) yield run;
}

/**
 * Scans `chunks` document by document (see {@link scanDocument}), calling `onMatch` for each of the
 * first `limit` matches, then looking for one more only to set `truncated`.
 */
export function scanChunks(
  chunks: readonly GrepChunk[],
  find: Finder,
  spec: ScanSpec,
  state: ScanState,
  onMatch: (m: GrepMatch) => void,
): ScanOutcome {
  for (const run of documentRuns(chunks)) {
    const document = run[0]?.document;
    if (spec.documents !== null && document !== undefined && !spec.documents.has(document)) continue;
    const stop = scanDocument(run, find, spec, state, onMatch);
    if (stop !== null) return { truncated: stop === 'truncated', timedOut: stop === 'timedOut' };
    spec.onProgress?.();
  }
  return { truncated: false, timedOut: false };
}

/** The totals of per-document counts (documents in the order given). */
export function totalCounts(documents: GrepDocumentCount[]): GrepCounts {
  let matches = 0;
  let lines = 0;
  for (const d of documents) {
    matches += d.matches;
    lines += d.lines;
  }
  return { matches, lines, documents };
}
