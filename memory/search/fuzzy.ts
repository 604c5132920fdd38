/**
 * Typo tolerance: finds vocabulary terms within a small Damerau-Levenshtein distance of a term.
 *
 * Terms are bucketed by length and each carries a 32-bit mask of the letters it contains. One edit
 * changes at most two bits of that mask (a substitution drops a letter and adds one), so a candidate
 * whose mask differs from the query's in more than 2·d bits cannot be within d edits and is skipped
 * with two integer operations; the dynamic-programming distance runs only on the few that remain.
 */

/** A vocabulary term near a query term. */
export interface FuzzyMatch {
  term: string;
  distance: number;
}

/** A 32-bit mask of the letters (and digit, other classes) in `s`: one edit changes at most two bits. */
export function letterMask(s: string): number {
  let mask = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let bit: number;
    if (c >= 97 && c <= 122) bit = c - 97;
    else if (c >= 48 && c <= 57) bit = 26;
    else bit = 27 + (c % 5);
    mask |= 1 << bit;
  }
  return mask;
}

/** Number of bits set in a 32-bit integer. */
export function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

let rows = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * Optimal-string-alignment Damerau-Levenshtein distance between `a` and `b` (insertions, deletions,
 * substitutions and swaps of adjacent letters), or `max + 1` as soon as it is known to exceed `max`.
 */
export function damerauLevenshtein(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (m + 1 > rows[0]!.length) rows = [new Int32Array(m + 1), new Int32Array(m + 1), new Int32Array(m + 1)];
  let before = rows[0]!;
  let prev = rows[1]!;
  let cur = rows[2]!;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      const cost = ca === cb ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        d = Math.min(d, before[j - 2]! + 1);
      }
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    const t = before;
    before = prev;
    prev = cur;
    cur = t;
  }
  return Math.min(prev[m]!, max + 1);
}

/** Terms bucketed by length, with letter masks, for {@link FuzzyVocabulary.near}. */
export class FuzzyVocabulary {
  private readonly buckets = new Map<number, { terms: string[]; masks: number[] }>();

  /** Adds a term; the caller keeps terms distinct (a repeat would be reported twice). */
  add(term: string): void {
    let bucket = this.buckets.get(term.length);
    if (!bucket) {
      bucket = { terms: [], masks: [] };
      this.buckets.set(term.length, bucket);
    }
    bucket.terms.push(term);
    bucket.masks.push(letterMask(term));
  }

  /** Terms other than `term` itself within `maxDistance` edits of it, nearest first. */
  near(term: string, maxDistance: number): FuzzyMatch[] {
    const out: FuzzyMatch[] = [];
    const mask = letterMask(term);
    const maxBits = 2 * maxDistance;
    for (let len = term.length - maxDistance; len <= term.length + maxDistance; len++) {
      const bucket = this.buckets.get(len);
      if (!bucket) continue;
      const { terms, masks } = bucket;
      for (let i = 0; i < terms.length; i++) {
        if (popcount(mask ^ masks[i]!) > maxBits) continue;
        const candidate = terms[i]!;
        if (candidate === term) continue;
        const distance = damerauLevenshtein(term, candidate, maxDistance);
        if (distance <= maxDistance) out.push({ term: candidate, distance });
      }
    }
    out.sort((a, b) => a.distance - b.distance || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
    return out;
  }
}
