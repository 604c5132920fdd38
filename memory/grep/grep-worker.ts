/**
 * Worker thread that runs regex greps for {@link GrepRunner}. It exists so that a catastrophic pattern
 * burns this thread, not the host's: the scan stops itself when its CPU budget is spent, and the host
 * terminates it when it falls silent (one `exec` that never returns). The corpus is sent once per
 * version and kept here, so repeated greps cost only the search.
 *
 * Protocol (host → worker): `load` {version, chunks} → `loaded`; `grep` / `grepSegments` {...} → zero
 * or more `match` (and `progress`, `segment`), then `done`. Errors come back as `failed`.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { DamagedFile } from '../binary.ts';
import type { ChunkRecord, GrepDocumentCount, GrepMatch } from '../types.ts';
import { type ChunkFileHeader, chunkFileHeader } from './chunk-file.ts';
import {
  documentRuns,
  type Finder,
  type GrepCarry,
  type GrepChunk,
  regexFinder,
  ScanClock,
  type ScanSpec,
  type ScanState,
  scanChunks,
  scanDocument,
  scanState,
} from './grep-scan.ts';
import { readTextColumn, type TextColumn, type TextDocRun } from './segment-text.ts';

/**
 * A live document's run of chunks in a segment, with the chunks' offsets in the document when the host
 * has them to give (documents whose chunks overlap or are rendered: see {@link GrepChunk}).
 */
export interface GrepRun extends TextDocRun {
  starts?: number[];
  ends?: number[];
  /** The parts of a file next to this one that are searched too (see {@link GrepChunk}). */
  prevPart?: string;
  nextPart?: string;
}

/**
 * One segment to grep and the documents whose live chunks it holds: its chunk file (schema 3), its files
 * (schema 1/2: the text column, else the chunk file, read in the worker) or, for a segment held in
 * memory, those chunks themselves. `runs` say where the documents file puts each live document's chunks.
 */
export type GrepSegment =
  | { segment: string; file: string; runs: GrepRun[] }
  | { segment: string; text: string; chunks: string; runs: GrepRun[] }
  | { documents: string[]; inline: GrepChunk[] };

/** What every search request carries. */
interface SearchRequest {
  requestId: number;
  source: string;
  flags: string;
  limit: number;
  context: number;
  count: boolean;
  /** Base CPU budget, ms (see ScanClock). */
  timeoutMs: number;
}

/** Host → worker messages. */
export type GrepWorkerRequest =
  | { type: 'load'; version: number; chunks: GrepChunk[] }
  | (SearchRequest & {
      type: 'grepSegments';
      segments: GrepSegment[];
      /** Every document to search, in reporting order (a store's path order). */
      order: string[];
    })
  | (SearchRequest & {
      type: 'grep';
      version: number;
      documents: string[] | null;
      /** Parts of files whose scan goes on from an earlier request (a store's earlier page), by part id. */
      carries?: [string, GrepCarry][];
    });

/** Worker → host messages. */
export type GrepWorkerReply =
  | { type: 'loaded'; version: number }
  | { type: 'segment'; requestId: number; phase: 'reading' | 'scanning' }
  /** The scan is alive: sent every {@link PROGRESS_MS} or so while it runs, so the host does not kill it. */
  | { type: 'progress'; requestId: number }
  | { type: 'match'; requestId: number; match: GrepMatch }
  | {
      type: 'done';
      requestId: number;
      truncated: boolean;
      timedOut: boolean;
      /** Per-document counts of a count request (partial when timed out). */
      counts?: GrepDocumentCount[];
      /** CPU ms used and characters scanned, for the timeout message. */
      cpuMs: number;
      chars: number;
      /** A `grep` request with `carries`: what its last parts leave to the next request. */
      carries?: [string, GrepCarry][];
    }
  | {
      type: 'failed';
      requestId: number;
      message: string;
      /** The errno code when a file read failed (`ENOENT`: a writer removed the segment meanwhile). */
      code?: string;
      /** The store file whose bytes did not check out (then the message says what failed). */
      corrupt?: string;
    };

