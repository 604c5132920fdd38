/**
 * Worker thread that runs regex greps for {@link GrepRunner}. It exists so that a catastrophic pattern
 * burns this thread, not the host's: the host terminates it past the deadline. The corpus is sent once
 * per version and kept here, so repeated greps cost only the search.
 *
 * Protocol (host → worker): `load` {version, chunks} → `loaded`; `grep` {...} → zero or more `match`,
 * then `done`. Errors come back as `failed`.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { type GrepChunk, regexFinder, scanChunks } from './grep-scan.ts';
import type { ChunkRecord, GrepMatch } from './types.ts';

/** One segment's chunk file and the documents whose live chunks it holds. */
export interface GrepFile {
  path: string;
  documents: string[];
}

/** Host → worker messages. */
export type GrepWorkerRequest =
  | { type: 'load'; version: number; chunks: GrepChunk[] }
  | {
      type: 'grepFiles';
      requestId: number;
      files: GrepFile[];
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
  | { type: 'failed'; requestId: number; message: string };

let corpus: GrepChunk[] = [];
let corpusVersion = -1;

function handle(msg: GrepWorkerRequest, post: (reply: GrepWorkerReply) => void): void {
  if (msg.type === 'grepFiles') {
    grepFiles(msg, post);
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
  let re: RegExp;
  try {
    re = new RegExp(msg.source, msg.flags);
  } catch (err) {
    post({ type: 'failed', requestId: msg.requestId, message: (err as Error).message });
    return;
  }
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

/**
 * Greps a store's chunk files one at a time: read, parse, scan, drop. Only one segment's text is ever in
 * memory, and nothing crosses the thread boundary but the matches. Matches are reported in `order`
 * (then chunk, then offset), whatever the segments' order; the deadline counts scanning only, not
 * reading, and `segment` messages tell the host when a file is being read (its timer pauses) and
 * scanned (its timer runs again).
 */
function grepFiles(
  msg: Extract<GrepWorkerRequest, { type: 'grepFiles' }>,
  post: (reply: GrepWorkerReply) => void,
): void {
  const rank = new Map(msg.order.map((d, i) => [d, i]));
  let re: RegExp;
  try {
    re = new RegExp(msg.source, msg.flags);
  } catch (err) {
    post({ type: 'failed', requestId: msg.requestId, message: (err as Error).message });
    return;
  }
  const find = regexFinder(re);
  const key = (id: string) => {
    const colon = id.lastIndexOf(':');
    return { rank: rank.get(id.slice(0, colon)) ?? 0, ordinal: Number(id.slice(colon + 1)) };
  };
  const byOrder = (a: GrepMatch, b: GrepMatch) => {
    const ka = key(a.id);
    const kb = key(b.id);
    return ka.rank - kb.rank || ka.ordinal - kb.ordinal || a.offset - b.offset;
  };
  let best: GrepMatch[] = [];
  let truncated = false;
  let deadline = performance.now() + msg.timeoutMs;
  for (const file of msg.files) {
    post({ type: 'segment', requestId: msg.requestId, phase: 'reading' });
    const readStarted = performance.now();
    let records: ChunkRecord[];
    try {
      records = (JSON.parse(readFileSync(file.path, 'utf8')) as { chunks: ChunkRecord[] }).chunks;
    } catch (err) {
      post({ type: 'failed', requestId: msg.requestId, message: `${file.path}: ${(err as Error).message}` });
      return;
    }
    deadline += performance.now() - readStarted;
    post({ type: 'segment', requestId: msg.requestId, phase: 'scanning' });
    const wanted = new Set(file.documents);
    const chunks = records
      .filter((r) => wanted.has(r.document))
      .sort((a, b) => (rank.get(a.document) ?? 0) - (rank.get(b.document) ?? 0) || a.ordinal - b.ordinal);
    records = [];
    const found: GrepMatch[] = [];
    const outcome = scanChunks(
      chunks,
      find,
      { limit: msg.limit, context: msg.context, documents: null, deadline },
      (m) => found.push(m),
    );
    if (found.length > 0) best = best.concat(found).sort(byOrder);
    if (outcome.truncated || best.length > msg.limit) truncated = true;
    if (best.length > msg.limit) best = best.slice(0, msg.limit);
    if (outcome.timedOut) {
      for (const match of best) post({ type: 'match', requestId: msg.requestId, match });
      post({ type: 'done', requestId: msg.requestId, truncated: false, timedOut: true, chunksSearched: 0 });
      return;
    }
  }
  for (const match of best) post({ type: 'match', requestId: msg.requestId, match });
  post({ type: 'done', requestId: msg.requestId, truncated, timedOut: false, chunksSearched: 0 });
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (msg: GrepWorkerRequest) => handle(msg, (reply) => port.postMessage(reply)));
}
