import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../core/decimal.ts';

describe('parseDecimal', () => {
  it('reads plain decimal integers, and fractions when asked to', () => {
    expect(parseDecimal('12')).toBe(12);
    expect(parseDecimal('-3')).toBe(-3);
    expect(parseDecimal('0.5', true)).toBe(0.5);
    expect(parseDecimal('.5', true)).toBe(0.5);
    expect(parseDecimal('2.', true)).toBe(2);
  });

  it('refuses what Number() would read as something else', () => {
    for (const text of ['0x10', '0b1', '0o7', '1e1', 'Infinity', ' 1', '', '.', '-', '1_000'])
      expect(parseDecimal(text, true), text).toBeNaN();
    expect(parseDecimal('1.5')).toBeNaN();
  });
});
