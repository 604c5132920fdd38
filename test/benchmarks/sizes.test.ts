import { describe, expect, it } from 'vitest';
import { parseSize, parseSizes, pickNames } from '../../benchmarks/sizes.ts';
import { sizeLabel } from '../../benchmarks/tasks/text.ts';
import { isRlmError } from '../../core/errors.ts';

describe('sizes', () => {
  it('parses binary k/m suffixes and plain counts, sorted and deduplicated', () => {
    expect(parseSize('8k')).toBe(8192);
    expect(parseSize('1M')).toBe(1_048_576);
    expect(parseSize('10m')).toBe(10 * 1_048_576);
    expect(parseSize('20000')).toBe(20_000);
    expect(parseSizes('32k, 8k,8k')).toEqual([8192, 32768]);
    expect(sizeLabel(8192)).toBe('8k');
    expect(sizeLabel(1_048_576)).toBe('1m');
    expect(sizeLabel(20_000)).toBe('20000');
  });

  it('rejects bad and out-of-range sizes and unknown names with BAD_INPUT', () => {
    for (const bad of ['8q', '', '100', '64m']) {
      expect(() => parseSize(bad)).toThrow();
      try {
        parseSize(bad);
      } catch (err) {
        expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
      }
    }
    expect(() => pickNames(['rlm', 'gpt'], ['rlm', 'direct'], 'method')).toThrow(/unknown method 'gpt'/);
    expect(pickNames(['direct', 'rlm', 'direct'], ['rlm', 'direct'], 'method')).toEqual(['direct', 'rlm']);
  });
});
