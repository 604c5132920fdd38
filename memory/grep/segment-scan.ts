/**
 * Scanning a store's segments in the grep worker (grep-worker.ts `grepSegments`): one segment file read
 * into a buffer reused from file to file, each live document decoded just before it is scanned and
 * dropped after, and a part of a file that must wait for the part before it (seams.ts) set aside.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { DamagedFile } from '../binary.ts';
import type { ChunkRecord, GrepMatch } from '../types.ts';
import { type ChunkFileHeader, chunkFileHeader } from './chunk-file.ts';
import {
  documentRuns,
  type Finder,
  type GrepChunk,
  type ScanSpec,
  type ScanState,
  scanDocument,
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
export interface SegmentScan {
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

/** Compares runs, chunks or counts by their document's place in the reporting order (`rank`). */
export const byRank =
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
export class CorruptFile extends Error {
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
export function scanSegment(seg: GrepSegment, job: SegmentScan): 'truncated' | 'timedOut' | null {
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

/** `seg` with only the documents `ids` to scan. */
export function onlyDocuments(seg: GrepSegment, ids: ReadonlySet<string>): GrepSegment {
  if ('inline' in seg) return { documents: seg.documents.filter((d) => ids.has(d)), inline: seg.inline };
  return { ...seg, runs: seg.runs.filter((r) => ids.has(r.id)) };
}
