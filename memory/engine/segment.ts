/**
 * A segment is an immutable batch of chunks written by one ingest step. Its chunk file is the source of
 * truth; the meta (columnar, no text), BM25 and links files beside it are derived and can be rebuilt by
 * `rlm repair`. See memory/SCHEMA.md.
 */
import { CHUNK_TYPES, type ChunkRecord, type ChunkType } from '../types.ts';

export const SEGMENT_VERSION = 1;

export interface SegmentChunksFile {
  version: number;
  segment: string;
  chunks: ChunkRecord[];
}

/** Everything about a segment's chunks except their text, in columns so it parses fast. */
export interface SegmentMeta {
  version: number;
  segment: string;
  createdAt: string;
  count: number;
  /** Documents in this segment, in order: id and index of their first chunk. */
  docs: { id: string; first: number; count: number }[];
  start: number[];
  end: number[];
  tokens: number[];
  /** Index into CHUNK_TYPES. */
  type: number[];
  tagTable: string[];
  /** Per chunk, indexes into tagTable. */
  tags: number[][];
  section: (string | null)[];
  time: (string | null)[];
}

/** related_to edges computed when the segment was written: from a chunk here to a chunk of any segment. */
export interface SegmentLinks {
  version: number;
  segment: string;
  /** [from chunk id, to chunk id, to segment, strength 0..1] */
  related: [string, string, string, number][];
  /** Per chunk of this segment, in order: its signature terms (see linker.ts). */
  signatures: string[][];
}

export function segmentName(n: number): string {
  return `seg-${String(n).padStart(6, '0')}`;
}

export function buildMeta(segment: string, createdAt: string, chunks: ChunkRecord[]): SegmentMeta {
  const meta: SegmentMeta = {
    version: SEGMENT_VERSION,
    segment,
    createdAt,
    count: chunks.length,
    docs: [],
    start: [],
    end: [],
    tokens: [],
    type: [],
    tagTable: [],
    tags: [],
    section: [],
    time: [],
  };
  const tagIndex = new Map<string, number>();
  chunks.forEach((c, i) => {
    const last = meta.docs[meta.docs.length - 1];
    if (last && last.id === c.document) last.count++;
    else meta.docs.push({ id: c.document, first: i, count: 1 });
    meta.start.push(c.start);
    meta.end.push(c.end);
    meta.tokens.push(c.tokens);
    meta.type.push(Math.max(0, CHUNK_TYPES.indexOf(c.type)));
    meta.tags.push(
      c.tags.map((t) => {
        let k = tagIndex.get(t);
        if (k === undefined) {
          k = meta.tagTable.length;
          tagIndex.set(t, k);
          meta.tagTable.push(t);
        }
        return k;
      }),
    );
    meta.section.push(c.section ?? null);
    meta.time.push(c.time ?? null);
  });
  return meta;
}

/** Checks the shape of a parsed meta file; returns a reason when it is not usable. */
export function metaProblem(meta: SegmentMeta, segment: string): string | null {
  if (typeof meta !== 'object' || meta === null) return 'not an object';
  if (meta.segment !== segment) return `names segment ${String(meta.segment)}`;
  if (meta.version !== SEGMENT_VERSION) return `unsupported version ${String(meta.version)}`;
  const n = meta.count;
  for (const col of ['start', 'end', 'tokens', 'type', 'tags', 'section', 'time'] as const) {
    if (!Array.isArray(meta[col]) || meta[col].length !== n)
      return `column ${col} does not have ${n} entries`;
  }
  if (!Array.isArray(meta.docs)) return 'docs is not an array';
  return null;
}

export function chunksProblem(file: SegmentChunksFile, segment: string): string | null {
  if (typeof file !== 'object' || file === null || !Array.isArray(file.chunks)) return 'no chunks array';
  if (file.segment !== segment) return `names segment ${String(file.segment)}`;
  for (const [i, c] of file.chunks.entries()) {
    if (typeof c?.id !== 'string' || typeof c.text !== 'string' || typeof c.document !== 'string') {
      return `chunk ${i} lacks id, document or text`;
    }
  }
  return null;
}

/** Reassembles one chunk record (without access stats) from meta + text. */
export function recordAt(meta: SegmentMeta, idx: number, docIdx: number, text: string): ChunkRecord {
  const doc = meta.docs[docIdx]!;
  const rec: ChunkRecord = {
    id: `${doc.id}:${idx - doc.first}`,
    document: doc.id,
    ordinal: idx - doc.first,
    start: meta.start[idx]!,
    end: meta.end[idx]!,
    tokens: meta.tokens[idx]!,
    type: (CHUNK_TYPES[meta.type[idx]!] ?? 'text') as ChunkType,
    tags: meta.tags[idx]!.map((t) => meta.tagTable[t]!),
    createdAt: meta.createdAt,
    text,
  };
  const section = meta.section[idx];
  if (section) rec.section = section;
  const time = meta.time[idx];
  if (time) rec.time = time;
  return rec;
}

/** Index of the document (in meta.docs) that owns chunk `idx`. */
export function docIndexOf(meta: SegmentMeta, idx: number): number {
  let lo = 0;
  let hi = meta.docs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (meta.docs[mid]!.first <= idx) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export { parseChunkId } from '../graph-rules.ts';
