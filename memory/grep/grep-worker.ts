/**
 * Worker thread that runs regex greps for {@link GrepRunner}. It exists so that a catastrophic pattern
 * burns this thread, not the host's: the host terminates it past the deadline. The corpus is sent once
 * per version and kept here, so repeated greps cost only the search.
 *
 * Protocol (host → worker): `load` {version, chunks} → `loaded`; `grep` {...} → zero or more `match`,
 * then `done`. Errors come back as `failed`.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { ChunkRecord, GrepMatch } from '../types.ts';
import {
  type Finder,
  type GrepChunk,
  regexFinder,
  type ScanSpec,
  type ScanState,
  scanChunk,
  scanChunks,
} from './grep-scan.ts';
import { readTextColumn, type TextColumn, type TextDocRun } from './segment-text.ts';

/**
 * One segment to grep and the documents whose live chunks it holds: its files (the text column, else
 * the chunk file, read in the worker) or, for a segment held in memory, those chunks themselves.
 */
export type GrepSegment =
  | {
      segment: string;
      text: string;
      chunks: string;
      /** Where the documents file says each live document's chunks are in the segment. */
      runs: TextDocRun[];
    }
  | { documents: string[]; inline: GrepChunk[] };

/** Host → worker messages. */
export type GrepWorkerRequest =
  | { type: 'load'; version: number; chunks: GrepChunk[] }
  | {
      type: 'grepSegments';
      requestId: number;
      segments: GrepSegment[];
      /** Every document to search, in reporting order (a store's path order). */
      order: string[];
      source: string;
      flags: string;
      limit: number;
      context: number;
      timeoutMs: number;
    }
  | {
      type: 'grep';
      requestId: number;
      version: number;
      source: string;
      flags: string;
      limit: number;
      context: number;
      documents: string[] | null;
      timeoutMs: number;
    };

/** Worker → host messages. */
export type GrepWorkerReply =
  | { type: 'loaded'; version: number }
  | { type: 'segment'; requestId: number; phase: 'reading' | 'scanning' }
  | { type: 'match'; requestId: number; match: GrepMatch }
  | { type: 'done'; requestId: number; truncated: boolean; timedOut: boolean; chunksSearched: number }
  | {
      type: 'failed';
      requestId: number;
      message: string;
      /** The errno code when a file read failed (`ENOENT`: a writer removed the segment meanwhile). */
      code?: string;
    };

let corpus: GrepChunk[] = [];
let corpusVersion = -1;

/** The request's regex, or null after reporting why it does not compile. */
function compile(
  msg: { requestId: number; source: string; flags: string },
  post: (reply: GrepWorkerReply) => void,
): RegExp | null {
  try {
    return new RegExp(msg.source, msg.flags);
  } catch (err) {
    post({ type: 'failed', requestId: msg.requestId, message: (err as Error).message });
    return null;
  }
}

function handle(msg: GrepWorkerRequest, post: (reply: GrepWorkerReply) => void): void {
  if (msg.type === 'grepSegments') {
    grepSegments(msg, post);
    return;
  }
  if (msg.type === 'load') {
    corpus = msg.chunks;
    corpusVersion = msg.version;
    post({ type: 'loaded', version: msg.version });
    return;
  }
  if (msg.version !== corpusVersion) {
    post({
      type: 'failed',
      requestId: msg.requestId,
      message: `corpus version ${msg.version} not loaded (have ${corpusVersion})`,
    });
    return;
  }
  const deadline = performance.now() + msg.timeoutMs;
  const re = compile(msg, post);
  if (!re) return;
  const documents = msg.documents === null ? null : new Set(msg.documents);
  // Matches are posted as found so the host keeps them even if it has to kill this thread mid-search.
  const outcome = scanChunks(
    corpus,
    regexFinder(re),
    { limit: msg.limit, context: msg.context, documents, deadline },
    (match) => post({ type: 'match', requestId: msg.requestId, match }),
  );
  post({ type: 'done', requestId: msg.requestId, ...outcome });
}

/** Holds one segment file at a time, reused from file to file: fresh memory is the costly kind. */
let readBuffer = Buffer.allocUnsafe(0);

