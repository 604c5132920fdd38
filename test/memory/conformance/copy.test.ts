/**
 * `rlm store copy` between every pair of backends: what comes out reads the same as what went in
 * (documents with their records, chunks, hand-made links, access stats, memories with weights and
 * archive flags, settings).
 */
import { describe, expect, it } from 'vitest';
import { copyStore } from '../../../memory/copy.ts';
import type { Store } from '../../../memory/store-api.ts';
import type { DocumentRecord } from '../../../memory/types.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';
import { backends } from '../helpers/backends.ts';
import { writeSampleCorpus } from '../helpers/corpus.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const NOW = new Date('2026-02-01T00:00:00Z');

/** A store's content as a reader sees it, without the layout fields that say where records sit. */
async function content(store: Store) {
  const docs = (await store.documents())
    .map(({ segment: _s, first: _f, ...rest }: DocumentRecord) => rest)
    .sort((a, b) => a.id.localeCompare(b.id));
  const chunks = [];
  for (const d of docs) {
    // A memory's chunk time is when it was written into the index, not part of the memory (its creation
    // is the document's ingestedAt): a copy may write memories in other batches.
    for (const c of await store.documentChunks(d.id))
      chunks.push(d.memory ? { ...c, createdAt: undefined } : c);
  }
  const access = [...(await store.accessEntries())].sort((a, b) => a[0].localeCompare(b[0]));
  const memories = (await store.listMemories({ archived: true, now: NOW })).sort((a, b) =>
    a.id.localeCompare(b.id),
  );
  return {
    docs,
    chunks,
    links: await store.manualLinks(),
    access,
    memories,
    settings: await store.memorySettings(),
  };
}

async function fill(store: Store): Promise<void> {
  await store.ingestPaths([writeSampleCorpus(tempDir())], { tags: ['sample'] });
  await store.configureMemory({ consolidateThreshold: 7 });
  const a = await store.remember({
    text: 'billing uses PostgreSQL',
    topic: 'db',
    importance: 'high',
    tags: ['x'],
    now: T0,
  });
  await store.remember({ text: 'the cache keeps keys one hour', topic: 'cache', now: T0 });
  const c = await store.remember({ text: 'the cache is redis', topic: 'cache', importance: 'low', now: T0 });
  await store.decay(new Date('2026-01-30T00:00:00Z')); // archives the low one
  await store.recall('billing database', { now: T0 });
  const [x] = await store.search('zephyrine');
  const [y] = await store.search('flimflam');
  await store.link(x!.id, y!.id, 'contradicts', 0.5);
  await store.link(`${a.id}:0`, `${c.id}:0`, 'supports');
}

describe.each(backends('copy conformance'))('copy from %s', (_from, source) => {
  describe.each(backends('copy conformance').filter(([name]) => name !== 'in-memory'))(
    'to %s',
    (_to, target) => {
      it('copies everything as it reads, and says what it copied', async () => {
        const src = await source.open();
        await fill(src);
        const dst = await target.open();
        const report = await copyStore(src, dst);
        const before = await content(src);
        const after = await content(dst);
        expect(after).toEqual(before);
        expect(after.memories.find((m) => m.topic === 'db')).toMatchObject({
          accessCount: 1,
          archived: false,
        });
        expect(after.memories.filter((m) => m.archived)).toHaveLength(1);
        expect(report).toMatchObject({
          documents: before.docs.length,
          chunks: before.chunks.length,
          memories: 3,
        });
        expect(report.links).toBe((await dst.stats()).links);
        // The copy searches like the original.
        expect((await dst.search('zephyrine', { touch: false })).map((h) => h.id)).toEqual(
          (await src.search('zephyrine', { touch: false })).map((h) => h.id),
        );
        // Only into an empty store.
        const again = await caught(copyStore(src, dst));
        expect(again.code).toBe('BAD_INPUT');
        expect(again.message).toMatch(/already holds/);
      });
    },
  );
});
