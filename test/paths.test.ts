import { describe, expect, it } from 'vitest';
import { inside } from '../core/paths.ts';

describe('inside', () => {
  it('compares whole path segments', () => {
    expect(inside('/a/b', '/a')).toBe(true);
    expect(inside('/a', '/a')).toBe(true);
    expect(inside('/ab', '/a')).toBe(false);
    expect(inside('/a/..b', '/a')).toBe(true);
    expect(inside('/', '/a')).toBe(false);
  });
});
