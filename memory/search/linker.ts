/**
 * Computes related_to links incrementally. Each chunk gets a signature: its few highest tf-idf terms.
 * A new chunk is compared only with chunks that share a signature term (an inverted map of signatures),
 * so linking costs a bounded number of lookups per chunk instead of a scan of the store.
 */
export const SIGNATURE_TERMS = 8;
/** Links kept per new chunk. */
const RELATED_FANOUT = 5;
/** Signature terms shared by more chunks than this say little about relatedness; skip them. */
const COMMON_TERM_LIMIT = 400;
/** Per shared term, only the most recent chunks are compared: bounds the work per new chunk. */
const SCAN_PER_TERM = 48;
/** Minimum shared signature terms for a link. */
const MIN_SHARED = 2;

export interface SignedChunk {
  /** Stable chunk id (doc:ordinal). */
  id: string;
  segment: string;
  document: string;
  ordinal: number;
  terms: string[];
  /** Position of the chunk in its segment, when the caller keeps it (carried to {@link RelatedEdge.toIdx}). */
  idx?: number;
}

export interface RelatedEdge {
  from: string;
  to: string;
  toSegment: string;
  /** Position of the `to` chunk in its segment, when known. */
  toIdx?: number;
  strength: number;
}

/**
 * The chunks (positions in {@link SignatureIndex}) whose signature has `term`; those before `start` were
 * dropped with the oldest chunks.
 */
interface TermChunks {
  term: string;
  chunks: number[];
  start: number;
}

/** The terms of a chunk once added to a {@link SignatureIndex} (never changed). */
const NO_TERMS: string[] = [];

/** The inverted map term → chunks whose signature has it, grown as chunks are linked. */
export class SignatureIndex {
  private readonly byTerm = new Map<string, TermChunks>();
  /**
   * The chunks added, by position, as columns: no object and no id string per chunk (an id is
   * `document:ordinal`; one that is not is kept in `ids`). An ingest holds tens of thousands of chunks
   * here; objects with their ids were most of its link window's memory.
   */
  private readonly docs: string[] = [];
  private readonly segs: string[] = [];
  private readonly ords: number[] = [];
  /** Position in the segment, or -1 when the caller did not give one. */
  private readonly idxs: number[] = [];
  /** Ids that are not `document:ordinal` (none from the stores' own records), by position. */
  private ids = new Map<number, string>();
  /** Chunks before this position were dropped ({@link dropOldest}). */
  private base = 0;
  private scores = new Float64Array(1024);
  private shared = new Uint8Array(1024);
  private touched = new Int32Array(1024);

  /**
   * Adds a chunk. Its signature's terms are replaced by the index's own copies of equal strings: each
   * chunk's signature otherwise kept its own copy of common words, the largest part of the memory an
   * ingest keeps from one segment to the next.
   */
  add(chunk: SignedChunk): void {
    const n = this.docs.length;
    this.docs.push(chunk.document);
    this.segs.push(chunk.segment);
    this.ords.push(chunk.ordinal);
    this.idxs.push(chunk.idx ?? -1);
    if (chunk.id !== `${chunk.document}:${chunk.ordinal}`) this.ids.set(n, chunk.id);
    const terms = chunk.terms;
    for (let i = 0; i < terms.length; i++) {
      const entry = this.byTerm.get(terms[i]!);
      if (entry) {
        entry.chunks.push(n);
        terms[i] = entry.term;
      } else this.byTerm.set(terms[i]!, { term: terms[i]!, chunks: [n], start: 0 });
    }
  }

  get size(): number {
    return this.docs.length - this.base;
  }

  /** The chunk at position `n` (without its terms). */
  private chunkAt(n: number): SignedChunk {
    const document = this.docs[n]!;
    const ordinal = this.ords[n]!;
    const idx = this.idxs[n]!;
    const id = this.ids.get(n) ?? `${document}:${ordinal}`;
    const chunk: SignedChunk = { id, segment: this.segs[n]!, document, ordinal, terms: NO_TERMS };
    if (idx >= 0) chunk.idx = idx;
    return chunk;
  }

