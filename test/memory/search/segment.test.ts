import { describe, expect, it } from 'vitest';
import { PostingsBuffer } from '../../../memory/search/postings.ts';
import { buildSegment, SegmentReader } from '../../../memory/search/segment.ts';

describe('buildSegment', () => {
  const seg = buildSegment([
    { id: 'a', text: 'Zebra apple apple' },
    { id: 'b', text: 'The apple of my eye' },
    { id: 'c', text: '' },
  ]);

  it('records ids, analysed lengths and a sorted vocabulary', () => {
    expect(seg.version).toBe(1);
    expect(seg.ids).toEqual(['a', 'b', 'c']);
    expect(seg.lengths).toEqual([3, 2, 0]);
    expect(seg.terms.vocabulary.split('\n')).toEqual(['appl', 'eye', 'zebra']);
  });

  it('is plain JSON data', () => {
    expect(JSON.parse(JSON.stringify(seg))).toEqual(seg);
  });

  it('builds an empty segment for no chunks', () => {
    const empty = buildSegment([]);
    expect(empty).toEqual({
      version: 1,
      analyzer: 2,
      ids: [],
      lengths: [],
      terms: { vocabulary: '', postings: '' },
    });
    expect(new SegmentReader(empty).termCount).toBe(0);
    expect(new SegmentReader(empty).find('x')).toBe(-1);
  });
});

describe('SegmentReader', () => {
  const seg = buildSegment([
    { id: 'a', text: 'Zebra apple apple' },
    { id: 'b', text: 'The apple of my eye' },
  ]);
  const reader = new SegmentReader(seg);

  it('finds terms by binary search, and only whole terms', () => {
    expect(reader.termCount).toBe(3);
    expect(reader.find('appl')).toBe(0);
    expect(reader.find('zebra')).toBe(2);
    expect(reader.termAt(1)).toBe('eye');
    for (const t of ['app', 'apple', 'a', 'zzz', '', 'constructor']) expect(reader.find(t)).toBe(-1);
  });

  it('decodes a term’s postings with term frequencies', () => {
    const out = new PostingsBuffer();
    const n = reader.postings(reader.find('appl'), out);
    expect(n).toBe(2);
    expect([...out.docs.subarray(0, n)]).toEqual([0, 1]);
    expect([...out.tfs.subarray(0, n)]).toEqual([2, 1]);
    expect(reader.df(reader.find('zebra'))).toBe(1);
  });
});
