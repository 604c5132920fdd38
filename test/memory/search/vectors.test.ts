import { readdir, readFile, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalIndex } from 'vectra';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VECTOR_INDEX_FILE, VECTOR_META_FILE, VectorIndex } from '../../../memory/search/vectors.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';

const OPTS = { dimensions: 4, embedder: 'test:4' };
let dir: string;

beforeEach(() => {
  dir = join(tempDir('rlm-vectors-'), 'vectors');
});

afterEach(() => {
  vi.restoreAllMocks();
});

const ITEMS = [
  { id: 'a', vector: [1, 0, 0, 0] },
  { id: 'b', vector: [0.9, 0.1, 0, 0] },
  { id: 'c', vector: [0, 1, 0, 0] },
  { id: 'd', vector: [0, 0, 1, 0] },
  { id: 'e', vector: [-1, 0, 0, 0] },
];

describe('VectorIndex', () => {
  it('creates an empty index with its embedder recorded', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    expect(idx.size()).toBe(0);
    expect(await idx.query([1, 0, 0, 0], 3)).toEqual([]);
    const meta = JSON.parse(await readFile(join(dir, VECTOR_META_FILE), 'utf8'));
    expect(meta).toMatchObject({ embedder: 'test:4', dimensions: 4 });
  });

  it('ranks by cosine similarity, best first, limited to k', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert(ITEMS);
    expect(idx.size()).toBe(5);
    const hits = await idx.query([2, 0, 0, 0], 3);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b', expect.any(String)]);
    expect(hits[0]?.score).toBeCloseTo(1, 5);
    expect(hits[1]?.score).toBeCloseTo(0.9 / Math.hypot(0.9, 0.1), 5);
    const all = await idx.query([1, 0, 0, 0], 10);
    expect(all).toHaveLength(5);
    expect(all.at(-1)).toMatchObject({ id: 'e' });
    expect(all.at(-1)?.score).toBeCloseTo(-1, 5);
  });

  it('applies a filter and still returns k hits when enough pass', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    const many = Array.from({ length: 200 }, (_, i) => ({ id: `n${i}`, vector: [1, i / 200, 0, 0] }));
    await idx.upsert(many);
    // Only ids with odd numbers pass, and the best raw matches (small i) are mostly even-filtered.
    const hits = await idx.query([1, 0, 0, 0], 5, (id) => Number(id.slice(1)) % 2 === 1);
    expect(hits.map((h) => h.id)).toEqual(['n1', 'n3', 'n5', 'n7', 'n9']);
    const rare = await idx.query([1, 0, 0, 0], 5, (id) => id === 'n199');
    expect(rare.map((h) => h.id)).toEqual(['n199']);
    expect(await idx.query([1, 0, 0, 0], 5, () => false)).toEqual([]);
  });

  it('replaces on upsert and removes on delete', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert(ITEMS);
    await idx.upsert([{ id: 'a', vector: [0, 0, 0, 1] }]);
    expect(idx.size()).toBe(5);
    expect((await idx.query([0, 0, 0, 1], 1))[0]?.id).toBe('a');
    await idx.delete(['a', 'c', 'missing']);
    expect(idx.size()).toBe(3);
    expect(await idx.has('a')).toBe(false);
    expect(await idx.has('b')).toBe(true);
    expect((await idx.ids()).sort()).toEqual(['b', 'd', 'e']);
  });

  it('persists across reopen', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert(ITEMS);
    await idx.delete(['e']);
    const again = await VectorIndex.open(dir, OPTS);
    expect(again.size()).toBe(4);
    expect((await again.query([0, 0, 1, 0], 1))[0]).toMatchObject({ id: 'd' });
  });

  it('writes a batch with one index rewrite and leaves no temp files', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    const end = vi.spyOn(LocalIndex.prototype, 'endUpdate');
    const batch = Array.from({ length: 2000 }, (_, i) => ({
      id: `c${i}`,
      vector: [Math.sin(i), Math.cos(i), 1, 0],
    }));
    await idx.upsert(batch);
    expect(end).toHaveBeenCalledTimes(1);
    expect(idx.size()).toBe(2000);
    expect((await readdir(dir)).sort()).toEqual([VECTOR_INDEX_FILE, VECTOR_META_FILE]);
  });

  it('serialises concurrent writes', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await Promise.all([
      idx.upsert([ITEMS[0] as (typeof ITEMS)[0]]),
      idx.upsert([ITEMS[1] as (typeof ITEMS)[0]]),
      idx.upsert([ITEMS[2] as (typeof ITEMS)[0]]),
      idx.delete(['zzz']),
    ]);
    expect(idx.size()).toBe(3);
  });

  it('never matches a zero vector', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert([{ id: 'z', vector: [0, 0, 0, 0] }, ...ITEMS.slice(0, 2)]);
    const hits = await idx.query([1, 0, 0, 0], 10);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b']);
  });

  it('rejects vectors of the wrong length, non-finite values and bad ids', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    expect((await caught(idx.upsert([{ id: 'x', vector: [1, 2, 3] }]))).code).toBe('BAD_INPUT');
    expect((await caught(idx.upsert([{ id: 'x', vector: [1, 2, 3, Number.NaN] }]))).code).toBe('BAD_INPUT');
    expect((await caught(idx.upsert([{ id: '', vector: [1, 2, 3, 4] }]))).code).toBe('BAD_INPUT');
    expect((await caught(idx.query([1, 2], 1))).code).toBe('BAD_INPUT');
    expect(idx.size()).toBe(0);
  });

  it('refuses to mix embedders or dimensions', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert(ITEMS);
    const other = await caught(VectorIndex.open(dir, { dimensions: 4, embedder: 'other:4' }));
    expect(other.code).toBe('BAD_INPUT');
    expect(other.message).toContain('test:4');
    expect(other.message).toContain('other:4');
    const dims = await caught(VectorIndex.open(dir, { dimensions: 8, embedder: 'test:4' }));
    expect(dims.code).toBe('BAD_INPUT');
    // The refusal changed nothing on disk.
    expect((await VectorIndex.open(dir, OPTS)).size()).toBe(5);
  });

  it('reports a torn index.json as STORE_CORRUPT naming the file', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert(ITEMS);
    const file = join(dir, VECTOR_INDEX_FILE);
    await truncate(file, 40);
    const err = await caught(VectorIndex.open(dir, OPTS));
    expect(err.code).toBe('STORE_CORRUPT');
    expect(err.details.file).toBe(file);
    expect(err.message).toContain(file);
  });

  it('reports structurally wrong index data as STORE_CORRUPT', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert(ITEMS);
    const file = join(dir, VECTOR_INDEX_FILE);
    await writeFile(
      file,
      JSON.stringify({ version: 1, metadata_config: {}, items: [{ id: 'a', vector: [1, 2], norm: 1 }] }),
    );
    expect((await caught(VectorIndex.open(dir, OPTS))).code).toBe('STORE_CORRUPT');
    await writeFile(file, JSON.stringify({ version: 1 }));
    expect((await caught(VectorIndex.open(dir, OPTS))).code).toBe('STORE_CORRUPT');
  });

  it('reports a missing or broken meta.json as STORE_CORRUPT', async () => {
    const idx = await VectorIndex.open(dir, OPTS);
    await idx.upsert(ITEMS);
    const meta = join(dir, VECTOR_META_FILE);
    await writeFile(meta, '{"embedder":');
    const broken = await caught(VectorIndex.open(dir, OPTS));
    expect(broken.code).toBe('STORE_CORRUPT');
    expect(broken.details.file).toBe(meta);
    await unlink(meta);
    const missing = await caught(VectorIndex.open(dir, OPTS));
    expect(missing.code).toBe('STORE_CORRUPT');
    expect(missing.details.file).toBe(meta);
  });

  it('rejects bad options', async () => {
    expect((await caught(VectorIndex.open(dir, { dimensions: 0, embedder: 'x' }))).code).toBe('BAD_INPUT');
    expect((await caught(VectorIndex.open(dir, { dimensions: 4, embedder: '' }))).code).toBe('BAD_INPUT');
  });
});
