/**
 * Worker thread that runs regex greps for {@link GrepRunner}. It exists so that a catastrophic pattern
 * burns this thread, not the host's: the scan stops itself when its CPU budget is spent, and the host
 * terminates it when it falls silent (one `exec` that never returns). The corpus is sent once per
 * version and kept here, so repeated greps cost only the search.
 *
 * Protocol (host → worker): `load` {version, chunks} → `loaded`; `grep` / `grepSegments` {...} → zero
 * or more `match` (and `progress`, `segment`), then `done`. Errors come back as `failed`.
 */
import { parentPort } from 'node:worker_threads';
import type { GrepDocumentCount, GrepMatch } from '../types.ts';
import {
  type GrepCarry,
  type GrepChunk,
  regexFinder,
  ScanClock,
  type ScanSpec,
  scanChunks,
  scanState,
} from './grep-scan.ts';
import {
  byRank,
  CorruptFile,
  type GrepSegment,
  onlyDocuments,
  type SegmentScan,
  scanSegment,
} from './segment-scan.ts';

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
      /** The store file a read of failed (with `code`). */
      file?: string;
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
      // A missing segment file is told as the store reads tell it (STORE_CORRUPT naming the file), so the
      // store's one retry on a newer manifest covers grep too.
      const missing = code === 'ENOENT' && !('inline' in seg);
      post({
        type: 'failed',
        requestId: msg.requestId,
        message:
          err instanceof CorruptFile
            ? err.message
            : missing
              ? 'file is missing'
              : `${where}: ${(err as Error).message}`,
        ...(code ? { code } : {}),
        ...(err instanceof CorruptFile ? { corrupt: err.file } : missing ? { corrupt: where } : {}),
        ...(code && !('inline' in seg) ? { file: (err as NodeJS.ErrnoException).path ?? where } : {}),
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

if (parentPort) {
  const port = parentPort;
  port.on('message', (msg: GrepWorkerRequest) => handle(msg, (reply) => port.postMessage(reply)));
}