/** Wall time between two progress messages at most (about). */
const PROGRESS_MS = 200;

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

/** The scan settings of a request, with a progress callback that posts at most every PROGRESS_MS. */
function specOf(
  msg: SearchRequest,
  documents: ReadonlySet<string> | null,
  post: (reply: GrepWorkerReply) => void,
): ScanSpec {
  let last = performance.now();
  return {
    limit: msg.limit,
    context: msg.context,
    documents,
    count: msg.count,
    clock: new ScanClock(msg.timeoutMs),
    onProgress: () => {
      const now = performance.now();
      if (now - last < PROGRESS_MS) return;
      last = now;
      post({ type: 'progress', requestId: msg.requestId });
    },
  };
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
  const re = compile(msg, post);
  if (!re) return;
  const spec = specOf(msg, msg.documents === null ? null : new Set(msg.documents), post);
  const state = scanState(new Map(msg.carries ?? []));
  // Matches are posted as found so the host keeps them even if it has to kill this thread mid-search.
  const outcome = scanChunks(corpus, regexFinder(re), spec, state, (match) =>
    post({ type: 'match', requestId: msg.requestId, match }),
  );
  post({
    type: 'done',
    requestId: msg.requestId,
    ...outcome,
    ...(msg.count ? { counts: state.counts } : {}),
    cpuMs: spec.clock.usedMs(),
    chars: spec.clock.chars,
    ...(msg.carries ? { carries: [...state.carries] } : {}),
  });
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
  /** Parts left for later: the part before each (its `prevPart`) is in a segment not scanned yet. */
  waiting: { id: string; prevPart: string }[];
}

/**
 * Whether a document must wait for the scan of the part before it, which leaves it a carry (seams.ts):
 * it then goes in `job.waiting`, and its segment is read again once that part is scanned.
 */
function waits(id: string, prevPart: string | undefined, job: SegmentScan): boolean {
  if (prevPart === undefined || job.state.carries.has(prevPart)) return false;
  job.waiting.push({ id, prevPart });
  return true;
}

const byRank =
  (rank: Map<string, number>) =>
  (a: { document?: string; id: string }, b: { document?: string; id: string }): number =>
    (rank.get(a.document ?? a.id) ?? 0) - (rank.get(b.document ?? b.id) ?? 0);

/**
 * Chunks of the wanted documents in reporting order: by document rank, then ordinal. A part's links to
 * the parts next to it come from `links` (its run), else from the chunk.
 */
function inOrder(
  chunks: (Pick<GrepChunk, 'id' | 'text' | 'start' | 'end' | 'prevPart' | 'nextPart'> & {
    document: string;
    ordinal: number;
  })[],
  wanted: Set<string>,
  rank: Map<string, number>,
  links: ReadonlyMap<string, Pick<GrepChunk, 'prevPart' | 'nextPart'>> = new Map(),
): GrepChunk[] {
  return chunks
    .filter((c) => wanted.has(c.document))
    .sort((a, b) => byRank(rank)(a, b) || a.ordinal - b.ordinal)
    .map((c) => {
      const g: GrepChunk = { id: c.id, text: c.text, document: c.document };
      if (c.start !== undefined && c.end !== undefined) {
        g.start = c.start;
        g.end = c.end;
      }
      const link = links.get(c.document) ?? c;
      if (c.ordinal === 0 && link.prevPart !== undefined) g.prevPart = link.prevPart;
      if (c.ordinal === 0 && link.nextPart !== undefined) g.nextPart = link.nextPart;
      return g;
    });
}

