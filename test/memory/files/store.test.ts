import { promises as fs, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { writeSampleCorpus } from '../helpers/corpus.ts';

const open: ChunkStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe('ChunkStore on disk', () => {
  it('keeps everything across reopen, and access stats are batched to a log, not chunk files', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const first = await ChunkStore.open(dir, { create: true });
    await first.ingestPaths([writeSampleCorpus(root)]);
    const before = await first.search('flimflam keys');
    const chunkFiles = (await fs.readdir(path.join(dir, 'segments'))).filter((f) =>
      f.endsWith('.chunks.json'),
    );
    const mtimes = await Promise.all(
      chunkFiles.map(async (f) => (await fs.stat(path.join(dir, 'segments', f))).mtimeMs),
    );
    await first.close();

    const second = await ChunkStore.open(dir);
    open.push(second);
    expect(second.accessStats(before[0]!.id).count).toBe(1);
    expect(await second.search('flimflam keys')).toEqual(before);
    expect(second.accessStats(before[0]!.id).count).toBe(2);
    const after = await Promise.all(
      chunkFiles.map(async (f) => (await fs.stat(path.join(dir, 'segments', f))).mtimeMs),
    );
    expect(after).toEqual(mtimes);
    expect(await fs.readFile(path.join(dir, 'access.log'), 'utf8')).toContain(before[0]!.id);
  });

  it('refuses to open a missing store unless asked to create it', async () => {
    const root = tempDir();
    await expect(ChunkStore.open(path.join(root, 'none'))).rejects.toSatisfy((e) =>
      isRlmError(e, 'STORE_MISSING'),
    );
  });
});

describe('ChunkStore ingest rules', () => {
  it('never ingests a store that sits inside the ingested folder', async () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'a.txt'), 'hello there, a small file\n');
    const store = await ChunkStore.open(path.join(root, 'st'), { create: true });
    open.push(store);
    for (let i = 0; i < 3; i++) {
      const r = await store.ingestPaths([root]);
      expect(r.documents).toBe(1);
      expect(r.notes).toContainEqual({ path: path.join(root, 'st'), note: 'an rlm store, not ingested' });
    }
  });

  it('re-ingests an unchanged file when its tags change, and prunes files that are gone', async () => {
    const root = tempDir();
    const corpus = writeSampleCorpus(root);
    const store = await ChunkStore.open(path.join(root, 'st'), { create: true });
    open.push(store);
    await store.ingestPaths([corpus]);
    const tagged = await store.ingestPaths([path.join(corpus, 'guide.md')], { tags: ['important'] });
    expect(tagged).toMatchObject({ updated: 1, skipped: 0 });
    expect((await store.search('zephyrine', { tags: ['important'] })).length).toBe(1);
    expect((await store.ingestPaths([path.join(corpus, 'guide.md')], { tags: ['important'] })).skipped).toBe(
      1,
    );

    await fs.rm(path.join(corpus, 'notes', 'chat.jsonl'));
    const kept = await store.ingestPaths([corpus]);
    expect(kept).toMatchObject({ removed: 0, documents: 4 });
    const pruned = await store.ingestPaths([corpus], { prune: true });
    expect(pruned).toMatchObject({ removed: 1, documents: 3 });
    expect(await store.search('flimflam')).toEqual([]);
  });

  it('keeps empty documents through a repair, and refuses to repair a folder that is not a store', async () => {
    const root = tempDir();
    const corpus = writeSampleCorpus(root);
    writeFileSync(path.join(corpus, 'empty.txt'), '');
    const dir = path.join(root, 'st');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestPaths([corpus]);
    await store.close();
    const report = await repairStore(dir);
    expect(report.actions.join('\n')).not.toContain('dropped');
    expect(report.documents).toBe(5);
    expect(report.chunks).toBe(
      (await ChunkStore.open(dir).then(async (s) => [s.stats().chunks, await s.close()]))[0],
    );
    await expect(repairStore(corpus)).rejects.toSatisfy((e) => isRlmError(e, 'STORE_MISSING'));
    await expect(ChunkStore.open(path.join(corpus, 'guide.md'), { create: true })).rejects.toSatisfy((e) =>
      isRlmError(e, 'BAD_INPUT'),
    );
  });
});
