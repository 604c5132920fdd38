/**
 * BM25 search over index segments (see segment.ts). Statistics are global: N, the average chunk
 * length and each term's df are summed over every loaded segment, so splitting chunks into segments
 * never changes a score. A search decodes only the postings lists of its query terms.
 */
import { RlmError } from '../../core/errors.ts';
import { type Analyzer, defaultAnalyzer } from './analyzer.ts';
import type { TermHit } from './bm25-file.ts';
import { type FuzzyMatch, FuzzyVocabulary } from './fuzzy.ts';
import { PostingsBuffer } from './postings.ts';
import { type Bm25Segment, checkSegment, SegmentReader } from './segment.ts';
import { TopK } from './topk.ts';

export { type Bm25Segment, buildSegment } from './segment.ts';

/** Term-frequency saturation. */
export const BM25_K1 = 1.2;
/** Length normalisation strength. */
const BM25_B = 0.75;
/** Score factor per edit for a fuzzy (typo) match. */
export const FUZZY_WEIGHT = 0.7;
/** Vocabulary terms a misspelt query term expands to, at most. */
const FUZZY_EXPANSIONS = 5;
/** df values memoised for single-term lookups before the memo is cleared. */
const DF_CACHE_LIMIT = 50_000;
const HAS_DIGIT = /\p{N}/u;
const NUMBER = /^\p{N}+$/u;

export interface Bm25SearchOptions {
  /** Number of results wanted. */
  k: number;
  /** Only ids for which this returns true are returned. Called only for would-be results. */
  filter?: (id: string) => boolean;
  /** Expand query words missing from the vocabulary to near spellings (default true). */
  fuzzy?: boolean;
}

export interface ScoredId {
  id: string;
  score: number;
}

/** A result by position: chunk `idx` of segment `segment`. */
export interface ScoredChunk {
  segment: string;
  idx: number;
  score: number;
}

export interface Bm25IndexOptions {
  /** Analyzer for queries and `topTerms`; segments must have been built with the same rules. */
  analyzer?: Analyzer;
}

/**
 * One segment of an index, whatever holds it: a JSON segment in memory (schema 1 and 2 stores) or a
 * binary file read in pieces (bm25-file.ts). Chunk `i` of the segment is the segment's chunk `i`.
 */
export interface TermSegment {
  readonly chunkCount: number;
  readonly totalLength: number;
  readonly lengths: ArrayLike<number>;
  find(term: string): TermHit | undefined;
  /** Every term with its df, in vocabulary order. */
  terms(): Iterable<[term: string, df: number]>;
  /** Terms within `maxDistance` edits of `term`, not `term` itself. */
  near(term: string, maxDistance: number): FuzzyMatch[];
}

/** A JSON segment as a {@link TermSegment}. */
class JsonTermSegment implements TermSegment {
  readonly reader: SegmentReader;
  readonly totalLength: number;
  private vocabulary: FuzzyVocabulary | undefined;

  constructor(seg: Bm25Segment) {
    this.reader = new SegmentReader(seg);
    let total = 0;
    for (const len of seg.lengths) total += len;
    this.totalLength = total;
  }
  get chunkCount(): number {
    return this.reader.seg.ids.length;
  }
  get lengths(): ArrayLike<number> {
    return this.reader.seg.lengths;
  }
  find(term: string): TermHit | undefined {
    const at = this.reader.find(term);
    if (at < 0) return undefined;
    return { df: this.reader.df(at), postings: (out) => this.reader.postings(at, out) };
  }
  *terms(): Generator<[string, number]> {
    for (let i = 0; i < this.reader.termCount; i++) yield [this.reader.termAt(i), this.reader.df(i)];
  }
  near(term: string, maxDistance: number): FuzzyMatch[] {
    if (!this.vocabulary) {
      this.vocabulary = new FuzzyVocabulary();
      for (let i = 0; i < this.reader.termCount; i++) this.vocabulary.add(this.reader.termAt(i));
    }
    return this.vocabulary.near(term, maxDistance);
  }
}

/** A JSON segment (schema 1 and 2 stores) as a {@link TermSegment}; throws STORE_CORRUPT naming `name` on bad data. */
export function jsonTermSegment(name: string, seg: Bm25Segment): TermSegment {
  checkSegment(name, seg);
  return new JsonTermSegment(seg);
}

