import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { writeSampleCorpus } from '../helpers/corpus.ts';

describe('ChunkStore with an embedder', () => {
  it('stores vectors at ingest and searches by vector, and hybrid by default', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true, embedder: 'hash' });
    await store.ingestPaths([writeSampleCorpus(root)]);
    const vector = await store.search('rotate flimflam keys', { mode: 'vector', k: 3 });
    expect(vector[0]?.preview).toContain('flimflam');
    const hybrid = await store.search('rotate flimflam keys', { k: 3 });
    expect(hybrid[0]?.preview).toContain('flimflam');
    await store.close();

    const reopened = await ChunkStore.open(dir);
    const [hit] = await reopened.search('quarkbeam service', { mode: 'vector', k: 1 });
    expect((await reopened.getChunk(hit!.id))?.text).toContain('quarkbeam');
    await reopened.close();
  });

  it('refuses to mix embedders, and to add one to a store built without', async () => {
    const root = tempDir();
    const withHash = path.join(root, 'a');
    await (await ChunkStore.open(withHash, { create: true, embedder: 'hash:64' })).close();
    const mixed = await ChunkStore.open(withHash, { embedder: 'hash:128' }).catch((e: unknown) => e);
    expect(isRlmError(mixed, 'BAD_INPUT')).toBe(true);
    expect((mixed as Error).message).toContain('uses embedder hash:64');

    const plain = path.join(root, 'b');
    const store = await ChunkStore.open(plain, { create: true });
    await store.ingestPaths([writeSampleCorpus(root)]);
    await store.close();
    const late = await ChunkStore.open(plain, { embedder: 'hash' }).catch((e: unknown) => e);
    expect(isRlmError(late, 'BAD_INPUT')).toBe(true);
    expect((late as Error).message).toContain('rlm repair');
    expect(
      await ChunkStore.open(plain)
        .then((s) => s.search('x', { mode: 'vector' }))
        .catch((e: unknown) => isRlmError(e, 'BAD_INPUT')),
    ).toBe(true);

    // repair --embedder adds vectors to the existing store
    const report = await repairStore(plain, { embedder: 'hash' });
    expect(report.actions.join('\n')).toContain('rebuilt vectors with hash:384');
    const upgraded = await ChunkStore.open(plain);
    expect((await upgraded.search('flimflam', { mode: 'vector', k: 1 }))[0]?.preview).toContain('flimflam');
    await upgraded.close();
  });

  it('rebuilds lost vectors with repair', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true, embedder: 'hash' });
    await store.ingestPaths([writeSampleCorpus(root)]);
    await store.close();
    rmSync(path.join(dir, 'vectors'), { recursive: true });
    const broken = await ChunkStore.open(dir).catch((e: unknown) => e);
    expect(isRlmError(broken, 'STORE_CORRUPT')).toBe(true);
    expect((broken as Error).message).toContain(path.join(dir, 'vectors'));
    await repairStore(dir);
    const fixed = await ChunkStore.open(dir);
    expect((await fixed.search('flimflam', { mode: 'vector', k: 1 }))[0]?.preview).toContain('flimflam');
    await fixed.close();
  });
});
