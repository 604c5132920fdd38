/**
 * A segment is an immutable batch of chunks written by one ingest step. This is how the engine reads
 * one, whatever holds it: the binary files of schema 3 (format-segment.ts, on disk or in memory) or the
 * JSON files of schema 1 and 2 stores (memory/files/legacy-segment.ts). See memory/SCHEMA.md.
 */
import type { DocRun } from '../grep/chunk-file.ts';
import type { TermSegment } from '../search/bm25.ts';
import type { ChunkRecord, ChunkType } from '../types.ts';

export type { DocRun } from '../grep/chunk-file.ts';

/** Every field of a segment's chunk records but the text, by position. */
export interface ChunkColumns {
  readonly count: number;
  readonly createdAt: string;
  /** Documents in the segment, in order: id, index of their first chunk, chunk count. */
  readonly docs: readonly DocRun[];
  start(i: number): number;
  end(i: number): number;
  tokens(i: number): number;
  type(i: number): ChunkType;
  tags(i: number): string[];
  section(i: number): string | null;
  time(i: number): string | null;
}

/** A related_to link out of a chunk, as the segment holding it stores it. */
export interface StoredLink {
  to: string;
  toSegment: string;
  strength: number;
}

/** A segment's related_to links and its chunks' linker signatures. */
export interface SegmentLinkReader {
  /** Links stored in this segment in all. */
  readonly edgeCount: number;
  /** Links out of the chunk at `idx`. */
  from(idx: number): StoredLink[];
  /** Every link stored in this segment, with the position of its `from` chunk. */
  all(): Iterable<StoredLink & { fromIdx: number }>;
  /** Whether this segment stores links into segment `target` (cheap: a header lookup). */
  linksInto(target: string): boolean;
  /** Links of this segment into the chunk `id`, at `idx` of segment `target`. */
  into(target: string, idx: number, id: string): { from: string; strength: number }[];
  /** Per chunk, its signature terms (linker.ts). */
  signatures(): string[][];
}

/** Where grep reads a segment kept in files. */
export type SegmentFilePaths =
  /** A schema 3 chunk file. */
  | { file: string }
  /** A schema 1/2 segment: the text column when it checks out, else the chunk file. */
  | { text: string; chunks: string };

/** One segment as the engine reads it. Parts load on first use. */
export interface Segment {
  readonly name: string;
  columns(): ChunkColumns;
  /** Text of the chunk at `idx`. */
  text(idx: number): string;
  /** Texts of the chunks in `[from, to)`. */
  texts(from: number, to: number): string[];
  bm25(): TermSegment;
  links(): SegmentLinkReader;
  /** The segment's files, for grep to read in its worker; undefined for a segment in memory. */
  readonly paths: SegmentFilePaths | undefined;
  /** Releases open files. */
  close(): void;
}

export function segmentName(n: number): string {
  return `seg-${String(n).padStart(6, '0')}`;
}

/** Reassembles one chunk record (without access stats) from the columns and its text. */
export function recordAt(columns: ChunkColumns, idx: number, text: string): ChunkRecord {
  const doc = columns.docs[docIndexOf(columns.docs, idx)]!;
  const rec: ChunkRecord = {
    id: `${doc.id}:${idx - doc.first}`,
    document: doc.id,
    ordinal: idx - doc.first,
    start: columns.start(idx),
    end: columns.end(idx),
    tokens: columns.tokens(idx),
    type: columns.type(idx),
    tags: columns.tags(idx),
    createdAt: columns.createdAt,
    text,
  };
  const section = columns.section(idx);
  if (section) rec.section = section;
  const time = columns.time(idx);
  if (time) rec.time = time;
  return rec;
}

/** Index of the run (in `docs`) that holds chunk `idx`. */
function docIndexOf(docs: readonly DocRun[], idx: number): number {
  let lo = 0;
  let hi = docs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (docs[mid]!.first <= idx) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The runs of documents of `records` (in segment order). */
export function docRunsOf(records: readonly { document: string }[]): DocRun[] {
  const runs: DocRun[] = [];
  records.forEach((r, i) => {
    const last = runs[runs.length - 1];
    if (last && last.id === r.document) last.count++;
    else runs.push({ id: r.document, first: i, count: 1 });
  });
  return runs;
}

export { parseChunkId } from '../graph-rules.ts';
