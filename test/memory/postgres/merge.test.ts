/**
 * Which index segments a PostgreSQL store merges: eight of one size tier become one (so a memory is
 * merged a few times at most), an ingest step's big segment is never merged, and a segment holding
 * removed chunks is rewritten without them.
 */
import { describe, expect, it } from 'vitest';
import { mergePlan } from '../../../memory/postgres/merge.ts';

const seg = (id: number, chunks: number, dead = 0) => ({ id, chunks, dead });

describe('PostgreSQL index merge plan', () => {
  it('merges eight segments of one tier, and no fewer', () => {
    const ones = Array.from({ length: 7 }, (_, i) => seg(i + 1, 1));
    expect(mergePlan(ones)).toEqual([]);
    expect(mergePlan([...ones, seg(8, 5)])).toEqual([[1, 2, 3, 4, 5, 6, 7, 8]]);
    // 8-63 chunks is the next tier: a segment of 9 does not join seven of 1.
    expect(mergePlan([...ones, seg(8, 9)])).toEqual([]);
  });

  it('never merges a segment of 4096 live chunks or more, but rewrites one with dead chunks', () => {
    const big = Array.from({ length: 9 }, (_, i) => seg(i + 1, 5000));
    expect(mergePlan(big)).toEqual([]);
    expect(mergePlan([...big, seg(10, 5000, 3)])).toEqual([[10]]);
  });

  it('counts a segment by its live chunks, and rewrites those with dead ones outside a merge', () => {
    const plan = mergePlan([...Array.from({ length: 8 }, (_, i) => seg(i + 1, 100, 95)), seg(20, 600, 1)]);
    expect(plan).toEqual([[1, 2, 3, 4, 5, 6, 7, 8], [20]]);
  });
});
