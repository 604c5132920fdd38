import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../../helpers/temp.ts';

// Records which paths are opened and fsynced through node:fs's promises API (the one memory/fsutil.ts
// uses), passing every call through to the real file system.
const synced: string[] = [];
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const open = async (...args: Parameters<typeof real.promises.open>) => {
    const handle = await real.promises.open(...args);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      await sync();
      synced.push(String(args[0]));
    };
    return handle;
  };
  const promises = { ...real.promises, open };
  return { ...real, default: { ...real, promises }, promises };
});

const { VectorIndex, VECTOR_INDEX_FILE, VECTOR_META_FILE } = await import(
  '../../../memory/search/vectors.ts'
);

let dir: string;
beforeEach(() => {
  dir = join(tempDir('rlm-vectors-sync-'), 'vectors');
  synced.length = 0;
});

describe('VectorIndex durability', () => {
  it('fsyncs the folder after renaming meta.json and index.json into place, as SCHEMA.md promises', async () => {
    const idx = await VectorIndex.open(dir, { dimensions: 2, embedder: 'test:2' });
    expect(synced).toContain(dir);
    synced.length = 0;
    await idx.upsert([{ id: 'a', vector: [1, 0] }]);
    // The temp file is fsynced, then the folder holding the renamed index.
    const tmp = synced.findIndex((p) => p.startsWith(join(dir, `${VECTOR_INDEX_FILE}.tmp-`)));
    expect(tmp).toBeGreaterThanOrEqual(0);
    expect(synced.indexOf(dir, tmp)).toBeGreaterThan(tmp);
    expect((await readdir(dir)).sort()).toEqual([VECTOR_INDEX_FILE, VECTOR_META_FILE].sort());
  });
});
