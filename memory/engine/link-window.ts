/**
 * What an ingest links new chunks against: the most recent chunks of the store, about
 * {@link LINK_WINDOW_CHUNKS} of them in whole segments, with their signatures (linker.ts) and the
 * document frequencies of their terms. Bounding it keeps an ingest's memory and its work per chunk the
 * same whatever the size of the store: the linker's lookups and idf weights see the window, not the
 * store. A store smaller than the window (and every segment of a bigger one, as it is written) is
 * linked exactly as if the whole store were seen.
 */
import { grown } from '../grown.ts';
import { bm25Idf, topTermsOf } from '../search/bm25.ts';
import { SIGNATURE_TERMS, SignatureIndex, type SignedChunk } from '../search/linker.ts';
import { decodePostings, postingsDf } from '../search/postings.ts';
import type { SegmentTerms } from '../search/segment.ts';
import type { ChunkRecord } from '../types.ts';
import type { OutEdge } from './links-file.ts';
import type { Segment } from './segment.ts';
import { TermSlots } from './term-slots.ts';

/** Chunks the window holds at least (whole segments: up to one segment more). */
const LINK_WINDOW_CHUNKS = 65_536;

interface Part {
  name: string;
  count: number;
  /** The segment's terms (their slots) and their dfs, taken back when it leaves the window. */
  slots: Int32Array;
  dfs: Int32Array;
  /** False once the store dropped the segment: its dfs no longer count, its chunks are not alive. */
  counted: boolean;
}

export class LinkWindow {
  private readonly limit: number;
  private readonly index = new SignatureIndex();
  /** The window's distinct terms, by slot (slots of terms gone are reused), and their document frequencies. */
  private readonly vocabulary = new TermSlots();
  private dfOf = new Int32Array(1024);
  /** Chunks of the counted parts: the N of the idf weights. */
  private total = 0;
  private readonly parts: Part[] = [];

  constructor(limit = LINK_WINDOW_CHUNKS) {
    this.limit = limit;
  }

  /** The window over the newest of `segments` (in write order), read through `open`. */
  static load(
    segments: readonly string[],
    open: (name: string) => Segment,
    limit = LINK_WINDOW_CHUNKS,
  ): LinkWindow {
    const window = new LinkWindow(limit);
    let covered = 0;
    let first = segments.length;
    while (first > 0 && covered < limit) covered += open(segments[--first]!).columns().count;
    for (const name of segments.slice(first)) {
      const seg = open(name);
      const columns = seg.columns();
      const terms: string[] = [];
      const dfs: number[] = [];
      for (const [term, df] of seg.bm25().terms()) {
        terms.push(term);
        dfs.push(df);
      }
      window.addPart(name, columns.count, terms, dfs);
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

  /** The df of `term` in the window. */
  private df(term: string): number {
    const slot = this.vocabulary.get(term);
    return slot < 0 ? 0 : this.dfOf[slot]!;
  }

  /** Adds a segment of `count` chunks whose terms are `terms` with their dfs `dfs`. */
  private addPart(name: string, count: number, terms: readonly string[], dfs: ArrayLike<number>): void {
    const slots = new Int32Array(terms.length);
    for (let i = 0; i < terms.length; i++) {
      // A slot given again was left at 0 by uncount.
      const slot = this.vocabulary.add(terms[i]!);
      this.dfOf = grown(this.dfOf, slot + 1);
      this.dfOf[slot]! += dfs[i]!;
      slots[i] = slot;
    }
    this.total += count;
    this.parts.push({ name, count, slots, dfs: Int32Array.from(dfs), counted: true });
  }

  private uncount(part: Part): void {
    if (!part.counted) return;
    part.counted = false;
    this.total -= part.count;
    for (let i = 0; i < part.slots.length; i++) {
      const slot = part.slots[i]!;
      this.dfOf[slot]! -= part.dfs[i]!;
      if (this.dfOf[slot]! > 0) continue;
      this.dfOf[slot] = 0;
      this.vocabulary.remove(slot);
    }
  }

  /** Takes the oldest segments out while the rest still cover the window. */
  private evict(): void {
    while (
      this.parts.length > 1 &&
      this.total - (this.parts[0]!.counted ? this.parts[0]!.count : 0) >= this.limit
    ) {
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
    const dfs = new Int32Array(terms.terms.length);
    for (let i = 0; i < dfs.length; i++)
      dfs[i] = postingsDf(terms.lists, i === 0 ? 0 : terms.ends[i - 1]!, terms.ends[i]!);
    this.addPart(name, records.length, terms.terms, dfs);
    const slots = this.parts[this.parts.length - 1]!.slots;
    this.evict();
    const idf = (t: string) => bm25Idf(this.total, this.df(t));
    const top = topTermsOf(
      {
        chunks: records.length,
        termCount: terms.terms.length,
        termAt: (t) => terms.terms[t]!,
        postings: (t, out) =>
          decodePostings(terms.lists, t === 0 ? 0 : terms.ends[t - 1]!, terms.ends[t]!, out),
      },
      SIGNATURE_TERMS,
      // A term no other chunk has cannot tell which chunks are related.
      (_term, t) => {
        const df = this.dfOf[slots[t]!]!;
        return df < 2 ? null : bm25Idf(this.total, df);
      },
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
        edges.push({
          fromIdx: i,
          to: e.to,
          toSegment: e.toSegment,
          toIdx: e.toIdx ?? -1,
          strength: e.strength,
        });
      this.index.add(chunk);
    });
    return { edges, signatures: top };
  }
}
