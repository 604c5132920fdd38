/**
 * Readers take no lock (memory/SCHEMA.md): a writer in another process may commit and delete the segment
 * files or the memory journal a reader's state still names. These tests put that commit between the
 * reader's look at the manifest and its read, with a second store object on the same folder as the
 * other process.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { DirectoryPersistence } from '../../../memory/files/directory.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';

const SEG1 = (dir: string, kind: string) => path.join(dir, 'segments', `seg-000001.${kind}`);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a reader whose segments a writer replaced', () => {
  /** A reader opened on `only-doc` in seg-000001, then a writer's replacement that deletes that segment. */
  async function staleReader(): Promise<{ dir: string; reader: ChunkStore; fresh: ChunkStore }> {
    const dir = path.join(tempDir(), 'store');
    const writer = await ChunkStore.open(dir, { create: true });
    await writer.ingestText('only-doc', 'old needle one\n', { path: '/p/only.md' });
    const reader = await ChunkStore.open(dir);
    await writer.ingestText('only-doc', 'new needle two\n', { path: '/p/only.md' });
    await writer.close();
    expect(existsSync(SEG1(dir, 'chunks'))).toBe(false);
    const fresh = await ChunkStore.open(dir);
    return { dir, reader, fresh };
  }

  /** Each read, and what a store opened after the writer's commit answers (`neighbors`: no links). */
  const reads: [string, (s: ChunkStore) => Promise<unknown>, string][] = [
    ['search', async (s) => (await s.search('needle')).map((h) => [h.id, h.preview]), 'two'],
    ['getChunk', async (s) => (await s.getChunk('only-doc:0'))?.text, 'two'],
    ['documentChunks', async (s) => (await s.documentChunks('only-doc')).map((c) => c.text), 'two'],
    ['readDocument', async (s) => (await s.readDocument('only-doc'))?.text, 'two'],
    ['neighbors', (s) => s.neighbors('only-doc:0'), '[]'],
    ['grep', async (s) => (await s.grep('needle')).matches.map((m) => m.text), 'two'],
  ];
  for (const [name, read, shows] of reads) {
    it(`${name} reads the store as the writer left it`, async () => {
      const { reader, fresh } = await staleReader();
      const expected = await read(fresh);
      expect(JSON.stringify(expected)).toContain(shows);
      expect(await read(reader)).toEqual(expected);
      await reader.close();
      await fresh.close();
    });
  }

  it('recall, listMemories and getMemory read memories whose segment a forget rewrote', async () => {
    const dir = path.join(tempDir(), 'store');
    const writer = await ChunkStore.open(dir, { create: true });
    const [kept, gone] = await writer.rememberMany([
      { text: 'the harbour key is under the mat' },
      { text: 'the attic key is in the drawer' },
    ]);
    const before = readdirSync(path.join(dir, 'segments'));
    const readers = await Promise.all([1, 2, 3].map(() => ChunkStore.open(dir)));
    // Forgetting one memory of a segment rewrites it, under a new name, without it.
    await writer.forgetMemories([gone!]);
    await writer.close();
    for (const f of before) expect(existsSync(path.join(dir, 'segments', f)), f).toBe(false);
    const [a, b, c] = readers as [ChunkStore, ChunkStore, ChunkStore];
    expect((await a.recall('harbour key')).map((m) => m.id)).toEqual([kept]);
    expect((await b.listMemories()).map((m) => [m.id, m.text])).toEqual([
      [kept, 'the harbour key is under the mat'],
    ]);
    expect((await c.getMemory(kept!))?.text).toBe('the harbour key is under the mat');
    for (const r of readers) await r.close();
  });
});

describe('a segment file that is really missing', () => {
  async function storeWithout(kind: string): Promise<{ dir: string; file: string; store: ChunkStore }> {
    const dir = path.join(tempDir(), 'store');
    const writer = await ChunkStore.open(dir, { create: true });
    await writer.ingestText('only-doc', 'a needle in the hay\n', { path: '/p/only.md' });
    await writer.close();
    const file = SEG1(dir, kind);
    rmSync(file);
    return { dir, file, store: await ChunkStore.open(dir) };
  }

  const cases: [string, string, (s: ChunkStore) => Promise<unknown>][] = [
    ['bm25', 'search', (s) => s.search('needle')],
    ['chunks', 'getChunk', (s) => s.getChunk('only-doc:0')],
    ['links', 'neighbors', (s) => s.neighbors('only-doc:0')],
    ['chunks', 'grep', (s) => s.grep('needle')],
  ];
  for (const [kind, name, read] of cases) {
    it(`${name} without its .${kind} file is STORE_CORRUPT naming the file and repair`, async () => {
      const { dir, file, store } = await storeWithout(kind);
      const err = await read(store).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRlmError(err, 'STORE_CORRUPT'), String(err)).toBe(true);
      expect((err as Error).message).toContain(file);
      expect((err as Error).message).toContain(`rlm repair --store ${dir}`);
      await store.close();
    });
  }
});

describe('a reader racing a journal fold', () => {
  it('an open that read the manifest before a fold deleted its journal sees the folded memories', async () => {
    const dir = path.join(tempDir(), 'store');
    const writer = await ChunkStore.open(dir, { create: true });
    await writer.configureMemory({ foldEvery: 2 });
    const first = await writer.remember({ text: 'remembered before the reader opened' });
    const journal = readdirSync(dir).find((f) => f.startsWith('memories-'))!;
    expect(journal).toBeDefined();

    // The fold lands after the reader read the manifest naming `journal`, before it reads that journal.
    const readJournal = DirectoryPersistence.prototype.readJournal;
    let armed = true;
    vi.spyOn(DirectoryPersistence.prototype, 'readJournal').mockImplementation(async function (
      this: DirectoryPersistence,
      name: string,
      from: number,
    ) {
      if (armed && name === journal) {
        armed = false;
        await writer.remember({ text: 'remembered while the reader opened' });
        expect(existsSync(path.join(dir, journal))).toBe(false);
      }
      return readJournal.call(this, name, from);
    });
    const reader = await ChunkStore.open(dir);
    expect(armed).toBe(false);
    expect((await reader.listMemories()).map((m) => m.id)).toContain(first.id);
    expect((await reader.recall('remembered before the reader opened')).map((m) => m.id)).toContain(first.id);
    await reader.close();
    await writer.close();
  });
});
