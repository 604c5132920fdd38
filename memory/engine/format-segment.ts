/**
 * A schema 3 segment: the chunk file (the source of truth), the BM25 file and the links file, read in
 * pieces through {@link Blob}s (files on disk, or the same bytes in memory). Bytes that fail a CRC check
 * raise STORE_CORRUPT naming the file, so `rlm repair` knows what to rebuild.
 */

import { DamagedFile } from '../binary.ts';
import type { Blob } from '../blob.ts';
import { isAccessFailure } from '../corrupt.ts';
import { corrupt } from '../fsutil.ts';
import { type ChunkFileHeader, chunkFileHeader, encodeChunkFile } from '../grep/chunk-file.ts';
import type { TermSegment } from '../search/bm25.ts';
import { Bm25File, encodeBm25File, type TermHit } from '../search/bm25-file.ts';
import type { FuzzyMatch } from '../search/fuzzy.ts';
import type { SegmentTerms } from '../search/segment.ts';
import type { ChunkRecord } from '../types.ts';
import { encodeLinksFile, LinksFile, type OutEdge } from './links-file.ts';
import {
  docRunsOf,
  type Segment,
  type SegmentFilePaths,
  type SegmentLinkReader,
  type StoredLink,
} from './segment.ts';

/** The three files of a segment, as bytes to write in order. */
export interface SegmentFiles {
  chunks: Buffer[];
  bm25: Buffer[];
  links: Buffer[];
}

/** The files of a new segment from its records, its analysed terms and its links. */
export function segmentFiles(
  name: string,
  createdAt: string,
  records: readonly ChunkRecord[],
  terms: SegmentTerms,
  links: { edges: readonly OutEdge[]; signatures: readonly (readonly string[])[] },
): SegmentFiles {
  return {
    chunks: encodeChunkFile(name, createdAt, records),
    bm25: encodeBm25File(terms),
    links: encodeLinksFile({ segment: name, docs: docRunsOf(records), ...links }),
  };
}

/** The blobs holding a segment's three files. */
export interface SegmentBlobs {
  chunks: Blob;
  bm25: Blob;
  links: Blob;
}

/** Runs `fn`, turning a {@link DamagedFile} into STORE_CORRUPT naming `file`. */
function guarded<T>(file: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof DamagedFile) throw corrupt(file, err.message);
    throw err;
  }
}

/** A segment file opened from its blob, whose damage is reported as STORE_CORRUPT naming the file. */
abstract class GuardedFile<F extends { verify(): void }> {
  protected readonly file: F;
  private readonly name: string;
  constructor(blob: Blob, open: (blob: Blob) => F) {
    this.name = blob.name;
    this.file = guarded(this.name, () => open(blob));
  }
  /** Runs `fn`, turning a {@link DamagedFile} into STORE_CORRUPT naming this file. */
  protected guard<T>(fn: () => T): T {
    return guarded(this.name, fn);
  }
  verify(): void {
    this.guard(() => this.file.verify());
  }
}

/** A BM25 file whose damage is reported as STORE_CORRUPT. */
class GuardedTerms extends GuardedFile<Bm25File> implements TermSegment {
  constructor(blob: Blob) {
    super(blob, (b) => new Bm25File(b));
  }
  get chunkCount(): number {
    return this.file.chunkCount;
  }
  get totalLength(): number {
    return this.file.totalLength;
  }
  get lengths(): ArrayLike<number> {
    return this.file.lengths;
  }
  get analyzer(): number {
    return this.file.analyzer;
  }
  find(term: string): TermHit | undefined {
    const hit = this.guard(() => this.file.find(term));
    return hit && { df: hit.df, postings: (out) => this.guard(() => hit.postings(out)) };
  }
  *terms(): Generator<[string, number]> {
    const it = this.file.terms();
    for (;;) {
      const next = this.guard(() => it.next());
      if (next.done) return;
      yield next.value;
    }
  }
  near(term: string, maxDistance: number): FuzzyMatch[] {
    return this.guard(() => this.file.near(term, maxDistance));
  }
}

