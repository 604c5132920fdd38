import { describe, expect, it } from 'vitest';
import { FNV_OFFSET, fnv1a } from '../../memory/fnv.ts';

describe('fnv1a', () => {
  it('gives the published 32-bit FNV-1a values for ASCII text', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
  });

  it('hashes a range in place and goes on from a seed', () => {
    expect(fnv1a('xxfoobaryy', 2, 8)).toBe(fnv1a('foobar'));
    expect(fnv1a('bar', 0, 3, fnv1a('foo'))).toBe(fnv1a('foobar'));
    expect(fnv1a('foo', 0, 3, FNV_OFFSET)).toBe(fnv1a('foo'));
    // UTF-16 code units, one step each: a lone surrogate hashes like any unit.
    expect(fnv1a('\ud800')).not.toBe(fnv1a(''));
  });
});
