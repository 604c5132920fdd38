import { describe, expect, it } from 'vitest';
import { FileList } from '../../../memory/ingest/file-list.ts';

const roundTrip = (files: { path: string; bytes: number }[]) => [...FileList.of(files)];

describe('FileList', () => {
  it('gives back every path and size in the order given, as often as it is read', () => {
    const files = [
      { path: '/data/a/README.md', bytes: 10 },
      { path: '/data/a/README.md.bak', bytes: 0 },
      { path: '/data/a/b/c.txt', bytes: 2 ** 40 },
      { path: '/data/b', bytes: 3 },
      { path: '/other', bytes: 4 },
      { path: '/data/a/b/c.txt', bytes: 5 },
    ];
    const list = FileList.of(files);
    expect([...list]).toEqual(files);
    expect([...list.paths()]).toEqual(files.map((f) => f.path));
    expect([...list.entries()].map(([i, f]) => [i, f.path])).toEqual(files.map((f, i) => [i, f.path]));
    expect(list.length).toBe(6);
    expect(list.bytesTotal).toBe(2 ** 40 + 22);
  });

  it('is empty for no files', () => {
    const list = FileList.of([]);
    expect(list.length).toBe(0);
    expect(list.bytesTotal).toBe(0);
    expect([...list]).toEqual([]);
  });

  it('keeps any string, a shared beginning cut inside a surrogate pair or longer than 65,535 units', () => {
    const long = `/${'x'.repeat(70_000)}`;
    const files = [
      { path: '/d/\u{1F600}a', bytes: 1 },
      { path: '/d/\u{1F601}b', bytes: 1 },
      { path: '/d/\uD800', bytes: 1 },
      { path: '/d/\uD800\uDC00', bytes: 1 },
      { path: '/d/日本/ü', bytes: 1 },
      { path: '', bytes: 0 },
      { path: `${long}/a`, bytes: 1 },
      { path: `${long}/b`, bytes: 1 },
      { path: `${long}`, bytes: 1 },
    ];
    expect(roundTrip(files)).toEqual(files);
  });

  it('holds no object a file: paths are made again as they are read', () => {
    const files = Array.from({ length: 1000 }, (_, i) => ({
      path: `/corpus/dir-${i >> 4}/file-${i}.md`,
      bytes: i,
    }));
    const list = FileList.of(files);
    const [first, second] = [[...list], [...list]];
    expect(first).toEqual(files);
    expect(first[5]).not.toBe(second![5]);
    expect(Object.values(list).filter((v) => Array.isArray(v))).toEqual([]);
  });
});
