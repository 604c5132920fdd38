/**
 * Binary search in an ascending table of starts (each document run's first chunk, each BM25 block's first
 * term, each line's first offset): the run, block or line that holds a position or term is the last
 * entry at most it.
 */

/** The last index of `sorted` (ascending) whose entry is at most `value`; 0 when none is, or it is empty. */
export function lastAtMost<T extends number | string>(sorted: ArrayLike<T>, value: T): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sorted[mid]! <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
