import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { runChild } from '../helpers/child.ts';

const CHILD = fileURLToPath(new URL('../helpers/memory-child.ts', import.meta.url));

const run = (args: string[]) => runChild(CHILD, args);

describe('memories across processes', () => {
  it('concurrent remember from several processes never loses a write', async () => {
    const dir = tempDir();
    const seed = await ChunkStore.open(dir, { create: true });
    await seed.configureMemory({ foldEvery: 7 }); // folds happen while the others append
    await seed.close();
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((p) => run(['remember', dir, '15', p])));
    for (const r of results) expect(r, r.err).toMatchObject({ code: 0, out: 'done\n' });
    const store = await ChunkStore.open(dir);
    const texts = (await store.listMemories()).map((m) => m.text);
    expect(texts).toHaveLength(60);
    expect(new Set(texts).size).toBe(60);
    for (const p of ['a', 'b', 'c', 'd'])
      expect(store.topics().find((t) => t.topic === p)?.memories).toBe(15);
    await store.close();
  });

  it.each([
    ['before', false],
    ['after', true],
  ])('a consolidate killed %s its commit leaves the old state or the new one, whole', async (when, done) => {
    const dir = tempDir();
    const seed = await ChunkStore.open(dir, { create: true });
    await seed.configureMemory({ foldEvery: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await seed.remember({ text: `fact ${i}`, topic: 'crash' })).id);
    await seed.close();
    const r = await run(['consolidate', dir, 'crash', when]);
    expect(r.signal, r.err).toBe('SIGKILL');
    const store = await ChunkStore.open(dir);
    const memories = await store.listMemories({ topic: 'crash', archived: true });
    const summaries = memories.filter((m) => m.source === 'consolidation');
    const archived = memories.filter((m) => m.archived).map((m) => m.id);
    if (done) {
      expect(summaries).toHaveLength(1);
      expect(archived.sort()).toEqual([...ids].sort());
      expect(await store.neighbors(`${summaries[0]!.id}:0`, 'summarizes')).toHaveLength(3);
    } else {
      expect(summaries).toEqual([]);
      expect(archived).toEqual([]);
    }
    expect(memories.filter((m) => m.source !== 'consolidation')).toHaveLength(3);
    expect((await store.recall('fact', { archived: true })).length).toBe(done ? 4 : 3);
    await store.close();
  });
});