interface Loaded {
  name: string;
  seg: TermSegment;
  /** Chunk keys of a JSON segment (what {@link Bm25Index.search} returns); absent for binary files. */
  ids: string[] | undefined;
  /** Position of the segment's first chunk in load order, to break score ties stably. */
  base: number;
  /** Per chunk: k1·(1 − b + b·length/avgdl), for the avgdl in `normsFor`. */
  norms: Float64Array | undefined;
  normsFor: number;
  deleted: Uint8Array | undefined;
  deletedCount: number;
}

/** BM25 over a set of named index segments, with tombstones, filters and typo tolerance. */
export class Bm25Index {
  private readonly segments = new Map<string, Loaded>();
  private readonly analyzer: Analyzer;
  private total = 0;
  private totalLength = 0;
  private deleted: ReadonlySet<string> = new Set();
  /** df of single terms, cleared when segments change. */
  private dfCache = new Map<string, number>();
  private scores = new Float64Array(0);
  private touched = new Int32Array(0);
  private readonly postings = new PostingsBuffer();

  constructor(opts: Bm25IndexOptions = {}) {
    this.analyzer = opts.analyzer ?? defaultAnalyzer();
  }

  /**
   * Adds a segment under `name`, replacing any segment of that name: a JSON segment (checked; throws
   * STORE_CORRUPT on bad data) or any {@link TermSegment}.
   */
  addSegment(name: string, seg: Bm25Segment | TermSegment): void {
    let term: TermSegment;
    let ids: string[] | undefined;
    if (isTermSegment(seg)) term = seg;
    else {
      checkSegment(name, seg);
      term = new JsonTermSegment(seg);
      ids = seg.ids;
    }
    this.removeSegment(name);
    const loaded: Loaded = {
      name,
      seg: term,
      ids,
      base: this.total,
      norms: undefined,
      normsFor: Number.NaN,
      deleted: undefined,
      deletedCount: 0,
    };
    if (this.deleted.size > 0) this.markDeleted(loaded);
    this.segments.set(name, loaded);
    this.total += term.chunkCount;
    this.totalLength += term.totalLength;
    this.dfCache.clear();
  }

  /** Whether a segment of this name is loaded. */
  has(name: string): boolean {
    return this.segments.has(name);
  }

  /** Drops a segment; false if there was none of that name. */
  removeSegment(name: string): boolean {
    const loaded = this.segments.get(name);
    if (!loaded) return false;
    this.segments.delete(name);
    this.total -= loaded.seg.chunkCount;
    this.totalLength -= loaded.seg.totalLength;
    let base = 0;
    for (const s of this.segments.values()) {
      s.base = base;
      base += s.seg.chunkCount;
    }
    this.dfCache.clear();
    return true;
  }

  /**
   * Sets the tombstones: chunk ids (of JSON segments) never returned by `search`. They still count in N,
   * avgdl and df until compaction rewrites their segments, so scores drift slightly while tombstones
   * accumulate.
   */
  setDeleted(ids: ReadonlySet<string>): void {
    this.deleted = ids;
    for (const loaded of this.segments.values()) this.markDeleted(loaded);
  }

  private markDeleted(loaded: Loaded): void {
    loaded.deleted = undefined;
    loaded.deletedCount = 0;
    const ids = loaded.ids;
    if (this.deleted.size === 0 || !ids) return;
    for (let i = 0; i < ids.length; i++) {
      if (!this.deleted.has(ids[i]!)) continue;
      loaded.deleted ??= new Uint8Array(ids.length);
      loaded.deleted[i] = 1;
      loaded.deletedCount++;
    }
  }

  /** Chunks that search can return (loaded, not tombstoned). */
  get chunkCount(): number {
    let n = this.total;
    for (const s of this.segments.values()) n -= s.deletedCount;
    return n;
  }

  /** Distinct terms over all segments (every segment's vocabulary is read). */
  get vocabularySize(): number {
    return this.allDf().size;
  }

  /** Names of the loaded segments, in load order. */
  get segmentNames(): string[] {
    return [...this.segments.keys()];
  }

  /** df of every term over all segments: reads every vocabulary (topTerms, tests). */
  private allDf(): Map<string, number> {
    const all = new Map<string, number>();
    for (const s of this.segments.values())
      for (const [term, df] of s.seg.terms()) all.set(term, (all.get(term) ?? 0) + df);
    return all;
  }

