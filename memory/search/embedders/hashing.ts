/**
 * A local embedder that needs no model download: feature hashing ("the hashing trick") of word
 * unigrams, word bigrams and character trigrams into a fixed number of signed buckets.
 *
 * It captures lexical overlap, including partial overlap through trigrams (plural forms, typos, code
 * identifiers), but no synonyms. Its value is being deterministic, instant and offline, so vector and
 * hybrid search work out of the box and in tests.
 */
import { RlmError } from '../../../core/errors.ts';
import { FNV_OFFSET, FNV_PRIME, fnv1a } from '../../fnv.ts';
import type { Embedder } from './types.ts';

/** Options of {@link HashingEmbedder}. */
export interface HashingEmbedderOptions {
  /** Vector length, default 384 (the size of common small sentence models, so indexes stay comparable in size). */
  dimensions?: number;
}

const DEFAULT_DIMENSIONS = 384;
const MAX_DIMENSIONS = 65_536;

// Trigrams are many per word and individually weak evidence; weighting them below whole words keeps
// word identity dominant while still letting morphological variants meet.
const UNIGRAM_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.8;
const TRIGRAM_WEIGHT = 0.4;

// Distinct seeds give each feature family its own hash space, so the word "ab" and a trigram never share a key.
const UNIGRAM_SEED = FNV_OFFSET;
const TRIGRAM_SEED = (FNV_OFFSET ^ 0x5bd1e995) >>> 0;
const BIGRAM_SALT = 0x27d4eb2f;
// Virtual code units marking word boundaries for trigrams; they cannot occur inside a word token.
const WORD_START = 0x02;
const WORD_END = 0x03;

const WORD = /[\p{L}\p{N}_]+/gu;

function fnvTrigram(a: number, b: number, c: number): number {
  let h = Math.imul(TRIGRAM_SEED ^ a, FNV_PRIME);
  h = Math.imul(h ^ b, FNV_PRIME);
  h = Math.imul(h ^ c, FNV_PRIME);
  return h >>> 0;
}

/**
 * Murmur3's finaliser. FNV's low bits are poorly mixed for short keys; this spreads every input bit over
 * the bucket index and the sign bit.
 */
function fmix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Feature -> term-frequency table with open addressing over typed arrays. A `Map` keyed by 32-bit
 * hashes was the bottleneck (heap numbers, rehashing); this one is reused across texts and cleared by
 * bumping a generation stamp instead of zeroing.
 */
class FeatureCounts {
  keys = new Uint32Array(1024);
  counts = new Uint32Array(1024);
  stamps = new Uint32Array(1024);
  /** Slots in use this generation, in insertion order, so iteration skips empty slots. */
  used = new Uint32Array(1024);
  size = 0;
  generation = 1;