/** Scans chunks already in memory and in reporting order. */
function scanHeld(chunks: GrepChunk[], job: SegmentScan): 'truncated' | 'timedOut' | null {
  for (const run of documentRuns(chunks)) {
    const head = run[0]!;
    if (waits(head.document ?? head.id, head.prevPart, job)) continue;
    const stop = scanDocument(run, job.find, job.spec, job.state, job.onMatch);
    if (stop !== null) return stop;
    job.spec.onProgress?.();
  }
  return null;
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
 * Scans the live runs of a text column in reporting order, one document at a time: its chunks are
 * decoded from `bytes` just before the scan and dropped after, so the strings made stay at one document
 * and die young, and the worker's small young generation recycles the same memory.
 */
function scanColumn(
  column: TextColumn,
  bytes: Buffer,
  live: GrepRun[],
  job: SegmentScan,
): 'truncated' | 'timedOut' | null {
  const at = column.at;
  return scanRuns(live, job, (k) => bytes.toString('utf8', at[k], at[k + 1]));
}

/**
 * Scans `live` in reporting order, one document at a time, each chunk's text taken from `textAt` (by
 * its index in the segment) just before its document is scanned.
 */
function scanRuns(
  live: GrepRun[],
  job: SegmentScan,
  textAt: (k: number) => string,
): 'truncated' | 'timedOut' | null {
  for (const run of [...live].sort(byRank(job.rank))) {
    if (waits(run.id, run.prevPart, job)) continue;
    const chunks: GrepChunk[] = [];
    for (let i = 0; i < run.count; i++) {
      const chunk: GrepChunk = { id: `${run.id}:${i}`, text: textAt(run.first + i), document: run.id };
      const start = run.starts?.[i];
      const end = run.ends?.[i];
      if (start !== undefined && end !== undefined) {
        chunk.start = start;
        chunk.end = end;
      }
      chunks.push(chunk);
    }
    if (chunks[0] !== undefined && run.prevPart !== undefined) chunks[0].prevPart = run.prevPart;
    if (chunks[0] !== undefined && run.nextPart !== undefined) chunks[0].nextPart = run.nextPart;
    const stop = scanDocument(chunks, job.find, job.spec, job.state, job.onMatch);
    if (stop !== null) return stop;
    job.spec.onProgress?.();
  }
  return null;
}

/**
 * Scans the live runs of a schema 3 chunk file held in `bytes[0, size)`, each document decoded (and its
 * chunks checked against their CRC) just before it is scanned.
 */
function scanChunkFile(
  file: string,
  segment: string,
  size: number,
  live: GrepRun[],
  job: SegmentScan,
): 'truncated' | 'timedOut' | null {
  let header: ChunkFileHeader;
  try {
    header = chunkFileHeader(readBuffer.subarray(0, size));
  } catch (err) {
    throw err instanceof DamagedFile ? new CorruptFile(file, err.message) : err;
  }
  if (header.segment !== segment) throw new CorruptFile(file, `it names segment ${header.segment}`);
  if (header.body + header.textBytes !== size) throw new CorruptFile(file, 'it has the wrong length');
  job.onRead();
  return scanRuns(live, job, (k) => {
    try {
      return header.text(k, readBuffer, header.range(k)[0]);
    } catch (err) {
      throw err instanceof DamagedFile ? new CorruptFile(file, err.message) : err;
    }
  });
}

/** A store file whose bytes do not check out. */
class CorruptFile extends Error {
  readonly file: string;
  constructor(file: string, message: string) {
    super(message);
    this.file = file;
  }
}

/**
 * Scans the live chunks of one segment. From a chunk file or a text column each document is decoded
 * from the file's bytes just before it is scanned and dropped after, so the worker's memory stays at
 * one file's bytes; a schema 1/2 chunk file (stores written before text columns) has to be parsed whole.
 */
function scanSegment(seg: GrepSegment, job: SegmentScan): 'truncated' | 'timedOut' | null {
  if ('inline' in seg) {
    job.onRead();
    const chunks = seg.inline.map((c) => ({
      ...c,
      document: c.document ?? '',
      ordinal: Number(c.id.slice(c.id.lastIndexOf(':') + 1)),
    }));
    return scanHeld(inOrder(chunks, new Set(seg.documents), job.rank), job);
  }
  if ('file' in seg) return scanChunkFile(seg.file, seg.segment, readWhole(seg.file), seg.runs, job);
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
  const runs = new Map(seg.runs.map((r) => [r.id, r]));
  return scanHeld(inOrder(records, new Set(runs.keys()), job.rank, runs), job);
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
 * nothing crosses the thread boundary but the matches (or the counts). Matches and counts are reported
 * in `order` (then chunk, then offset), whatever the segments' order; the CPU spent reading files does
 * not count against the budget, and `segment` messages tell the host when a file is being read (its
 * timer pauses) and scanned (its timer runs again).
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
  const spec = specOf(msg, null, post);
  const counts: GrepDocumentCount[] = [];
  const finish = (timedOut: boolean) => {
    for (const { match } of best) post({ type: 'match', requestId: msg.requestId, match });
    post({
      type: 'done',
      requestId: msg.requestId,
      truncated: truncated && !timedOut,
      timedOut,
      ...(msg.count ? { counts: counts.sort(byRank(rank)) } : {}),
      cpuMs: spec.clock.usedMs(),
      chars: spec.clock.chars,
    });
  };
  // What each part of a file leaves to the next, whatever segment that one is in.
  const carries = new Map<string, GrepCarry>();
  /** Scans (the wanted documents of) one segment; the parts it left waiting, or null when the grep ended. */
  const visit = (seg: GrepSegment): SegmentScan['waiting'] | null => {
    post({ type: 'segment', requestId: msg.requestId, phase: 'reading' });
    const readStarted = spec.clock.usedMs();
    const found: Ranked[] = [];
    // Each segment is searched for up to `limit` matches of its own: they are merged in order below.
    const job: SegmentScan = {
      find: regexFinder(re),
      spec,
      state: scanState(carries),
      rank,
      onMatch: (m) => found.push(ranked(m)),
      onRead: () => {
        spec.clock.credit(spec.clock.usedMs() - readStarted);
        post({ type: 'segment', requestId: msg.requestId, phase: 'scanning' });
      },
      waiting: [],
    };
    let stop: 'truncated' | 'timedOut' | null;
    try {
      stop = scanSegment(seg, job);
    } catch (err) {
      const where = 'inline' in seg ? 'memories' : 'file' in seg ? seg.file : seg.chunks;
      const code = (err as NodeJS.ErrnoException).code;
      post({
        type: 'failed',
        requestId: msg.requestId,
        message: err instanceof CorruptFile ? err.message : `${where}: ${(err as Error).message}`,
        ...(code ? { code } : {}),
        ...(err instanceof CorruptFile ? { corrupt: err.file } : {}),
      });
      return null;
    }
    counts.push(...job.state.counts);
    if (found.length > 0) best = merge(best, found);
    if (stop === 'truncated' || best.length > msg.limit) truncated = true;
    if (best.length > msg.limit) best = best.slice(0, msg.limit);
    if (stop === 'timedOut') {
      finish(true);
      return null;
    }
    return job.waiting;
  };
  let later: { seg: GrepSegment; waiting: SegmentScan['waiting'] }[] = [];
  for (const seg of msg.segments) {
    const waiting = visit(seg);
    if (waiting === null) return;
    if (waiting.length > 0) later.push({ seg, waiting });
  }
  // Parts whose previous part was in a later segment (a part ingested again lands in a new one): their
  // segments are read again once it is scanned. A part still waiting when none can go on follows one a
  // truncated scan never reached, so its matches would rank past the cut anyway.
  for (;;) {
    const ready = later.filter((l) => l.waiting.some((w) => carries.has(w.prevPart)));
    if (ready.length === 0) break;
    later = later.filter((l) => !ready.includes(l));
    for (const { seg, waiting } of ready) {
      const left = visit(onlyDocuments(seg, new Set(waiting.map((w) => w.id))));
      if (left === null) return;
      if (left.length > 0) later.push({ seg, waiting: left });
    }
  }
  finish(false);
}

/** `seg` with only the documents `ids` to scan. */
function onlyDocuments(seg: GrepSegment, ids: ReadonlySet<string>): GrepSegment {
  if ('inline' in seg) return { documents: seg.documents.filter((d) => ids.has(d)), inline: seg.inline };
  return { ...seg, runs: seg.runs.filter((r) => ids.has(r.id)) };
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (msg: GrepWorkerRequest) => handle(msg, (reply) => port.postMessage(reply)));
}
