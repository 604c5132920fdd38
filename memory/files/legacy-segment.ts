/**
 * Segments of schema 1 and 2 stores: five JSON files (chunks, meta, text column, BM25, links), read
 * whole on first use. They stay readable so an old store opens and answers as before; `rlm repair`
 * rewrites them as schema 3 segments (memory/SCHEMA.md).
 */
import { readFileSync } from 'node:fs';
import type { ChunkColumns, DocRun, Segment, SegmentLinkReader, StoredLink } from '../engine/segment.ts';
import { corrupt, parseJson } from '../fsutil.ts';
import { decodeSegmentText } from '../grep/segment-text.ts';
import { type Bm25Segment, jsonTermSegment, type TermSegment } from '../search/bm25.ts';
import { CHUNK_TYPES, type ChunkRecord, type ChunkType } from '../types.ts';
import { type SegmentPart, segmentFile, segmentTextFile } from './manifest.ts';

const LEGACY_VERSION = 1;

/** `seg-N.chunks.json`: the chunk records with their text. */
export interface SegmentChunksFile {
  version: number;
  segment: string;
  chunks: ChunkRecord[];
}

/** `seg-N.meta.json`: the records without text, in columns. */
export interface SegmentMeta {
  version: number;
  segment: string;
  createdAt: string;
  count: number;
  docs: DocRun[];
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

/** `seg-N.links.json`: related_to edges [from, to, toSegment, strength] and per-chunk signatures. */
export interface SegmentLinks {
  version: number;
  segment: string;
  related: [string, string, string, number][];
  signatures: string[][];
}

/** Checks the shape of a parsed meta file; returns a reason when it is not usable. */
function metaProblem(meta: SegmentMeta, segment: string): string | null {
  if (typeof meta !== 'object' || meta === null) return 'not an object';
  if (meta.segment !== segment) return `names segment ${String(meta.segment)}`;
  if (meta.version !== LEGACY_VERSION) return `unsupported version ${String(meta.version)}`;
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

/** A meta file as columns. */
class MetaColumns implements ChunkColumns {
  private readonly meta: SegmentMeta;
  constructor(meta: SegmentMeta) {
    this.meta = meta;
  }
  get count(): number {
    return this.meta.count;
  }
  get createdAt(): string {
    return this.meta.createdAt;
  }
  get docs(): readonly DocRun[] {
    return this.meta.docs;
  }
  start(i: number): number {
    return this.meta.start[i]!;
  }
  end(i: number): number {
    return this.meta.end[i]!;
  }
  tokens(i: number): number {
    return this.meta.tokens[i]!;
  }
  type(i: number): ChunkType {
    return CHUNK_TYPES[this.meta.type[i]!] ?? 'text';
  }
  tags(i: number): string[] {
    return this.meta.tags[i]!.map((t) => this.meta.tagTable[t]!);
  }
  section(i: number): string | null {
    return this.meta.section[i] ?? null;
  }
  time(i: number): string | null {
    return this.meta.time[i] ?? null;
  }
}

/** A parsed links file as the engine reads links; `columns` place the segment's chunks. */
export function jsonLinks(file: SegmentLinks, columns: ChunkColumns): SegmentLinkReader {
  return new JsonLinks(file, columns);
}

/** A links file as the engine reads links. */
class JsonLinks implements SegmentLinkReader {
  private readonly file: SegmentLinks;
  private readonly columns: ChunkColumns;
  private byFrom: Map<string, StoredLink[]> | undefined;
  private byTo: Map<string, { from: string; strength: number }[]> | undefined;
  private targets: Set<string> | undefined;

  constructor(file: SegmentLinks, columns: ChunkColumns) {
    this.file = file;
    this.columns = columns;
  }
  get edgeCount(): number {
    return this.file.related.length;
  }
  private idOf(idx: number): string | undefined {
    const doc = this.columns.docs.find((d) => idx >= d.first && idx < d.first + d.count);
    return doc && `${doc.id}:${idx - doc.first}`;
  }
  from(idx: number): StoredLink[] {
    if (!this.byFrom) {
      this.byFrom = new Map();
      for (const [from, to, toSegment, strength] of this.file.related) {
        const list = this.byFrom.get(from) ?? [];
        list.push({ to, toSegment, strength });
        this.byFrom.set(from, list);
      }
    }
    const id = this.idOf(idx);
    return (id && this.byFrom.get(id)) || [];
  }
  *all(): Generator<StoredLink & { fromIdx: number }> {
    const firsts = new Map(this.columns.docs.map((d) => [d.id, d]));
    for (const [from, to, toSegment, strength] of this.file.related) {
      const colon = from.lastIndexOf(':');
      const doc = firsts.get(from.slice(0, colon));
      const ordinal = Number(from.slice(colon + 1));
      if (doc && ordinal < doc.count) yield { fromIdx: doc.first + ordinal, to, toSegment, strength };
    }
  }
  linksInto(target: string): boolean {
    this.targets ??= new Set(this.file.related.map((r) => r[2]));
    return this.targets.has(target);
  }
  into(target: string, _idx: number, id: string): { from: string; strength: number }[] {
    if (!this.byTo) {
      this.byTo = new Map();
      for (const [from, to, toSegment, strength] of this.file.related) {
        const key = `${toSegment}/${to}`;
        const list = this.byTo.get(key) ?? [];
        list.push({ from, strength });
        this.byTo.set(key, list);
      }
    }
    return this.byTo.get(`${target}/${id}`) ?? [];
  }
  signatures(): string[][] {
    return this.file.signatures;
  }
}

/** A schema 1/2 segment in a store folder, its files read whole on first use and checked. */
export class LegacySegment implements Segment {
  readonly name: string;
  private readonly dir: string;
  private meta: MetaColumns | undefined;
  private textList: string[] | undefined;
  private terms: TermSegment | undefined;
  private linkReader: JsonLinks | undefined;

  constructor(dir: string, name: string) {
    this.dir = dir;
    this.name = name;
  }

  get paths(): { text: string; chunks: string } {
    return { text: segmentTextFile(this.dir, this.name), chunks: segmentFile(this.dir, this.name, 'chunks') };
  }

  private read<T>(part: SegmentPart): T {
    const file = segmentFile(this.dir, this.name, part);
    let raw: string;
    try {
      raw = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw corrupt(file, 'file is missing');
      throw err;
    }
    return parseJson<T>(raw, file);
  }

  /** The meta file as parsed (repair and conversion read it). */
  metaFile(): SegmentMeta {
    const meta = this.read<SegmentMeta>('meta');
    const problem = metaProblem(meta, this.name);
    if (problem) throw corrupt(segmentFile(this.dir, this.name, 'meta'), problem);
    return meta;
  }

  columns(): ChunkColumns {
    this.meta ??= new MetaColumns(this.metaFile());
    return this.meta;
  }

  private allTexts(): string[] {
    if (!this.textList) {
      // The text column when it is there and checks out; else the chunk file, which holds the same text.
      try {
        const texts = decodeSegmentText(
          readFileSync(segmentTextFile(this.dir, this.name)),
          this.name,
          this.columns().docs,
        );
        if (texts) this.textList = texts;
      } catch {
        // A missing or unreadable column: the chunk file decides.
      }
      if (!this.textList) {
        const file = this.read<SegmentChunksFile>('chunks');
        const problem = chunksProblem(file, this.name);
        if (problem) throw corrupt(segmentFile(this.dir, this.name, 'chunks'), problem);
        this.textList = file.chunks.map((c) => c.text);
      }
    }
    return this.textList;
  }

  text(idx: number): string {
    return this.allTexts()[idx] ?? '';
  }

  texts(from: number, to: number): string[] {
    return this.allTexts().slice(from, to);
  }

  bm25(): TermSegment {
    if (!this.terms) {
      const seg = this.read<Bm25Segment>('bm25');
      this.terms = jsonTermSegment(segmentFile(this.dir, this.name, 'bm25'), seg);
    }
    return this.terms;
  }

  links(): SegmentLinkReader {
    if (!this.linkReader) {
      const links = this.read<SegmentLinks>('links');
      if (
        typeof links !== 'object' ||
        links === null ||
        !Array.isArray(links.related) ||
        !Array.isArray(links.signatures)
      ) {
        throw corrupt(segmentFile(this.dir, this.name, 'links'), 'not a links file');
      }
      this.linkReader = new JsonLinks(links, this.columns());
    }
    return this.linkReader;
  }

  close(): void {}
}