/** A links file as the engine reads links, its damage reported as STORE_CORRUPT. */
class GuardedLinks extends GuardedFile<LinksFile> implements SegmentLinkReader {
  constructor(blob: Blob) {
    super(blob, (b) => new LinksFile(b));
  }
  get edgeCount(): number {
    return this.file.edgeCount;
  }
  from(idx: number): StoredLink[] {
    return this.guard(() => this.file.from(idx));
  }
  all(): Iterable<StoredLink & { fromIdx: number }> {
    return this.guard(() => [...this.file.all()]);
  }
  linksInto(target: string): boolean {
    return this.file.linksInto(target);
  }
  into(target: string, idx: number): { from: string; strength: number }[] {
    return this.guard(() => this.file.into(target, idx));
  }
  signatures(): string[][] {
    return this.guard(() => this.file.signatures());
  }
}

/** A schema 3 segment over its three blobs. */
export class FormatSegment implements Segment {
  readonly name: string;
  readonly paths: SegmentFilePaths | undefined;
  private readonly blobs: SegmentBlobs;
  private header: ChunkFileHeader | undefined;
  private terms: GuardedTerms | undefined;
  private linkReader: GuardedLinks | undefined;

  constructor(name: string, blobs: SegmentBlobs, paths?: SegmentFilePaths) {
    this.name = name;
    this.blobs = blobs;
    this.paths = paths;
  }

  columns(): ChunkFileHeader {
    if (!this.header) {
      const blob = this.blobs.chunks;
      this.header = guarded(blob.name, () => {
        const first = blob.read(0, 64 * 1024);
        const length = first.length >= 12 ? first.readUInt32LE(8) : 0;
        const bytes = 16 + length <= first.length ? first : blob.read(0, 16 + length);
        return chunkFileHeader(bytes);
      });
      const expected = this.header.body + this.header.textBytes;
      if (this.header.segment !== this.name)
        throw corrupt(blob.name, `it names segment ${this.header.segment}`);
      if (blob.size() !== expected) throw corrupt(blob.name, `it should be ${expected} bytes long`);
    }
    return this.header;
  }

  text(idx: number): string {
    return this.texts(idx, idx + 1)[0] ?? '';
  }

  texts(from: number, to: number): string[] {
    const header = this.columns();
    if (to <= from) return [];
    const start = header.range(from)[0];
    const end = header.range(to - 1)[1];
    const blob = this.blobs.chunks;
    const bytes = blob.read(start, end - start);
    return guarded(blob.name, () => {
      const out: string[] = [];
      for (let i = from; i < to; i++) out.push(header.text(i, bytes, header.range(i)[0] - start));
      return out;
    });
  }

  bm25(): GuardedTerms {
    this.terms ??= new GuardedTerms(this.blobs.bm25);
    return this.terms;
  }

  links(): GuardedLinks {
    this.linkReader ??= new GuardedLinks(this.blobs.links);
    return this.linkReader;
  }

  /**
   * What of the chunk file checks out (repair): null when its header does not (no chunk can be read),
   * else the positions of the chunks whose text fails its CRC.
   */
  damagedChunks(): Set<number> | null {
    let header: ChunkFileHeader;
    try {
      header = this.columns();
    } catch (err) {
      if (isAccessFailure(err)) throw err;
      return null;
    }
    const bad = new Set<number>();
    const bytes = this.blobs.chunks.read(0, header.body + header.textBytes);
    for (let i = 0; i < header.count; i++) if (!header.intact(i, bytes, header.range(i)[0])) bad.add(i);
    return bad;
  }

  /** Whether the BM25 file checks out in every byte, built with the analysis rules `analyzer` (repair). */
  indexIntact(analyzer: number): boolean {
    try {
      const terms = this.bm25();
      terms.verify();
      return terms.analyzer === analyzer && terms.chunkCount === this.columns().count;
    } catch (err) {
      if (isAccessFailure(err)) throw err;
      return false;
    }
  }

  /** Whether the links file checks out in every byte and covers the segment's chunks (repair). */
  linksIntact(): boolean {
    try {
      const links = this.links();
      links.verify();
      return links.signatures().length === this.columns().count;
    } catch (err) {
      if (isAccessFailure(err)) throw err;
      return false;
    }
  }

  close(): void {
    this.blobs.chunks.close();
    this.blobs.bm25.close();
    this.blobs.links.close();
  }
}
