import { describe, expect, it } from 'vitest';
import { decodeSegmentText, readTextColumn, segmentTextPieces } from '../../../memory/grep/segment-text.ts';

const segmentText = (...args: Parameters<typeof segmentTextPieces>) =>
  [...segmentTextPieces(...args)].join('');

const docs = [
  { id: 'notes-md-1', first: 0, count: 2 },
  { id: 'café-md-2', first: 2, count: 2 },
];
const texts = ['# Notes\nplain ascii\n', '', 'crème brûlée 🍮\n', 'naïve\tend'];

describe('segment text column', () => {
  it('gives back every chunk text, multi-byte characters and empty chunks included', () => {
    const bytes = Buffer.from(segmentText('seg-000001', docs, texts));
    expect(decodeSegmentText(bytes, 'seg-000001', docs)).toEqual(texts);
    const column = readTextColumn(bytes, bytes.length, 'seg-000001')!;
    expect(column.docs).toEqual(docs);
    expect(bytes.toString('utf8', column.at[2], column.at[3])).toBe('crème brûlée 🍮\n');
  });

  it('reads a file held at the start of a larger, reused buffer', () => {
    const file = Buffer.from(segmentText('seg-000002', docs, texts));
    const reused = Buffer.alloc(file.length + 100, 'x');
    file.copy(reused);
    const column = readTextColumn(reused, file.length, 'seg-000002')!;
    expect(reused.toString('utf8', column.at[3], column.at[4])).toBe('naïve\tend');
  });

  it('writes a lone surrogate as U+FFFD and still adds up', () => {
    const bytes = Buffer.from(
      segmentText('seg-000001', [{ id: 'd', first: 0, count: 2 }], ['a\ud800b', 'c']),
    );
    expect(decodeSegmentText(bytes, 'seg-000001', [{ id: 'd', first: 0, count: 2 }])).toEqual([
      'a\ufffdb',
      'c',
    ]);
  });

  it('is refused (null) when it is for another segment, torn, edited or not a text column', () => {
    const good = segmentText('seg-000001', docs, texts);
    const refused = (s: string | Buffer, segment = 'seg-000001') =>
      decodeSegmentText(Buffer.isBuffer(s) ? s : Buffer.from(s), segment, docs);
    expect(refused(good, 'seg-000009')).toBeNull();
    expect(refused(Buffer.from(good).subarray(0, Buffer.byteLength(good) - 3))).toBeNull();
    expect(refused(`${good}extra`)).toBeNull();
    expect(refused(good.replace('"version":1', '"version":2'))).toBeNull();
    expect(refused(good.replace('"first":2', '"first":3'))).toBeNull();
    expect(refused('{"chunks":[]}')).toBeNull();
    expect(refused('not json\nbody')).toBeNull();
    expect(refused('')).toBeNull();
    // A column whose runs are not the meta file's describes another layout of the segment.
    expect(
      decodeSegmentText(Buffer.from(good), 'seg-000001', [{ id: 'notes-md-1', first: 0, count: 4 }]),
    ).toBeNull();
  });
});
