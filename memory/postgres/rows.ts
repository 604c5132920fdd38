/** Rows of the PostgreSQL store's tables as the records every backend hands out (memory/types.ts). */
import type {
  ChunkRecord,
  ChunkType,
  DocumentMeta,
  DocumentRecord,
  MemoryImportance,
  MemorySource,
} from '../types.ts';

/** The columns {@link documentOf} reads, for SELECT lists. */
export const DOCUMENT_COLUMNS =
  'id, path, hash, bytes, chunker, chunks, tokens, ingested_at, tags, notes, meta, topic, importance, source, archived_at, first_seq, chars';

export interface DocumentRow {
  id: string;
  path: string | null;
  hash: string;
  bytes: number;
  chunker: DocumentRecord['chunker'];
  chunks: number;
  tokens: number;
  ingested_at: string;
  tags: string[] | null;
  notes: string[] | null;
  meta: DocumentMeta | null;
  topic: string | null;
  importance: MemoryImportance | null;
  source: MemorySource | null;
  archived_at: string | null;
  first_seq: number;
  /** Null for documents written at schema 1, before the length was kept. */
  chars: number | null;
}

/**
 * A document row as a record. `segment` and `first` belong to the folder store's layout: here every
 * document is in one place, named `postgres`, and `first` is the sequence number of its first chunk.
 */
export function documentOf(r: DocumentRow): DocumentRecord {
  const doc: DocumentRecord = {
    id: r.id,
    path: r.path,
    hash: r.hash,
    bytes: r.bytes,
    chunker: r.chunker,
    chunks: r.chunks,
    tokens: r.tokens,
    ingestedAt: r.ingested_at,
    segment: 'postgres',
    first: r.first_seq,
  };
  if (r.chars !== null) doc.chars = r.chars;
  if (r.tags !== null) doc.tags = r.tags;
  if (r.notes !== null) doc.notes = r.notes;
  if (r.topic !== null && r.importance !== null && r.source !== null) {
    doc.memory = { topic: r.topic, importance: r.importance, source: r.source };
    if (r.archived_at !== null) doc.memory.archivedAt = r.archived_at;
  }
  if (r.meta !== null) doc.meta = r.meta;
  return doc;
}

/** The columns {@link chunkOf} reads. */
export const CHUNK_COLUMNS =
  'c.seq, c.document, c.ordinal, c.start_at, c.end_at, c.tokens, c.type, c.tags, c.section, c.created_at, c.time, c.text';

export interface ChunkRow {
  seq: number;
  document: string;
  ordinal: number;
  start_at: number;
  end_at: number;
  tokens: number;
  type: ChunkType;
  tags: string[];
  section: string | null;
  created_at: string;
  time: string | null;
  text: string;
}

export function chunkOf(r: ChunkRow): ChunkRecord {
  const c: ChunkRecord = {
    id: `${r.document}:${r.ordinal}`,
    document: r.document,
    ordinal: r.ordinal,
    start: r.start_at,
    end: r.end_at,
    tokens: r.tokens,
    type: r.type,
    tags: r.tags,
    createdAt: r.created_at,
    text: r.text,
  };
  if (r.section !== null) c.section = r.section;
  if (r.time !== null) c.time = r.time;
  return c;
}
