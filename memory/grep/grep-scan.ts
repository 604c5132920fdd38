/**
 * The scanning core of grep, shared by the in-process literal path and the regex worker. Pure functions
 * over strings, no I/O, so it runs the same on either side of the worker boundary.
 *
 * A document is scanned as one text: its chunks are read back to back (an overlap between chunks read
 * once), so a match that crosses a chunk edge is found, `before`/`after` reach into the neighbouring
 * chunks, and a count counts each occurrence once. Each match is then reported in the chunk it starts in.
 * The parts of a file stored in parts are scanned one after the other as the file's one text (seams.ts).
 *
 * The scan is bounded by CPU time that grows with the text scanned ({@link ScanClock}): a simple pattern
 * always finishes, however large the text and however loaded the machine, while a pathological one is
 * stopped. A single catastrophic `exec` can only be stopped from outside (the worker is terminated).
 */
import type { GrepCounts, GrepDocumentCount, GrepMatch } from '../types.ts';
import { assemble, type GrepChunk, shapeMatch } from './assemble.ts';
import { afterCarry, carryFrom, type GrepCarry, holdFrom } from './seams.ts';

export { assemble, type GrepChunk, MAX_LINE_CHARS } from './assemble.ts';
export type { GrepCarry } from './seams.ts';

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

/** Counters a scan carries from one document to the next. */
export interface ScanState {
  /** Matches reported so far. */
  found: number;
  /** Finds so far, to space out the clock checks. */
  steps: number;
  /** Per-document counts, in scan order (count mode). */
  counts: GrepDocumentCount[];
  /** What the scan of each part left to the next part of its file, by the part's id (seams.ts). */
  carries: Map<string, GrepCarry>;
}

/** A fresh scan state; `carries` when parts scanned by an earlier state (a store's other segment or page) go on here. */
export function scanState(carries: Map<string, GrepCarry> = new Map()): ScanState {
  return { found: 0, steps: 0, counts: [], carries };
}

/** Finds between two looks at the clock: cheap enough, and often enough for the bound. */
const CHECK_EVERY = 63;

/**
 * Scans one document (its chunks, in order). In list mode it reports at most one match per line (the
 * first), like grep, and returns `truncated` when a match beyond `spec.limit` exists; in count mode it
 * counts every occurrence and every matching line into `state.counts`. Returns `timedOut` once the
 * clock's budget is spent, else null.
 *
 * A part of a file (its first chunk names a `prevPart` or `nextPart`) goes on from the carry its previous
 * part left in `state.carries`, and leaves one for its next part when that one is scanned too: matches
 * and counts then name the file, at its offsets (seams.ts). A part whose previous part left no carry
 * (it was not searched) is scanned alone, as readDocument reads it by its own id.
 */
export function scanDocument(
  chunks: readonly GrepChunk[],
  find: Finder,
  spec: ScanSpec,
  state: ScanState,
  onMatch: (m: GrepMatch) => void,
): 'truncated' | 'timedOut' | null {
  const head = chunks[0];
  const carry = head?.prevPart === undefined ? undefined : state.carries.get(head.prevPart);
  if (carry !== undefined) state.carries.delete(head!.prevPart!);
  const own = assemble(chunks, carry?.text);
  const start = carry ? afterCarry(carry, own) : { doc: own, from: 0, lineEnd: -1 };
  const { doc } = start;
  const text = doc.text;
  spec.clock.add(text.length);
  // The next part goes on from this one only when it is scanned too, and this one is not read alone.
  const next = head?.nextPart;
  const continued =
    next !== undefined &&
    (spec.documents === null || spec.documents.has(next)) &&
    (head?.prevPart === undefined || carry !== undefined);
  /** Matches from here on are left to the next part's scan, which sees past the seam. */
  const hold = continued ? holdFrom(text) : Number.POSITIVE_INFINITY;
  const tally: GrepDocumentCount | null = spec.count
    ? (carry?.tally ?? { id: doc.document ?? head?.id ?? '', matches: 0, lines: 0 })
    : null;
  let lineEnd = start.lineEnd;
  let from = start.from;
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
    if (hit === null || hit.start >= hold) break;
    // An empty match after a final newline (`^`, `$`) is not on a line of its own either.
    if (hit.start === text.length && text.charCodeAt(hit.start - 1) === 10) break;
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
    let nextLine = text.indexOf('\n', hit.start);
    nextLine = nextLine === -1 ? text.length + 1 : nextLine + 1;
    // A match spanning lines resumes after its end; an empty match must still move forward.
    from = Math.max(nextLine, hit.end, hit.start + 1);
  }
  if (stop === null && spec.clock.over()) stop = 'timedOut';
  if (continued && stop === null && head?.document !== undefined)
    state.carries.set(head.document, carryFrom(doc, hold, { from, lineEnd, tally, context: spec.context }));
  else if (tally !== null && tally.matches > 0) state.counts.push(tally);
  return stop;
}

/** Splits chunks into runs of one document each (a chunk without a document is a run of its own). */
export function* documentRuns(chunks: readonly GrepChunk[]): Generator<GrepChunk[]> {
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