/** Reads a whole file into {@link readBuffer}; returns its size. */
function readWhole(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    // With room to spare: segments differ a little in size, and each new buffer is fresh memory.
    if (size > readBuffer.length) readBuffer = Buffer.allocUnsafe(Math.max(size + (size >> 2), 8 << 20));
    let done = 0;
    while (done < size) {
      const n = readSync(fd, readBuffer, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return done;
  } finally {
    closeSync(fd);
  }
}

/** What the scan of a segment needs besides the segment. */
interface SegmentScan {
  find: Finder;
  spec: ScanSpec;
  state: ScanState;
  /** Position of each document in the reporting order. */
  rank: Map<string, number>;
  onMatch: (m: GrepMatch) => void;
  /** Called once the segment's bytes are in hand, before scanning starts (the host's timer runs again). */
  onRead: () => void;
}

/** Chunks of the wanted documents in reporting order: by document rank, then ordinal. */
function inOrder(
  chunks: { id: string; document: string; ordinal: number; text: string }[],
  wanted: Set<string>,
  rank: Map<string, number>,
): GrepChunk[] {
  return chunks
    .filter((c) => wanted.has(c.document))
    .sort((a, b) => (rank.get(a.document) ?? 0) - (rank.get(b.document) ?? 0) || a.ordinal - b.ordinal)
    .map((c) => ({ id: c.id, text: c.text }));
}

/** Scans chunks already in memory and in reporting order. */
function scanHeld(chunks: GrepChunk[], job: SegmentScan): 'truncated' | 'timedOut' | null {
  const outcome = scanChunks(chunks, job.find, job.spec, job.onMatch);
  return outcome.truncated ? 'truncated' : outcome.timedOut ? 'timedOut' : null;
}

/**
 * True when the column places every live document where the documents file does; false for a column an
 * older rlm left beside a chunk file it rewrote, which the chunk file then replaces.
 */
function layoutMatches(column: TextColumn, live: TextDocRun[]): boolean {
  const inColumn = new Map(column.docs.map((run) => [run.id, run]));
  return live.every((run) => {
    const there = inColumn.get(run.id);
    return there?.first === run.first && there.count === run.count;
  });
}

/**
 * Scans the live runs of a text column in reporting order, decoding each chunk from `bytes` just before
 * its scan: the strings stay small and die young, so the worker's small young generation recycles the
 * same memory chunk after chunk (fresh memory is what costs most).
 */
function scanColumn(
  column: TextColumn,
  bytes: Buffer,
  live: TextDocRun[],
  job: SegmentScan,
): 'truncated' | 'timedOut' | null {
  const at = column.at;
  const runs = [...live].sort((a, b) => (job.rank.get(a.id) ?? 0) - (job.rank.get(b.id) ?? 0));
  for (const run of runs) {
    for (let i = 0; i < run.count; i++) {
      if (performance.now() > job.spec.deadline) return 'timedOut';
      const k = run.first + i;
      const text = bytes.toString('utf8', at[k], at[k + 1]);
      const stop = scanChunk({ id: `${run.id}:${i}`, text }, job.find, job.spec, job.state, job.onMatch);
      if (stop !== null) return stop;
    }
  }
  return null;
}

/**
 * Scans the live chunks of one segment. From the text column each chunk is decoded from the file's bytes
 * just before it is scanned and dropped after, so the strings made stay small and short-lived and the
 * worker's memory stays at one file's bytes; the chunk file (stores written before text columns) has
 * to be parsed whole.
 */
function scanSegment(seg: GrepSegment, job: SegmentScan): 'truncated' | 'timedOut' | null {
  if ('inline' in seg) {
    job.onRead();
    const chunks = seg.inline.map((c) => ({
      id: c.id,
      document: c.document ?? '',
      ordinal: Number(c.id.slice(c.id.lastIndexOf(':') + 1)),
      text: c.text,
    }));
    return scanHeld(inOrder(chunks, new Set(seg.documents), job.rank), job);
  }
  let size = -1;
  try {
    size = readWhole(seg.text);
  } catch {
    // a store written before text columns, or one lost: the chunk file holds the same text
  }
  const column = size >= 0 ? readTextColumn(readBuffer, size, seg.segment) : null;
  if (column && layoutMatches(column, seg.runs)) {
    job.onRead();
    return scanColumn(column, readBuffer, seg.runs, job);
  }
  const records = (JSON.parse(readFileSync(seg.chunks, 'utf8')) as { chunks: ChunkRecord[] }).chunks;
  job.onRead();
  return scanHeld(inOrder(records, new Set(seg.runs.map((r) => r.id)), job.rank), job);
}

/** A match with its place in the reporting order. */
interface Ranked {
  match: GrepMatch;
  rank: number;
  ordinal: number;
}

function before(a: Ranked, b: Ranked): boolean {
  return (a.rank - b.rank || a.ordinal - b.ordinal || a.match.offset - b.match.offset) < 0;
}

/** Merges two lists already in reporting order (a segment's matches come in order). */
function merge(a: Ranked[], b: Ranked[]): Ranked[] {
  const out: Ranked[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(before(b[j]!, a[i]!) ? b[j++]! : a[i++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/**
 * Greps a store's segments one at a time: read, scan, drop. Only one segment's bytes are ever held, and
 * nothing crosses the thread boundary but the matches. Matches are reported in `order` (then chunk,
 * then offset), whatever the segments' order; the deadline counts scanning only, not reading, and
 * `segment` messages tell the host when a file is being read (its timer pauses) and scanned (its timer
 * runs again).
 */
function grepSegments(
  msg: Extract<GrepWorkerRequest, { type: 'grepSegments' }>,
  post: (reply: GrepWorkerReply) => void,
): void {
  const rank = new Map(msg.order.map((d, i) => [d, i]));
  const re = compile(msg, post);
  if (!re) return;
  const ranked = (match: GrepMatch): Ranked => {
    const colon = match.id.lastIndexOf(':');
    return {
      match,
      rank: rank.get(match.id.slice(0, colon)) ?? 0,
      ordinal: Number(match.id.slice(colon + 1)),
    };
  };
  let best: Ranked[] = [];
  let truncated = false;
  const spec: ScanSpec = { limit: msg.limit, context: msg.context, documents: null, deadline: 0 };
  let deadline = performance.now() + msg.timeoutMs;
  for (const seg of msg.segments) {
    post({ type: 'segment', requestId: msg.requestId, phase: 'reading' });
    const readStarted = performance.now();
    const found: Ranked[] = [];
    let stop: 'truncated' | 'timedOut' | null;
    try {
      stop = scanSegment(seg, {
        find: regexFinder(re),
        spec,
        // Each segment is searched for up to `limit` matches of its own: they are merged in order below.
        state: { found: 0, steps: 0 },
        rank,
        onMatch: (m) => found.push(ranked(m)),
        onRead: () => {
          deadline += performance.now() - readStarted;
          spec.deadline = deadline;
          post({ type: 'segment', requestId: msg.requestId, phase: 'scanning' });
        },
      });
    } catch (err) {
      const where = 'inline' in seg ? 'memories' : seg.chunks;
      const code = (err as NodeJS.ErrnoException).code;
      post({
        type: 'failed',
        requestId: msg.requestId,
        message: `${where}: ${(err as Error).message}`,
        ...(code ? { code } : {}),
      });
      return;
    }
    if (found.length > 0) best = merge(best, found);
    if (stop === 'truncated' || best.length > msg.limit) truncated = true;
    if (best.length > msg.limit) best = best.slice(0, msg.limit);
    if (stop === 'timedOut') {
      for (const { match } of best) post({ type: 'match', requestId: msg.requestId, match });
      post({ type: 'done', requestId: msg.requestId, truncated: false, timedOut: true, chunksSearched: 0 });
      return;
    }
  }
  for (const { match } of best) post({ type: 'match', requestId: msg.requestId, match });
  post({ type: 'done', requestId: msg.requestId, truncated, timedOut: false, chunksSearched: 0 });
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (msg: GrepWorkerRequest) => handle(msg, (reply) => port.postMessage(reply)));
}
