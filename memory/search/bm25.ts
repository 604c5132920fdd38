/**
 * BM25 search over index segments (see segment.ts). Statistics are global: N, the average chunk
 * length and each term's df are summed over every loaded segment, so splitting chunks into segments
 * never changes a score. A search decodes only the postings lists of its query terms.
 */
import { RlmError } from '../../core/errors.ts';
import { type Analyzer, defaultAnalyzer } from './analyzer.ts';
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

export interface Bm25IndexOptions {
  /** Analyzer for queries and `topTerms`; segments must have been built with the same rules. */
  analyzer?: Analyzer;
}

interface Loaded {
  reader: SegmentReader;
  ids: string[];
  totalLength: number;
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
  /** df of single terms looked up segment by segment (search), cleared when segments change. */
  private dfCache = new Map<string, number>();
  /** df of every term, built on the first bulk need (topTerms, typos) and then kept up to date. */
  private dfAll: Map<string, number> | undefined;
  private vocabulary: FuzzyVocabulary | undefined;
  private scores = new Float64Array(0);
  private touched = new Int32Array(0);
  private readonly postings = new PostingsBuffer();

  constructor(opts: Bm25IndexOptions = {}) {
    this.analyzer = opts.analyzer ?? defaultAnalyzer();
  }

  /** Adds a segment under `name`, replacing any segment of that name. Throws STORE_CORRUPT on bad data. */
  addSegment(name: string, seg: Bm25Segment): void {
    checkSegment(name, seg);
    this.removeSegment(name);
    let totalLength = 0;
    for (const len of seg.lengths) totalLength += len;
    const loaded: Loaded = {
      reader: new SegmentReader(seg),
      ids: seg.ids,
      totalLength,
      base: this.total,
      norms: undefined,
      normsFor: Number.NaN,
      deleted: undefined,
      deletedCount: 0,
    };
    if (this.deleted.size > 0) this.markDeleted(loaded);
    this.segments.set(name, loaded);
    this.total += seg.ids.length;
    this.totalLength += totalLength;
    this.dfCache.clear();
    if (this.dfAll) this.countTerms(loaded.reader, 1);
  }

  /** Drops a segment; false if there was none of that name. */
  removeSegment(name: string): boolean {
    const loaded = this.segments.get(name);
    if (!loaded) return false;
    this.segments.delete(name);
    this.total -= loaded.ids.length;
    this.totalLength -= loaded.totalLength;
    let base = 0;
    for (const s of this.segments.values()) {
      s.base = base;
      base += s.ids.length;
    }
    this.dfCache.clear();
    if (this.dfAll) this.countTerms(loaded.reader, -1);
    // Terms may have vanished; the typo lookup is rebuilt when next needed.
    this.vocabulary = undefined;
    return true;
  }

  /** Adds (sign 1) or removes (sign -1) a segment's dfs in {@link dfAll} and new terms to the typo lookup. */
  private countTerms(reader: SegmentReader, sign: 1 | -1): void {
    const all = this.dfAll!;
    for (let i = 0; i < reader.termCount; i++) {
      const term = reader.termAt(i);
      const before = all.get(term) ?? 0;
      const after = before + sign * reader.df(i);
      if (after > 0) all.set(term, after);
      else all.delete(term);
      if (before === 0 && after > 0) this.vocabulary?.add(term);
    }
  }

  /**
   * Sets the tombstones: chunk ids never returned by `search`. They still count in N, avgdl and df
   * until compaction rewrites their segments, so scores drift slightly while tombstones accumulate.
   */
  setDeleted(ids: ReadonlySet<string>): void {
    this.deleted = ids;
    for (const loaded of this.segments.values()) this.markDeleted(loaded);
  }

