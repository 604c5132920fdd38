/** The binary search the store's files and the sandbox's position mapping look starts up with. */
import { describe, expect, it } from 'vitest';
import { lastAtMost } from '../../core/last-at-most.ts';

describe('lastAtMost', () => {
  it('finds the last entry at most the value, in numbers, typed arrays and strings', () => {
    const firsts = [0, 3, 3, 7, 12];
    expect([0, 2, 3, 6, 7, 11, 12, 99].map((v) => lastAtMost(firsts, v))).toEqual([0, 0, 2, 2, 3, 3, 4, 4]);
    expect(lastAtMost(Uint32Array.from(firsts), 8)).toBe(3);
    expect(lastAtMost(['apple', 'kiwi', 'pear'], 'melon')).toBe(1);
  });

  it('answers 0 when no entry is at most the value, or the table is empty: the caller checks', () => {
    expect(lastAtMost([5, 9], 1)).toBe(0);
    expect(lastAtMost([], 1)).toBe(0);
  });
});