  reset(): void {
    this.size = 0;
    this.generation++;
    if (this.generation === 0xffffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  add(key: number): void {
    // Keep the load factor under one half so probe chains stay short.
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    const mask = this.keys.length - 1;
    let slot = fmix32(key) & mask;
    for (;;) {
      if (this.stamps[slot] !== this.generation) {
        this.stamps[slot] = this.generation;
        this.keys[slot] = key;
        this.counts[slot] = 1;
        this.used[this.size++] = slot;
        return;
      }
      if (this.keys[slot] === key) {
        this.counts[slot] = (this.counts[slot] ?? 0) + 1;
        return;
      }
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const { keys, counts, used, size } = this;
    const cap = keys.length * 2;
    this.keys = new Uint32Array(cap);
    this.counts = new Uint32Array(cap);
    this.stamps = new Uint32Array(cap);
    this.used = new Uint32Array(cap);
    this.size = 0;
    this.generation = 1;
    const mask = cap - 1;
    for (let i = 0; i < size; i++) {
      const old = used[i] ?? 0;
      const key = keys[old] ?? 0;
      let slot = fmix32(key) & mask;
      while (this.stamps[slot] === 1) slot = (slot + 1) & mask;
      this.stamps[slot] = 1;
      this.keys[slot] = key;
      this.counts[slot] = counts[old] ?? 0;
      this.used[this.size++] = slot;
    }
  }
}

function accumulate(vec: Float64Array, table: FeatureCounts, weight: number): void {
  const dims = vec.length;
  for (let i = 0; i < table.size; i++) {
    const slot = table.used[i] ?? 0;
    const h = fmix32((table.keys[slot] ?? 0) ^ 0x9e3779b9);
    const tf = table.counts[slot] ?? 1;
    // Signed hashing: colliding features cancel in expectation instead of piling up, which keeps
    // inner products unbiased.
    const sign = h & 0x80000000 ? -1 : 1;
    const idx = (h & 0x7fffffff) % dims;
    vec[idx] = (vec[idx] ?? 0) + sign * weight * (1 + Math.log(tf));
  }
}

// Reused by every call: embedding is synchronous, so no two calls ever share them concurrently.
const unigrams = new FeatureCounts();
const bigrams = new FeatureCounts();
const trigrams = new FeatureCounts();

/**
 * Embeds one text. Exported for tests and for callers that embed a single string synchronously.
 * An empty or word-less text yields the zero vector (it is similar to nothing).
 */
export function hashEmbed(text: string, dimensions: number = DEFAULT_DIMENSIONS): number[] {
  const lower = text.toLowerCase();
  unigrams.reset();
  bigrams.reset();
  trigrams.reset();
  let prev = -1;
  WORD.lastIndex = 0;
  for (let m = WORD.exec(lower); m !== null; m = WORD.exec(lower)) {
    const start = m.index;
    const end = start + m[0].length;
    const word = fnv1a(lower, start, end, UNIGRAM_SEED);
    unigrams.add(word);
    if (prev !== -1) {
      bigrams.add((Math.imul(prev, 31) ^ word ^ BIGRAM_SALT) >>> 0);
    }
    prev = word;
    // Trigrams over the word padded with boundary marks: "^ab$" gives "^ab", "ab$".
    let a = WORD_START;
    let b = lower.charCodeAt(start);
    for (let i = start + 1; i <= end; i++) {
      const c = i < end ? lower.charCodeAt(i) : WORD_END;
      trigrams.add(fnvTrigram(a, b, c));
      a = b;
      b = c;
    }
  }
  const vec = new Float64Array(dimensions);
  accumulate(vec, unigrams, UNIGRAM_WEIGHT);
  accumulate(vec, bigrams, BIGRAM_WEIGHT);
  accumulate(vec, trigrams, TRIGRAM_WEIGHT);
  let sumSq = 0;
  for (let i = 0; i < dimensions; i++) {
    const v = vec[i] ?? 0;
    sumSq += v * v;
  }
  const out = new Array<number>(dimensions);
  const scale = sumSq > 0 ? 1 / Math.sqrt(sumSq) : 0;
  for (let i = 0; i < dimensions; i++) {
    out[i] = (vec[i] ?? 0) * scale;
  }
  return out;
}

/** Deterministic, dependency-free {@link Embedder} based on signed feature hashing. */
export class HashingEmbedder implements Embedder {
  readonly name: string;
  readonly dimensions: number;

  constructor(opts: HashingEmbedderOptions = {}) {
    const dims = opts.dimensions ?? DEFAULT_DIMENSIONS;
    if (!Number.isInteger(dims) || dims < 2 || dims > MAX_DIMENSIONS) {
      throw new RlmError(
        'BAD_INPUT',
        `hash embedder dimensions must be an integer in 2..${MAX_DIMENSIONS}, got ${dims}`,
      );
    }
    this.dimensions = dims;
    this.name = `hash:${dims}`;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const out: number[][] = [];
    for (const text of texts) {
      if (signal?.aborted) throw new RlmError('ABORTED', 'embedding aborted');
      out.push(hashEmbed(text, this.dimensions));
    }
    return out;
  }
}