  private markDeleted(loaded: Loaded): void {
    loaded.deleted = undefined;
    loaded.deletedCount = 0;
    if (this.deleted.size === 0) return;
    const ids = loaded.ids;
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

  /** Distinct terms over all segments (counted on first use, then kept up to date). */
  get vocabularySize(): number {
    return this.allDf().size;
  }

  /** Names of the loaded segments, in load order. */
  get segmentNames(): string[] {
    return [...this.segments.keys()];
  }

  private allDf(): Map<string, number> {
    if (!this.dfAll) {
      this.dfAll = new Map();
      for (const s of this.segments.values()) this.countTerms(s.reader, 1);
    }
    return this.dfAll;
  }

  private vocab(): FuzzyVocabulary {
    if (!this.vocabulary) {
      const v = new FuzzyVocabulary();
      for (const term of this.allDf().keys()) v.add(term);
      this.vocabulary = v;
    }
    return this.vocabulary;
  }

  /** Chunks containing the index term `term`, over all segments (tombstoned ones included). */
  df(term: string): number {
    if (this.dfAll) return this.dfAll.get(term) ?? 0;
    let df = this.dfCache.get(term);
    if (df === undefined) {
      df = 0;
      for (const s of this.segments.values()) {
        const i = s.reader.find(term);
        if (i >= 0) df += s.reader.df(i);
      }
      if (this.dfCache.size >= DF_CACHE_LIMIT) this.dfCache.clear();
      this.dfCache.set(term, df);
    }
    return df;
  }

  /** BM25 idf of an index term: ln(1 + (N − df + 0.5) / (df + 0.5)), always positive. */
  idf(term: string): number {
    return bm25Idf(this.total, this.df(term));
  }

  /** Best chunks for a free-text query (analysed like the chunks were, in English and French). */
  search(query: string, opts: Bm25SearchOptions): ScoredId[] {
    const weights = queryWeights(
      this.analyzer.queryGroups(query),
      (t) => this.df(t),
      (opts.fuzzy ?? true) ? (term, d) => this.vocab().near(term, d) : undefined,
    );
    return this.rank(weights, opts);
  }

  /** Best chunks for already analysed index terms (e.g. from {@link topTerms}); no typo expansion. */
  searchTerms(terms: readonly string[], opts: Omit<Bm25SearchOptions, 'fuzzy'>): ScoredId[] {
    const weights = new Map<string, number>();
    for (const t of terms) weights.set(t, (weights.get(t) ?? 0) + 1);
    return this.rank(weights, opts);
  }

  private rank(weights: ReadonlyMap<string, number>, opts: Omit<Bm25SearchOptions, 'fuzzy'>): ScoredId[] {
    const { k, filter } = opts;
    if (!Number.isInteger(k) || k < 0)
      throw new RlmError('BAD_INPUT', `k must be a non-negative integer, got ${k}`);
    const terms: { term: string; weight: number }[] = [];
    for (const [term, w] of weights) {
      if (this.df(term) > 0) terms.push({ term, weight: w * this.idf(term) * (BM25_K1 + 1) });
    }
    if (k === 0 || terms.length === 0) return [];
    const avgdl = this.totalLength / this.total || 1;
    // k may be huge ("everything"); the heap never needs more room than there are chunks.
    const top = new TopK(Math.min(k, this.total));
    for (const s of this.segments.values()) {
      const n = s.ids.length;
      if (this.scores.length < n) {
        this.scores = new Float64Array(n);
        this.touched = new Int32Array(n);
      }
      const norms = this.norms(s, avgdl);
      const scores = this.scores;
      const touched = this.touched;
      let count = 0;
      for (const { term, weight } of terms) {
        const at = s.reader.find(term);
        if (at < 0) continue;
        const df = s.reader.postings(at, this.postings);
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
        const id = s.ids[doc]!;
        if (filter && !filter(id)) continue;
        top.push(score, order, id);
      }
    }
    return top.sorted();
  }

  private norms(s: Loaded, avgdl: number): Float64Array {
    if (s.norms && s.normsFor === avgdl) return s.norms;
    const lengths = s.reader.seg.lengths;
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
    const all = this.allDf();
    const counts = new Map<string, number>();
    for (const t of this.analyzer.analyze(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
    const scored: { term: string; score: number }[] = [];
    for (const [term, tf] of counts) {
      if (all.has(term)) scored.push({ term, score: tf * this.idf(term) });
    }
    return bestTerms(scored, n);
  }

  /**
   * {@link topTerms} of every chunk of a loaded segment, in chunk order, read from its postings
   * instead of re-analysing the texts (much cheaper right after an ingest).
   */
  segmentTopTerms(name: string, n: number, opts: { minDf?: number; skipNumbers?: boolean } = {}): string[][] {
    const s = this.segments.get(name);
    if (!s) throw new RlmError('NOT_FOUND', `no BM25 segment named ${name}`);
    const minDf = opts.minDf ?? 1;
    this.allDf();
    const chunks = s.ids.length;
    const width = Math.max(0, Math.floor(n));
    // Per chunk, the best `width` (score, term index) seen so far, unordered.
    const scores = new Float64Array(chunks * width);
    const terms = new Int32Array(chunks * width);
    const filled = new Int32Array(chunks);
    for (let t = 0; t < s.reader.termCount && width > 0; t++) {
      const term = s.reader.termAt(t);
      // A term no other chunk has, or a bare number, cannot tell which chunks are related.
      if (minDf > 1 && this.df(term) < minDf) continue;
      if (opts.skipNumbers && NUMBER.test(term)) continue;
      const idf = this.idf(term);
      const df = s.reader.postings(t, this.postings);
      const { docs, tfs } = this.postings;
      for (let i = 0; i < df; i++) {
        const doc = docs[i]!;
        if (doc >= chunks) break;
        const score = tfs[i]! * idf;
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
    return s.ids.map((_, doc) => {
      const kept: { term: string; score: number }[] = [];
      for (let j = doc * width; j < doc * width + filled[doc]!; j++) {
        kept.push({ term: s.reader.termAt(terms[j]!), score: scores[j]! });
      }
      return bestTerms(kept, width);
    });
  }
}

/** BM25 idf of a term found in `df` of `total` chunks: ln(1 + (N − df + 0.5) / (df + 0.5)), always positive. */
function bm25Idf(total: number, df: number): number {
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
