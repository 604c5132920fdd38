/**
 * What an ingest links new chunks against: the most recent chunks of the store, about
 * {@link LINK_WINDOW_CHUNKS} of them in whole segments, with their signatures (linker.ts) and the
 * document frequencies of their terms. Bounding it keeps an ingest's memory and its work per chunk the
 * same whatever the size of the store: the linker's lookups and idf weights see the window, not the
 * store. A store smaller than the window (and every segment of a bigger one, as it is written) is
 * linked exactly as if the whole store were seen.
 */
import { bm25Idf, topTermsOf } from '../search/bm25.ts';
import { SIGNATURE_TERMS, SignatureIndex, type SignedChunk } from '../search/linker.ts';
import { decodePostings } from '../search/postings.ts';
import type { SegmentTerms } from '../search/segment.ts';
import type { ChunkRecord } from '../types.ts';
import type { OutEdge } from './links-file.ts';
import type { Segment } from './segment.ts';

/** Chunks the window holds at least (whole segments: up to one segment more). */
export const LINK_WINDOW_CHUNKS = 65_536;

interface Part {
  name: string;
  count: number;
  /** The segment's terms and their dfs, taken back when it leaves the window. */
  terms: [string, number][];
  /** False once the store dropped the segment: its dfs no longer count, its chunks are not alive. */
  counted: boolean;
}

export class LinkWindow {
  private readonly limit: number;
  private readonly index = new SignatureIndex();
  private readonly df = new Map<string, number>();
  /** Chunks of the counted parts: the N of the idf weights. */
  private total = 0;
  private readonly parts: Part[] = [];

  constructor(limit = LINK_WINDOW_CHUNKS) {
    this.limit = limit;
  }

  /** The window over the newest of `segments` (in write order), read through `open`. */
  static load(segments: readonly string[], open: (name: string) => Segment, limit = LINK_WINDOW_CHUNKS): LinkWindow {
    const window = new LinkWindow(limit);
    let covered = 0;
    let first = segments.length;
    while (first > 0 && covered < limit) covered += open(segments[--first]!).columns().count;
    for (const name of segments.slice(first)) {
      const seg = open(name);
      const columns = seg.columns();
      window.addPart(name, columns.count, seg.bm25().terms());
      const signatures = seg.links().signatures();
      for (const d of columns.docs) {
        for (let i = 0; i < d.count; i++) {
          window.index.add({
            id: `${d.id}:${i}`,
            segment: name,
            document: d.id,
            ordinal: i,
            terms: signatures[d.first + i] ?? [],
            idx: d.first + i,
          });
        }
      }
    }
    return window;
  }

  /** Segments in the window, oldest first. */
  get segments(): string[] {
    return this.parts.map((p) => p.name);
  }

  private addPart(name: string, count: number, terms: Iterable<[string, number]>): void {
    const list = [...terms];
    for (const [term, df] of list) this.df.set(term, (this.df.get(term) ?? 0) + df);
    this.total += count;
    this.parts.push({ name, count, terms: list, counted: true });
  }

  private uncount(part: Part): void {
    if (!part.counted) return;
    part.counted = false;
    this.total -= part.count;
    for (const [term, df] of part.terms) {
      const left = (this.df.get(term) ?? 0) - df;
      if (left > 0) this.df.set(term, left);
      else this.df.delete(term);
    }
  }

  /** Takes the oldest segments out while the rest still cover the window. */
  private evict(): void {
    while (this.parts.length > 1 && this.total - (this.parts[0]!.counted ? this.parts[0]!.count : 0) >= this.limit) {
      const part = this.parts.shift()!;
      this.uncount(part);
      this.index.dropOldest(part.count);
    }
  }

  /** The store no longer has these segments (all their documents replaced or removed): their terms stop counting. */
  keepOnly(live: ReadonlySet<string>): void {
    for (const part of this.parts) if (!live.has(part.name)) this.uncount(part);
  }

  /**
   * The links and signatures of a new segment's chunks (`records`, analysed into `terms`), which then
   * join the window. `alive` tells whether a window chunk is still live in the store the segment joins.
   */
  link(
    name: string,
    records: readonly ChunkRecord[],
    terms: SegmentTerms,
    alive: (c: SignedChunk) => boolean,
  ): { edges: OutEdge[]; signatures: string[][] } {
    const dfs: [string, number][] = terms.terms.map((t, i) => {
      const start = i === 0 ? 0 : terms.ends[i - 1]!;
      return [t, readDf(terms.lists, start)];
    });
    this.addPart(name, records.length, dfs);
    this.evict();
    const idf = (t: string) => bm25Idf(this.total, this.df.get(t) ?? 0);
    const top = topTermsOf(
      {
        chunks: records.length,
        termCount: terms.terms.length,
        termAt: (t) => terms.terms[t]!,
        postings: (t, out) => decodePostings(terms.lists, t === 0 ? 0 : terms.ends[t - 1]!, terms.ends[t]!, out),
      },
      SIGNATURE_TERMS,
      // A term no other chunk has cannot tell which chunks are related.
      (term) => ((this.df.get(term) ?? 0) < 2 ? null : idf(term)),
      true,
    );
    const edges: OutEdge[] = [];
    records.forEach((r, i) => {
      const chunk: SignedChunk = {
        id: r.id,
        segment: name,
        document: r.document,
        ordinal: r.ordinal,
        terms: top[i] ?? [],
        idx: i,
      };
      for (const e of this.index.relate(chunk, idf, alive))
        edges.push({ fromIdx: i, to: e.to, toSegment: e.toSegment, toIdx: e.toIdx ?? -1, strength: e.strength });
      this.index.add(chunk);
    });
    return { edges, signatures: top };
  }
}

/** The df at the head of a postings list. */
function readDf(lists: Buffer, start: number): number {
  let v = 0;
  for (let pos = start, shift = 1; pos < lists.length; shift *= 0x80) {
    const b = lists[pos++]!;
    v += (b & 0x7f) * shift;
    if (b < 0x80) break;
  }
  return v;
}