  /**
   * Drops the `n` chunks added first: they are no longer compared nor counted, as if never added. Lets a
   * caller keep a bounded window of the most recent chunks.
   */
  dropOldest(n: number): void {
    this.base = Math.min(this.docs.length, this.base + n);
    // Compacted once a third is dropped chunks: a window holds at most half its size more than it needs.
    // In place: an index built beside the old one doubled its memory for that moment.
    if (this.base < 4096 || this.base * 3 < this.docs.length) return;
    const base = this.base;
    for (const [term, entry] of this.byTerm) {
      const list = entry.chunks;
      let kept = 0;
      for (let i = entry.start; i < list.length; i++) if (list[i]! >= base) list[kept++] = list[i]! - base;
      if (kept === 0) this.byTerm.delete(term);
      else {
        list.length = kept;
        entry.start = 0;
      }
    }
    for (const column of [this.docs, this.segs, this.ords, this.idxs]) {
      column.copyWithin(0, base);
      column.length -= base;
    }
    const ids = new Map<number, string>();
    for (const [p, id] of this.ids) if (p >= base) ids.set(p - base, id);
    this.ids = ids;
    this.base = 0;
  }

  /**
   * Best related chunks for `chunk` among those already added (not itself, not its direct neighbours,
   * which `follows` already links). `idf` weighs shared terms.
   */
  relate(
    chunk: SignedChunk,
    idf: (term: string) => number,
    alive: (c: SignedChunk) => boolean,
  ): RelatedEdge[] {
    if (this.scores.length < this.docs.length) {
      const size = Math.max(this.docs.length, this.scores.length * 2);
      this.scores = new Float64Array(size);
      this.shared = new Uint8Array(size);
    }
    // Reused from call to call: a chunk touches at most SCAN_PER_TERM others per signature term.
    const need = chunk.terms.length * SCAN_PER_TERM;
    if (this.touched.length < need) this.touched = new Int32Array(Math.max(need, this.touched.length * 2));
    const touched = this.touched;
    let count = 0;
    let total = 0;
    for (const t of chunk.terms) {
      const w = idf(t);
      total += w;
      const entry = this.byTerm.get(t);
      if (!entry) continue;
      const list = entry.chunks;
      while (entry.start < list.length && list[entry.start]! < this.base) entry.start++;
      if (list.length - entry.start > COMMON_TERM_LIMIT) continue;
      for (let i = list.length - 1, seen = 0; i >= entry.start && seen < SCAN_PER_TERM; i--, seen++) {
        const other = list[i]!;
        if (this.shared[other] === 0) touched[count++] = other;
        this.shared[other]!++;
        this.scores[other]! += w;
      }
    }
    const out: { other: SignedChunk; score: number }[] = [];
    for (let k = 0; k < count; k++) {
      const n = touched[k]!;
      const score = this.scores[n]!;
      const shared = this.shared[n]!;
      this.scores[n] = 0;
      this.shared[n] = 0;
      if (shared < MIN_SHARED) continue;
      const other = this.chunkAt(n);
      if (other.id === chunk.id) continue;
      if (other.document === chunk.document && Math.abs(other.ordinal - chunk.ordinal) <= 1) continue;
      if (!alive(other)) continue;
      out.push({ other, score });
    }
    out.sort((a, b) => b.score - a.score || (a.other.id < b.other.id ? -1 : 1));
    return out.slice(0, RELATED_FANOUT).map(({ other, score }) => ({
      from: chunk.id,
      to: other.id,
      toSegment: other.segment,
      ...(other.idx !== undefined ? { toIdx: other.idx } : {}),
      strength: total > 0 ? Math.round((score / total) * 1000) / 1000 : 0,
    }));
  }
}

/** The part of a BM25 index the linker needs (see memory/search/bm25.ts). */
export interface TermStats {
  idf(term: string): number;
  segmentTopTerms(segment: string, n: number, opts?: { minDf?: number; skipNumbers?: boolean }): string[][];
}

/**
 * The links file of a new segment whose BM25 segment is already in `index`: each chunk's signature, and
 * related_to edges to chunks already in `signatures` (which then also learns the new chunks).
 */
export function linkSegment(
  index: TermStats,
  signatures: SignatureIndex,
  segment: string,
  chunks: { id: string; document: string; ordinal: number }[],
  alive: (c: SignedChunk) => boolean,
): { related: [string, string, string, number][]; signatures: string[][] } {
  const related: [string, string, string, number][] = [];
  const sigs: string[][] = [];
  const top = index.segmentTopTerms(segment, SIGNATURE_TERMS, { minDf: 2, skipNumbers: true });
  const idf = (t: string) => index.idf(t);
  for (const [i, c] of chunks.entries()) {
    const terms = top[i] ?? [];
    const chunk: SignedChunk = { id: c.id, segment, document: c.document, ordinal: c.ordinal, terms };
    for (const e of signatures.relate(chunk, idf, alive))
      related.push([e.from, e.to, e.toSegment, e.strength]);
    signatures.add(chunk);
    sigs.push(terms);
  }
  return { related, signatures: sigs };
}
