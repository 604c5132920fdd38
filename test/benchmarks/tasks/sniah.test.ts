import { describe, expect, it } from 'vitest';
import { generateSniah } from '../../../benchmarks/tasks/sniah.ts';
import { countTokens } from '../../../memory/ingest/tokens.ts';

describe('sniah generator', () => {
  it('is deterministic for a seed and differs across seeds and indexes', () => {
    const a = generateSniah({ size: 8192, seed: 1, index: 0 });
    const b = generateSniah({ size: 8192, seed: 1, index: 0 });
    expect(b.context).toBe(a.context);
    expect(b.gold).toEqual(a.gold);
    const c = generateSniah({ size: 8192, seed: 2, index: 0 });
    const d = generateSniah({ size: 8192, seed: 1, index: 1 });
    expect(c.context).not.toBe(a.context);
    expect(d.context).not.toBe(a.context);
  });

  it('hides exactly one needle whose number is the answer, among short lines of words', () => {
    for (const index of [0, 1, 2, 3]) {
      const t = generateSniah({ size: 8192, seed: 9, index });
      const text = t.context as string;
      const needles = [...text.matchAll(/The magic number is (\d+)/g)];
      expect(needles).toHaveLength(1);
      expect(needles[0]![1]).toMatch(/^\d{7}$/);
      expect(t.gold).toEqual({ kind: 'exact', answer: needles[0]![1] });
      const lines = text.split('\n');
      expect(lines[t.meta.needleLine]).toBe(`The magic number is ${needles[0]![1]}`);
      const others = lines.filter((_, i) => i !== t.meta.needleLine);
      expect(others.every((l) => /^[a-z]+( [a-z]+){2,7}$/.test(l))).toBe(true);
      // The needle sits at the drawn depth (in tokens, so roughly in lines).
      expect(Math.abs(t.meta.needleLine / lines.length - t.meta.depth)).toBeLessThan(0.05);
    }
  });

  it('hits the token target and reports the measured size', () => {
    for (const size of [8192, 32768]) {
      const t = generateSniah({ size, seed: 3, index: 0 });
      expect(t.contextTokens).toBe(countTokens(t.context as string));
      expect(Math.abs(t.contextTokens - size) / size).toBeLessThan(0.01);
    }
  });
});
