/**
 * A segment seen through chunk records held in memory: what `rlm repair` rewrites a schema 1/2 segment
 * (or one read record by record) from, one segment at a time.
 */
import { RlmError } from '../../core/errors.ts';
import type { ChunkColumns, DocRun, Segment, SegmentLinkReader } from '../engine/segment.ts';
import { docRunsOf } from '../engine/segment.ts';
import type { TermSegment } from '../search/bm25.ts';
import type { ChunkRecord, ChunkType } from '../types.ts';

class RecordColumns implements ChunkColumns {
  private readonly records: readonly ChunkRecord[];
  readonly docs: readonly DocRun[];
  readonly createdAt: string;
  constructor(records: readonly ChunkRecord[]) {
    this.records = records;
    this.docs = docRunsOf(records);
    this.createdAt = records[0]?.createdAt ?? new Date().toISOString();
  }
  get count(): number {
    return this.records.length;
  }
  start(i: number): number {
    return this.records[i]!.start;
  }
  end(i: number): number {
    return this.records[i]!.end;
  }
  tokens(i: number): number {
    return this.records[i]!.tokens;
  }
  type(i: number): ChunkType {
    return this.records[i]!.type;
  }
  tags(i: number): string[] {
    return this.records[i]!.tags;
  }
  section(i: number): string | null {
    return this.records[i]!.section ?? null;
  }
  time(i: number): string | null {
    return this.records[i]!.time ?? null;
  }
}

/** No links, and an empty signature per chunk: a segment whose links were lost. */
export function noLinks(count: number): SegmentLinkReader {
  return {
    edgeCount: 0,
    from: () => [],
    all: () => [],
    linksInto: () => false,
    into: () => [],
    signatures: () => Array.from({ length: count }, () => []),
  };
}

export class RecordsSegment implements Segment {
  readonly name: string;
  readonly paths = undefined;
  private readonly records: readonly ChunkRecord[];
  private readonly columnsOf: RecordColumns;
  private readonly linkReader: SegmentLinkReader;

  /** `links` reads the segment's links given its columns; none: the links were lost. */
  constructor(
    name: string,
    records: readonly ChunkRecord[],
    links?: (columns: ChunkColumns) => SegmentLinkReader,
  ) {
    this.name = name;
    this.records = records;
    this.columnsOf = new RecordColumns(records);
    this.linkReader = links ? links(this.columnsOf) : noLinks(records.length);
  }
  columns(): ChunkColumns {
    return this.columnsOf;
  }
  text(idx: number): string {
    return this.records[idx]?.text ?? '';
  }
  texts(from: number, to: number): string[] {
    return this.records.slice(from, to).map((r) => r.text);
  }
  bm25(): TermSegment {
    throw new RlmError('RUNTIME', `segment ${this.name} is being rewritten: it has no index to read`);
  }
  links(): SegmentLinkReader {
    return this.linkReader;
  }
  close(): void {}
}