  /** Terms of any segment within `maxDistance` edits of `term`, nearest first, then by term. */
  private near(term: string, maxDistance: number): FuzzyMatch[] {
    const found = new Map<string, number>();
    for (const s of this.segments.values())
      for (const m of s.seg.near(term, maxDistance)) found.set(m.term, m.distance);
    return [...found]
      .map(([t, distance]) => ({ term: t, distance }))
      .sort((a, b) => a.distance - b.distance || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
  }

  /** Chunks containing the index term `term`, over all segments (tombstoned ones included). */
  df(term: string): number {
    let df = this.dfCache.get(term);
    if (df === undefined) {
      df = 0;
      for (const s of this.segments.values()) df += s.seg.find(term)?.df ?? 0;
      if (this.dfCache.size >= DF_CACHE_LIMIT) this.dfCache.clear();
      this.dfCache.set(term, df);
    }
    return df;
  }

  /** BM25 idf of an index term: ln(1 + (N − df + 0.5) / (df + 0.5)), always positive. */
  idf(term: string): number {
    return bm25Idf(this.total, this.df(term));
  }

  /** The index terms of a free-text query with their weights (typo expansion unless `fuzzy` is false). */
  private weightsOf(query: string, fuzzy: boolean | undefined): Map<string, number> {
    return queryWeights(
      this.analyzer.queryGroups(query),
      (t) => this.df(t),
      (fuzzy ?? true) ? (term, d) => this.near(term, d) : undefined,
    );
  }

  /** Best chunks for a free-text query (analysed like the chunks were, in English and French). */
  search(query: string, opts: Bm25SearchOptions): ScoredId[] {
    return this.named(this.rank(this.weightsOf(query, opts.fuzzy), opts.k, this.idFilter(opts.filter)));
  }

  /**
   * Best chunks for a free-text query, by position: `where(segment, idx)` says which may be returned
   * (called only for would-be results).
   */
  searchChunks(
    query: string,
    opts: { k: number; where?: (segment: string, idx: number) => boolean; fuzzy?: boolean },
  ): ScoredChunk[] {
    return this.rank(this.weightsOf(query, opts.fuzzy), opts.k, opts.where);
  }

  /** Best chunks for already analysed index terms (e.g. from {@link topTerms}); no typo expansion. */
  searchTerms(terms: readonly string[], opts: Omit<Bm25SearchOptions, 'fuzzy'>): ScoredId[] {
    const weights = new Map<string, number>();
    for (const t of terms) weights.set(t, (weights.get(t) ?? 0) + 1);
    return this.named(this.rank(weights, opts.k, this.idFilter(opts.filter)));
  }

  private idFilter(filter: ((id: string) => boolean) | undefined) {
    if (!filter) return undefined;
    return (segment: string, idx: number) => filter(this.idOf(segment, idx));
  }

  private idOf(segment: string, idx: number): string {
    return this.segments.get(segment)?.ids?.[idx] ?? `${segment}#${idx}`;
  }

  private named(hits: ScoredChunk[]): ScoredId[] {
    return hits.map((h) => ({ id: this.idOf(h.segment, h.idx), score: h.score }));
  }

  private rank(
    weights: ReadonlyMap<string, number>,
    k: number,
    filter: ((segment: string, idx: number) => boolean) | undefined,
  ): ScoredChunk[] {
    if (!Number.isInteger(k) || k < 0)
      throw new RlmError('BAD_INPUT', `k must be a non-negative integer, got ${k}`);
    const terms: { term: string; weight: number }[] = [];
    for (const [term, w] of weights) {
      if (this.df(term) > 0) terms.push({ term, weight: w * this.idf(term) * (BM25_K1 + 1) });
    }
    if (k === 0 || terms.length === 0) return [];
    const avgdl = this.totalLength / this.total || 1;
    // k may be huge ("everything"); the heap never needs more room than there are chunks.
    const top = new TopK<{ s: Loaded; doc: number }>(Math.min(k, this.total));
    for (const s of this.segments.values()) {
      const n = s.seg.chunkCount;
      const hits: { hit: TermHit; weight: number }[] = [];
      for (const { term, weight } of terms) {
        const hit = s.seg.find(term);
        if (hit) hits.push({ hit, weight });
      }
      if (hits.length === 0) continue;
      if (this.scores.length < n) {
        this.scores = new Float64Array(n);
        this.touched = new Int32Array(n);
      }
      const norms = this.norms(s, avgdl);
      const scores = this.scores;
      const touched = this.touched;
      let count = 0;
      for (const { hit, weight } of hits) {
        const df = hit.postings(this.postings);
        const { docs, tfs } = this.postings;
        for (let i = 0; i < df; i++) {
          const doc = docs[i]!;
          if (doc >= n) break;
          const tf = tfs[i]!;
          const before = scores[doc]!;
          // Every contribution is > 0, so a zero score means "not seen yet in this segment".
          if (before === 0) touched[count++] = doc;
          scores[doc] = before + (weight * tf) / (tf + norms[doc]!);
        }
      }
      for (let i = 0; i < count; i++) {
        const doc = touched[i]!;
        const score = scores[doc]!;
        scores[doc] = 0;
        if (s.deleted?.[doc] === 1) continue;
        const order = s.base + doc;
        if (!top.accepts(score, order)) continue;
        if (filter && !filter(s.name, doc)) continue;
        top.push(score, order, { s, doc });
      }
    }
    return top.sorted().map((e) => ({ segment: e.id.s.name, idx: e.id.doc, score: e.score }));
  }

  private norms(s: Loaded, avgdl: number): Float64Array {
    if (s.norms && s.normsFor === avgdl) return s.norms;
    const lengths = s.seg.lengths;
    const norms = s.norms ?? new Float64Array(lengths.length);
    for (let i = 0; i < lengths.length; i++) {
      norms[i] = BM25_K1 * (1 - BM25_B + (BM25_B * (lengths[i] ?? 0)) / avgdl);
    }
    s.norms = norms;
    s.normsFor = avgdl;
    return norms;
  }

  /**
   * The `n` terms of `text` with the highest tf·idf against this index, best first (ties by term).
   * Terms the index has never seen are skipped: they cannot lead to another chunk.
   */
  topTerms(text: string, n: number): string[] {
    const counts = new Map<string, number>();
    for (const t of this.analyzer.analyze(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
    const scored: { term: string; score: number }[] = [];
    for (const [term, tf] of counts) {
      if (this.df(term) > 0) scored.push({ term, score: tf * this.idf(term) });
    }
    return bestTerms(scored, n);
  }

  /**
   * {@link topTerms} of every chunk of a loaded JSON segment, in chunk order, read from its postings
   * instead of re-analysing the texts.
   */
  segmentTopTerms(name: string, n: number, opts: { minDf?: number; skipNumbers?: boolean } = {}): string[][] {
    const s = this.segments.get(name);
    if (!s || !(s.seg instanceof JsonTermSegment))
      throw new RlmError('NOT_FOUND', `no BM25 segment named ${name}`);
    const reader = s.seg.reader;
    return topTermsOf(
      {
        chunks: s.seg.chunkCount,
        termCount: reader.termCount,
        termAt: (t) => reader.termAt(t),
        postings: (t, out) => reader.postings(t, out),
      },
      n,
      (term) => (opts.minDf && opts.minDf > 1 && this.df(term) < opts.minDf ? null : this.idf(term)),
      opts.skipNumbers === true,
    );
  }
}

/** What {@link topTermsOf} reads of a segment: its terms in vocabulary order and their postings. */
export interface SegmentPostings {
  chunks: number;
  termCount: number;
  termAt(t: number): string;
  postings(t: number, out: PostingsBuffer): number;
}

/**
 * The `n` best terms of every chunk of a segment by tf·idf, in chunk order (ties by term), read from its
 * postings. `idf` (of term `term`, the segment's term `t`) returns null for a term that must not count
 * (too rare to relate chunks).
 */
export function topTermsOf(
  seg: SegmentPostings,
  n: number,
  idf: (term: string, t: number) => number | null,
  skipNumbers: boolean,
): string[][] {
  const chunks = seg.chunks;
  const width = Math.max(0, Math.floor(n));
  const out = new PostingsBuffer();
  // Per chunk, the best `width` (score, term index) seen so far, unordered.
  const scores = new Float64Array(chunks * width);
  const terms = new Int32Array(chunks * width);
  const filled = new Int32Array(chunks);
  for (let t = 0; t < seg.termCount && width > 0; t++) {
    const term = seg.termAt(t);
    // A bare number cannot tell which chunks are related.
    if (skipNumbers && NUMBER.test(term)) continue;
    const weight = idf(term, t);
    if (weight === null) continue;
    const df = seg.postings(t, out);
    const { docs, tfs } = out;
    for (let i = 0; i < df; i++) {
      const doc = docs[i]!;
      if (doc >= chunks) break;
      const score = tfs[i]! * weight;
      const base = doc * width;
      if (filled[doc]! < width) {
        scores[base + filled[doc]!] = score;
        terms[base + filled[doc]!] = t;
        filled[doc]!++;
        continue;
      }
      // Terms come in vocabulary order, so on equal scores the one already kept sorts first.
      let worst = base;
      for (let j = base + 1; j < base + width; j++) {
        if (scores[j]! < scores[worst]! || (scores[j] === scores[worst] && terms[j]! > terms[worst]!))
          worst = j;
      }
      if (score > scores[worst]!) {
        scores[worst] = score;
        terms[worst] = t;
      }
    }
  }
  // Each chunk's kept terms in rank order (score, then term), as bestTerms orders them.
  const order = new Int32Array(width);
  return Array.from({ length: chunks }, (_, doc) => {
    const base = doc * width;
    const m = filled[doc]!;
    for (let j = 0; j < m; j++) {
      let k = j;
      while (k > 0) {
        const a = base + order[k - 1]!;
        const b = base + j;
        const before =
          scores[b]! > scores[a]! ||
          (scores[b] === scores[a] && seg.termAt(terms[b]!) < seg.termAt(terms[a]!));
        if (!before) break;
        order[k] = order[k - 1]!;
        k--;
      }
      order[k] = j;
    }
    const out: string[] = new Array(m);
    for (let j = 0; j < m; j++) out[j] = seg.termAt(terms[base + order[j]!]!);
    return out;
  });
}

function isTermSegment(seg: Bm25Segment | TermSegment): seg is TermSegment {
  return typeof seg === 'object' && seg !== null && typeof (seg as TermSegment).find === 'function';
}

/** BM25 idf of a term found in `df` of `total` chunks: ln(1 + (N − df + 0.5) / (df + 0.5)), always positive. */
export function bm25Idf(total: number, df: number): number {
  return Math.log(1 + (total - df + 0.5) / (df + 0.5));
}

/**
 * The weight of each index term of a query, whatever holds the index: every term of a query word that the
 * index has counts 1 (a term repeated in the query counts again); a word none of whose terms the index has
 * is expanded, when `near` is given, to at most 5 near spellings the index has (up to 1 edit, 2 for terms of
 * 8 letters or more; not for terms under 4 letters or with digits), nearest and then most frequent first,
 * each weighing 0.7 per edit.
 */
function queryWeights(
  groups: readonly (readonly string[])[],
  df: (term: string) => number,
  near?: (term: string, maxDistance: number) => FuzzyMatch[],
): Map<string, number> {
  const weights = new Map<string, number>();
  for (const group of groups) {
    const known = group.filter((t) => df(t) > 0);
    if (known.length > 0) {
      for (const t of known) weights.set(t, (weights.get(t) ?? 0) + 1);
    } else if (near) {
      for (const [t, w] of fuzzyExpansions(group, df, near)) weights.set(t, (weights.get(t) ?? 0) + w);
    }
  }
  return weights;
}

/** Terms a query word needs spelling candidates for (see {@link queryWeights}). */
function fuzzyCandidates(group: readonly string[]): { term: string; maxDistance: number }[] {
  return group
    .filter((term) => term.length >= 4 && !HAS_DIGIT.test(term))
    .map((term) => ({ term, maxDistance: term.length >= 8 ? 2 : 1 }));
}

function fuzzyExpansions(
  group: readonly string[],
  df: (term: string) => number,
  near: (term: string, maxDistance: number) => FuzzyMatch[],
): Map<string, number> {
  const out = new Map<string, number>();
  for (const { term, maxDistance } of fuzzyCandidates(group)) {
    const found = near(term, maxDistance)
      .map((m) => ({ ...m, df: df(m.term) }))
      .filter((m) => m.df > 0)
      .sort((a, b) => a.distance - b.distance || b.df - a.df)
      .slice(0, FUZZY_EXPANSIONS);
    for (const m of found) out.set(m.term, Math.max(out.get(m.term) ?? 0, FUZZY_WEIGHT ** m.distance));
  }
  return out;
}

function bestTerms(scored: { term: string; score: number }[], n: number): string[] {
  scored.sort((a, b) => b.score - a.score || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
  return scored.slice(0, Math.max(0, n)).map((s) => s.term);
}
