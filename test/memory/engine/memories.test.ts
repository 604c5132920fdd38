import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import { tempDir } from '../../helpers/temp.ts';

async function journalLines(dir: string): Promise<string[]> {
  const m = JSON.parse(await fs.readFile(path.join(dir, 'rlm-store.json'), 'utf8'));
  if (!m.memory) return [];
  try {
    return (await fs.readFile(path.join(dir, m.memory.journal), 'utf8')).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe('on disk', () => {
  it('journals memories, folds them into segments, and a reopened store sees them all', async () => {
    const dir = tempDir();
    const store = await ChunkStore.open(dir, { create: true });
    await store.configureMemory({ foldEvery: 3 });
    for (let i = 0; i < 7; i++) await store.remember({ text: `note ${i} about zebra ${i}` });
    expect(await journalLines(dir)).toHaveLength(1);
    expect(store.memoryTotals().journaled).toBe(1);
    await store.close();
    const again = await ChunkStore.open(dir);
    expect(await again.listMemories()).toHaveLength(7);
    expect((await again.recall('zebra', { k: 10 })).length).toBe(7);
    await again.close();
  });

  it('every journaled memory stays searchable as the tail regroups into blocks of 8 and 64', async () => {
    const store = new MemoryChunkStore();
    await store.configureMemory({ foldEvery: 500 });
    const ids: string[] = [];
    for (let i = 0; i < 75; i++) {
      ids.push((await store.remember({ text: `memo number${i} shared` })).id);
      if (i % 9 === 0 || i === 74) {
        for (const j of [0, Math.floor(i / 2), i]) {
          expect((await store.search(`number${j}`, { touch: false }))[0]?.document).toBe(ids[j]);
        }
      }
    }
    expect(store.memoryTotals().journaled).toBe(75);
    expect(await store.search('shared', { k: 100, touch: false })).toHaveLength(75);
    expect((await store.getChunk(`${ids[70]}:0`))?.text).toBe('memo number70 shared');
  });

  it('rlm repair keeps journaled and folded memories with their fields', async () => {
    const dir = tempDir();
    const store = await ChunkStore.open(dir, { create: true });
    await store.configureMemory({ foldEvery: 2 });
    for (const text of ['folded one', 'folded two', 'still journaled']) {
      await store.remember({ text, topic: 'kept', importance: 'high' });
    }
    await store.close();
    await repairStore(dir);
    const again = await ChunkStore.open(dir);
    expect((await again.listMemories()).map((m) => [m.text, m.topic, m.importance]).sort()).toEqual([
      ['folded one', 'kept', 'high'],
      ['folded two', 'kept', 'high'],
      ['still journaled', 'kept', 'high'],
    ]);
    expect(again.memorySettings().foldEvery).toBe(2);
    await again.close();
  });

  it('ignores a torn last journal line and the next remember cuts it', async () => {
    const dir = tempDir();
    const store = await ChunkStore.open(dir, { create: true });
    await store.remember({ text: 'kept memory' });
    await store.close();
    const m = JSON.parse(await fs.readFile(path.join(dir, 'rlm-store.json'), 'utf8'));
    await fs.appendFile(path.join(dir, m.memory.journal), '{"id":"mem-torn","text":"half');
    const again = await ChunkStore.open(dir);
    expect((await again.listMemories()).map((x) => x.text)).toEqual(['kept memory']);
    await again.remember({ text: 'after the crash' });
    expect((await journalLines(dir)).map((l) => JSON.parse(l).text)).toEqual([
      'kept memory',
      'after the crash',
    ]);
    await again.close();
  });

  it('with an embedder, memories are folded at once and found by vectors too', async () => {
    const dir = tempDir();
    const store = await ChunkStore.open(dir, { create: true, embedder: 'hash' });
    const m = await store.remember({ text: 'The staging cluster runs in Frankfurt', topic: 'infra' });
    await store.remember({ text: 'Lunch is at noon on Fridays', topic: 'office' });
    expect(store.memoryTotals().journaled).toBe(0);
    const hits = await store.search('staging cluster Frankfurt', { mode: 'vector', type: 'memory', k: 1 });
    expect(hits.map((h) => h.document)).toEqual([m.id]);
    expect((await store.recall('staging cluster'))[0]?.id).toBe(m.id);
    await store.forgetMemories([m.id]);
    expect(
      await store.search('staging cluster Frankfurt', { mode: 'vector', type: 'memory' }),
    ).not.toContainEqual(expect.objectContaining({ document: m.id }));
    await store.close();
  });

  it('a store is written as schema 3, with memories or without', async () => {
    const dir = tempDir();
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestText('doc', 'plain text');
    const schema = async () => JSON.parse(await fs.readFile(path.join(dir, 'rlm-store.json'), 'utf8')).schema;
    expect(await schema()).toBe(3);
    await store.remember({ text: 'now with a memory' });
    expect(await schema()).toBe(3);
    expect(store.stats().schema).toBe(3);
    await store.close();
  });
});
