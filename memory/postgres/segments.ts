/**
 * The search index of a PostgreSQL store, as rows: each write adds one BM25 segment (the shared format
 * of memory/search/segment.ts, its chunk ids the chunks' sequence numbers) with what search filters and
 * the linker need of its chunks, so a process loads the whole index by reading a few rows instead of
 * analysing every chunk's text again. Segments never change; small ones are merged and those holding
 * removed chunks rewritten (memory/postgres/merge.ts).
 */
import { RlmError } from '../../core/errors.ts';
import { type Bm25Segment, buildSegment } from '../search/bm25.ts';
import type { ChunkType, MemoryImportance, MemorySource } from '../types.ts';
import type { Sql } from './db.ts';

/** What a version of a document always is, as search and recall show it (kept with its chunks). */
export interface DocFacts {
  path: string | null;
  /** The document's own tags (null: none). */
  tags: string[] | null;
  /** When it was ingested (a memory: created), ISO text. */
  created: string;
  /** A memory's importance and source; null for another document. */
  memory: { importance: MemoryImportance; source: MemorySource } | null;
}

/** A chunk as a segment is built from: its sequence number, document, text and filter fields. */
export interface SegmentChunk {
  seq: number;
  document: string;
  ordinal: number;
  /** The memory's topic; null for a chunk of another document. */
  topic: string | null;
  type: ChunkType;
  tags: string[];
  tokens: number;
  text: string;
  facts: DocFacts;
  /** Its signature terms (linker.ts), when known already (a merge carries them over). */
  signature?: string[];
}

/** Everything about a segment's chunks except their BM25 postings, in chunk order. */
export interface SegmentInfo {
  /** Runs of chunks of one document version: [document id, chunks, topic (null: not a memory), facts]. */
  docs: [string, number, string | null, DocFacts][];
  types: ChunkType[];
  tags: string[][];
  tokens: number[];
  /** A memory's chunk text (recall shows it without reading the chunk); null for other chunks. */
  texts: (string | null)[];
  /** Each chunk's signature terms (linker.ts). */
  signatures: string[][];
}

/**
 * The columns {@link segmentChunkOf} reads, of `chunks c JOIN documents d ON d.id = c.document`: what a
 * merge or a migration builds a segment from.
 */
export const SEGMENT_CHUNK_COLUMNS =
  'c.seq, c.document, c.ordinal, c.type, c.tags, c.tokens, c.text, d.topic, d.path, d.tags AS doc_tags, d.ingested_at, d.importance, d.source';

/** A row of {@link SEGMENT_CHUNK_COLUMNS}. */
export interface SegmentChunkRow {
  seq: number;
  document: string;
  ordinal: number;
  type: ChunkType;
  tags: string[];
  tokens: number;
  text: string;
  topic: string | null;
  path: string | null;
  doc_tags: string[] | null;
  ingested_at: string;
  importance: MemoryImportance | null;
  source: MemorySource | null;
}

export function segmentChunkOf(r: SegmentChunkRow, signature: string[]): SegmentChunk {
  return {
    seq: Number(r.seq),
    document: r.document,
    ordinal: r.ordinal,
    topic: r.topic,
    type: r.type,
    tags: r.tags,
    tokens: r.tokens,
    text: r.text,
    facts: {
      path: r.path,
      tags: r.doc_tags,
      created: r.ingested_at,
      memory:
        r.topic !== null && r.importance !== null && r.source !== null
          ? { importance: r.importance, source: r.source }
          : null,
    },
    signature,
  };
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
  const info: SegmentInfo = { docs: [], types: [], tags: [], tokens: [], texts: [], signatures: [] };
  let last: [string, number, string | null, DocFacts] | undefined;
  for (const c of chunks) {
    // A run is one version of a document: chunk 0 starts one even for the same id (an old version of a
    // document beside its new one, in a merge).
    if (last && last[0] === c.document && c.ordinal === last[1]) last[1]++;
    else {
      last = [c.document, 1, c.topic, c.facts];
      info.docs.push(last);
    }
    info.types.push(c.type);
    info.tags.push(c.tags);
    info.tokens.push(c.tokens);
    info.texts.push(c.facts.memory ? c.text : null);
    info.signatures.push(c.signature ?? []);
  }
  return { id, bm25, info };
}

/**
 * The segment of chunk rows the store holds already (in sequence order), under a new id: what a migration
 * and a repair build when they index a store's chunks again.
 */
export async function newIndexSegment<R extends SegmentChunkRow>(
  sql: Sql,
  rows: readonly R[],
  signature: (row: R) => string[],
): Promise<LoadedSegment> {
  const { rows: id } = await sql.query<{ id: number }>("SELECT nextval('bm25_segment_seq') AS id");
  return buildIndexSegment(
    Number(id[0]!.id),
    rows.map((r) => segmentChunkOf(r, signature(r))),
  );
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
  for (const col of ['types', 'tags', 'tokens', 'texts', 'signatures'] as const)
    if (!Array.isArray(info[col]) || info[col].length !== n) fail(`${col} do not match its chunks`);
  return { id: row.id, bm25, info, ...(row.xid !== undefined ? { xid: Number(row.xid) } : {}) };
}
