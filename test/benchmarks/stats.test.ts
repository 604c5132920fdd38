import { describe, expect, it } from 'vitest';
import { median } from '../../benchmarks/stats.ts';

describe('median', () => {
  it('averages the two middle values for an even count (the grep benchmark used to take the upper one)', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([10, 30])).toBe(20);
    expect(median([5, 100, 1, 7, 7, 2])).toBe(6);
  });

  it('takes the middle value for an odd count, sorting numerically', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([100, 9, 20])).toBe(20);
    expect(median([42])).toBe(42);
  });

  it('is 0 for no values and leaves its input unchanged', () => {
    expect(median([])).toBe(0);
    const xs = [3, 1, 2, 0];
    median(xs);
    expect(xs).toEqual([3, 1, 2, 0]);
  });
});
