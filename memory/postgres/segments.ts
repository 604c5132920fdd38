/**
 * The search index of a PostgreSQL store, as rows: each write adds one BM25 segment (the shared format
 * of memory/search/segment.ts, its chunk ids the chunks' sequence numbers) with what search filters and
 * the linker need of its chunks, so a process loads the whole index by reading a few rows instead of
 * analysing every chunk's text again. Segments never change; small ones are merged and those holding
 * removed chunks rewritten (memory/postgres/merge.ts).
 */
import { RlmError } from '../../core/errors.ts';
import { type Bm25Segment, buildSegment } from '../search/bm25.ts';
import type { ChunkType } from '../types.ts';

/** A chunk as a segment is built from: its sequence number, document, text and filter fields. */
export interface SegmentChunk {
  seq: number;
  document: string;
  ordinal: number;
  /** The memory's topic; null for a chunk of another document. */
  topic: string | null;
  type: ChunkType;
  tags: string[];
  text: string;
  /** Its signature terms (linker.ts), when known already (a merge carries them over). */
  signature?: string[];
}

/** Everything about a segment's chunks except their BM25 postings, in chunk order. */
export interface SegmentInfo {
  /** Runs of chunks of one document: [document id, chunks, topic (null: not a memory)]. */
  docs: [string, number, string | null][];
  types: ChunkType[];
  tags: string[][];
  /** Each chunk's signature terms (linker.ts). */
  signatures: string[][];
}

/** A segment as stored: its BM25 part and its info, both as JSON text. */
export interface SegmentRow {
  id: number;
  data: string;
  info: string;
  /** The transaction that wrote it (as read back: text). */
  xid?: string | number;
}

/** A segment ready to use: parsed, with one entry per chunk. */
export interface LoadedSegment {
  id: number;
  bm25: Bm25Segment;
  info: SegmentInfo;
  /** The transaction that wrote it; unknown until its writer has inserted it. */
  xid?: number;
}

/** Builds the segment of `chunks` (in sequence order); signatures are filled in later by the linker. */
export function buildIndexSegment(id: number, chunks: readonly SegmentChunk[]): LoadedSegment {
  const bm25 = buildSegment(chunks.map((c) => ({ id: String(c.seq), text: c.text })));
  const info: SegmentInfo = { docs: [], types: [], tags: [], signatures: [] };
  let last: [string, number, string | null] | undefined;
  for (const c of chunks) {
    // A run is one version of a document: chunk 0 starts one even for the same id (an old version of a
    // document beside its new one, in a merge).
    if (last && last[0] === c.document && c.ordinal === last[1]) last[1]++;
    else {
      last = [c.document, 1, c.topic];
      info.docs.push(last);
    }
    info.types.push(c.type);
    info.tags.push(c.tags);
    info.signatures.push(c.signature ?? []);
  }
  return { id, bm25, info };
}

/** The row to insert for a segment. */
export function segmentRow(seg: LoadedSegment): SegmentRow {
  return { id: seg.id, data: JSON.stringify(seg.bm25), info: JSON.stringify(seg.info) };
}

/** Parses a stored segment; STORE_CORRUPT when its parts do not agree. */
export function parseSegmentRow(row: SegmentRow): LoadedSegment {
  const fail = (why: string): never => {
    throw new RlmError('STORE_CORRUPT', `search index segment ${row.id} is damaged: ${why}`, {
      segment: row.id,
    });
  };
  let bm25: Bm25Segment;
  let info: SegmentInfo;
  try {
    bm25 = JSON.parse(row.data) as Bm25Segment;
    info = JSON.parse(row.info) as SegmentInfo;
  } catch (err) {
    return fail((err as Error).message);
  }
  const n = bm25.ids?.length;
  if (!Array.isArray(info.docs) || info.docs.reduce((s, d) => s + d[1], 0) !== n)
    fail('its documents do not cover its chunks');
  for (const col of ['types', 'tags', 'signatures'] as const)
    if (!Array.isArray(info[col]) || info[col].length !== n) fail(`${col} do not match its chunks`);
  return { id: row.id, bm25, info, ...(row.xid !== undefined ? { xid: Number(row.xid) } : {}) };
}
