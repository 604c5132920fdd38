import { describe, expect, it } from 'vitest';
import { compareDocumentIds, parseChunkId, partLinks, touchesDocument } from '../../memory/graph-rules.ts';

describe('chunk ids', () => {
  it('parses DOCUMENT:N with N a plain decimal ordinal', () => {
    expect(parseChunkId('notes-md-1a2b3c4d:0')).toEqual({ document: 'notes-md-1a2b3c4d', ordinal: 0 });
    expect(parseChunkId('notes-md-1a2b3c4d:12')).toEqual({ document: 'notes-md-1a2b3c4d', ordinal: 12 });
    expect(parseChunkId('a:b:3')).toEqual({ document: 'a:b', ordinal: 3 });
    expect(parseChunkId('doc:2147483647')).toEqual({ document: 'doc', ordinal: 2147483647 });
  });

  it('refuses every other spelling of an ordinal, so one chunk has one id', () => {
    const spellings = ['', ' 1', '1 ', '+1', '-1', '-0', '01', '00', '1.0', '1.', '.5', '1e0', '0x1', '0b1'];
    for (const ordinal of [...spellings, '0o1', 'Infinity', 'NaN', '１', '2147483648', '1'.repeat(30)]) {
      expect(parseChunkId(`doc:${ordinal}`), JSON.stringify(ordinal)).toBeNull();
    }
    expect(parseChunkId('doc')).toBeNull();
    expect(parseChunkId(':1')).toBeNull();
  });

  it('ties a hand-made link to the documents at its ends, whatever its ordinals look like', () => {
    const link = { from: 'a:1.0', to: 'b:0', type: 'supports' as const, strength: 1 };
    expect(touchesDocument(link, new Set(['a']))).toBe(true);
    expect(touchesDocument(link, new Set(['b']))).toBe(true);
    expect(touchesDocument(link, new Set(['c']))).toBe(false);
  });
});

describe('files stored in parts', () => {
  it('orders a file\u2019s parts after its first part by number', () => {
    const ids = ['f.p10', 'f.p2', 'e', 'f', 'f.p9', 'g.p2', 'g'];
    expect(ids.sort(compareDocumentIds)).toEqual(['e', 'f', 'f.p2', 'f.p9', 'f.p10', 'g', 'g.p2']);
  });

  it('links the parts that follow a file\u2019s first part without a gap, and no other', () => {
    const links = partLinks(['a', 'a.p2', 'a.p3', 'a.p5', 'b.p2', 'b.p3', 'c']);
    expect(Object.fromEntries(links)).toEqual({
      a: { nextPart: 'a.p2' },
      'a.p2': { prevPart: 'a', nextPart: 'a.p3' },
      'a.p3': { prevPart: 'a.p2' },
    });
  });
});
