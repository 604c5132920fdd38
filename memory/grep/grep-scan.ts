/**
 * The scanning core of grep, shared by the in-process literal path and the regex worker: finds matches
 * chunk by chunk, one per line, and shapes each into a {@link GrepMatch}. Pure functions over strings,
 * no I/O, so it runs the same on either side of the worker boundary.
 */
import type { GrepMatch } from '../types.ts';

/** One searchable piece of the corpus. */
export interface GrepChunk {
  id: string;
  text: string;
  /**
   * Document id, used by the `document` filter. Chunks without one are never filtered out: a caller
   * that does not label its chunks has already chosen what to search.
   */
  document?: string;
}

/** Longest `text` reported for one match; longer lines are cut to a window around the match. */
export const MAX_LINE_CHARS = 500;
/** Characters of the window kept before the match when a line is cut. */
const LEAD_CHARS = 200;
const ELLIPSIS = '…';

/** Finds the first match at or after `from`: `[start, end)` or null. */
export type Finder = (text: string, from: number) => { start: number; end: number } | null;

/** Settings of one scan, already validated. */
export interface ScanSpec {
  limit: number;
  context: number;
  /** Allowed document ids, or null for all. */
  documents: ReadonlySet<string> | null;
  /** `performance.now()` value after which the scan stops and reports `timedOut`. */
  deadline: number;
}

/** How a scan ended. */
export interface ScanOutcome {
  truncated: boolean;
  timedOut: boolean;
  /** Chunks fully searched. */
  chunksSearched: number;
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

/** Builds the reported match for a hit at `start` in `text`. */
function shapeMatch(id: string, text: string, start: number, context: number): GrepMatch {
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
  return {
    id,
    offset: start,
    text: line,
    before: context > 0 ? text.slice(Math.max(0, from - context), from) : '',
    after: context > 0 ? text.slice(to, to + context) : '',
  };
}

/** Counters a scan carries from one chunk to the next. */
export interface ScanState {
  /** Matches reported so far. */
  found: number;
  /** Finds so far, to space out the deadline checks. */
  steps: number;
}

/**
 * Scans one chunk, reporting at most one match per line (the first), like grep, and counting them in
 * `state`. Returns `truncated` when a match beyond `spec.limit` exists, `timedOut` past the deadline,
 * else null. Checks the deadline between finds, so a slow-but-linear search stops cleanly; a single
 * catastrophic `exec` can only be stopped from outside (the worker is terminated).
 */
export function scanChunk(
  chunk: GrepChunk,
  find: Finder,
  spec: ScanSpec,
  state: ScanState,
  onMatch: (m: GrepMatch) => void,
): 'truncated' | 'timedOut' | null {
  const text = chunk.text;
  let from = 0;
  // Like grep, a position at the very end (after a final newline) is not a line of its own.
  while (from < text.length) {
    // performance.now() is cheap but not free; every 64 finds is plenty for a 2 s bound.
    if ((++state.steps & 63) === 0 && performance.now() > spec.deadline) return 'timedOut';
    const hit = find(text, from);
    if (hit === null) break;
    if (state.found === spec.limit) return 'truncated';
    onMatch(shapeMatch(chunk.id, text, hit.start, spec.context));
    state.found++;
    let next = text.indexOf('\n', hit.start);
    next = next === -1 ? text.length + 1 : next + 1;
    // A match spanning lines resumes after its end; an empty match must still move forward.
    from = Math.max(next, hit.end, hit.start + 1);
  }
  return null;
}

/**
 * Scans `chunks` in order (see {@link scanChunk}), calling `onMatch` for each of the first `limit`
 * matches, then looking for one more only to set `truncated`.
 */
export function scanChunks(
  chunks: readonly GrepChunk[],
  find: Finder,
  spec: ScanSpec,
  onMatch: (m: GrepMatch) => void,
): ScanOutcome {
  const state: ScanState = { found: 0, steps: 0 };
  let chunksSearched = 0;
  for (const chunk of chunks) {
    if (spec.documents !== null && chunk.document !== undefined && !spec.documents.has(chunk.document)) {
      chunksSearched++;
      continue;
    }
    const stop = scanChunk(chunk, find, spec, state, onMatch);
    if (stop !== null)
      return { truncated: stop === 'truncated', timedOut: stop === 'timedOut', chunksSearched };
    chunksSearched++;
    if (performance.now() > spec.deadline) {
      const more = chunksSearched < chunks.length;
      return { truncated: false, timedOut: more, chunksSearched };
    }
  }
  return { truncated: false, timedOut: false, chunksSearched };
}
