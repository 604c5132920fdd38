import { promises as fs, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import type { Link } from '../../../memory/types.ts';
import { tempDir } from '../../helpers/temp.ts';
import { docText, type Golden, golden, legacyStore, sortedLinks } from '../helpers/legacy.ts';

/**
 * Every chunk reads as the golden file says: text and links (in a canonical order), and, unless the store
 * was compacted since (which changes BM25 statistics), search results.
 */
async function expectGolden(
  store: ChunkStore,
  g: Golden,
  opts: { skip?: (link: Link) => boolean; compacted?: boolean } = {},
): Promise<void> {
  const skip = opts.skip ?? (() => false);
  for (const [id, text] of Object.entries(g.texts)) expect((await store.getChunk(id))?.text, id).toBe(text);
  for (const [id, links] of Object.entries(g.neighbors))
    expect(sortedLinks((await store.neighbors(id)).filter((l) => !skip(l))), id).toEqual(
      sortedLinks(links.filter((l) => !skip(l))),
    );
  for (const [q, hits] of Object.entries(g.searches)) {
    const got = (await store.search(q, { k: 8 })).map((h) => ({ id: h.id, score: h.score }));
    if (opts.compacted) expect(got.length, q).toBe(hits.length);
    else expect(got, q).toEqual(hits);
  }
}

const manifestOf = async (dir: string) =>
  JSON.parse(await fs.readFile(path.join(dir, 'rlm-store.json'), 'utf8')) as {
    schema: number;
    legacy?: string[];
    related?: number;
  };

describe('stores written before schema 3', () => {
  for (const name of ['schema-1', 'schema-2'] as const) {
    it(`a ${name} store opens and reads as the rlm that wrote it did`, async () => {
      const { dir, golden: g } = legacyStore(name);
      const store = await ChunkStore.open(dir);
      expect(store.stats()).toEqual(g.stats);
      await expectGolden(store, g);
      expect((await store.grep('quasar', { literal: true })).matches.length).toBeGreaterThan(0);
      await store.close();
    });

    it(`rlm repair rewrites a ${name} store as schema 3 that reads the same`, async () => {
      const { dir, golden: g } = legacyStore(name);
      const report = await repairStore(dir);
      expect(report.applied).toBe(true);
      expect(report.actions.join('\n')).toMatch(/rewrote \d+ segments of the schema 1\/2 format as schema 3/);
      const manifest = await manifestOf(dir);
      expect(manifest.schema).toBe(3);
      expect(manifest.legacy).toBeUndefined();
      expect(
        readdirSync(path.join(dir, 'segments')).filter((f) => f.endsWith('.json') || f.endsWith('.text')),
      ).toEqual([]);
      // Repair folds the memories still in the journal into a segment, where they get links of their own.
      const journaled = new Set(g.documents.filter((d) => d.segment.startsWith('jrn-')).map((d) => d.id));
      const touchesJournal = (l: Link) =>
        [l.from, l.to].some((id) => journaled.has(id.slice(0, id.lastIndexOf(':'))));
      const store = await ChunkStore.open(dir);
      const { links: _links, schema: _schema, ...counts } = g.stats;
      expect(store.stats()).toMatchObject({ ...counts, schema: 3 });
      // Repair drops the chunks of replaced documents: scores move with the statistics.
      await expectGolden(store, g, { skip: touchesJournal, compacted: true });
      let related = 0;
      for (const d of store.documents())
        for (let i = 0; i < d.chunks; i++)
          related += (await store.neighbors(`${d.id}:${i}`, 'related_to')).filter(
            (l) => l.from === `${d.id}:${i}`,
          ).length;
      expect(manifest.related).toBe(related);
      await store.close();
    });
  }

  it('a write into a schema 1 store makes it schema 3; its old segments read as before, until repair', async () => {
    const { dir, golden: g } = legacyStore('schema-1');
    const store = await ChunkStore.open(dir);
    const before = store.stats().links;
    await store.ingestText('new-doc', docText(3, 5), { chunkTokens: 60, overlapTokens: 0 });
    const manifest = await manifestOf(dir);
    expect(manifest.schema).toBe(3);
    expect(store.stats().schema).toBe(3);
    expect(manifest.legacy?.length).toBeGreaterThan(5);
    for (const [id, text] of Object.entries(g.texts)) expect((await store.getChunk(id))?.text, id).toBe(text);
    const added = (await store.documentChunks('new-doc')).length;
    const newLinks = [];
    for (const c of await store.documentChunks('new-doc'))
      newLinks.push(...(await store.neighbors(c.id, 'related_to')).filter((l) => l.from === c.id));
    expect(newLinks.length).toBeGreaterThan(0);
    expect(store.stats().links).toBe(before + added - 1 + newLinks.length);
    await store.close();
    await repairStore(dir);
    expect((await manifestOf(dir)).legacy).toBeUndefined();
    const repaired = await ChunkStore.open(dir);
    expect(repaired.stats().links).toBe(before + added - 1 + newLinks.length);
    // A link into a rewritten segment is kept by that segment, turned around (the relation is symmetric).
    const ends = (l: Link) => [l.from, l.to].sort().join(' ');
    for (const link of newLinks)
      expect((await repaired.neighbors(link.from, 'related_to')).map(ends)).toContain(ends(link));
    await repaired.close();
  });
});

describe('the text columns of schema 1/2 segments', () => {
  it('grep reads the column, and the chunk file when the column is missing, torn or of another layout', async () => {
    const { dir } = legacyStore('schema-1');
    const store = await ChunkStore.open(dir);
    const expected = await store.grep('quasar \\w+', { context: 3 });
    expect(expected.matches.length).toBeGreaterThan(3);
    const id = expected.matches[0]!.id;
    const text = (await store.getChunk(id))!.text;
    await store.close();
    const segments = path.join(dir, 'segments');
    const columns = readdirSync(segments).filter((f) => f.endsWith('.text'));
    // Missing, torn, or describing documents other than the meta file's: each falls back to the chunk file.
    await fs.rm(path.join(segments, columns[0]!));
    const torn = await fs.readFile(path.join(segments, columns[1]!));
    await fs.writeFile(path.join(segments, columns[1]!), torn.subarray(0, torn.length - 4));
    const other = await fs.readFile(path.join(segments, columns[3]!), 'utf8');
    await fs.writeFile(
      path.join(segments, columns[2]!),
      other.replace(/"segment":"seg-\d+"/, `"segment":"${columns[2]!.slice(0, 10)}"`),
    );
    const reopened = await ChunkStore.open(dir);
    expect(await reopened.grep('quasar \\w+', { context: 3 })).toEqual(expected);
    expect((await reopened.getChunk(id))!.text).toBe(text);
    expect(reopened.segmentsWithoutTextColumn()).toEqual([columns[0]!.slice(0, 10)]);
    await reopened.close();
  });
});

describe('linking by this rlm', () => {
  it('gives the links and search results the rlm before schema 3 gave, for a store smaller than the link window', async () => {
    const g = golden('ingest-text');
    for (const store of [
      await ChunkStore.open(path.join(tempDir(), 'store'), { create: true }),
      new MemoryChunkStore(),
    ]) {
      for (let i = 0; i < 18; i++)
        await store.ingestText(`doc-${i}`, docText(i), {
          chunkTokens: 60,
          overlapTokens: 0,
          chunker: 'paragraph',
        });
      const { schema: _s, ...stats } = g.stats;
      expect(store.stats()).toMatchObject(stats);
      for (const [id, links] of Object.entries(g.neighbors))
        expect(await store.neighbors(id), id).toEqual(links);
      for (const [q, hits] of Object.entries(g.searches))
        expect(
          (await store.search(q, { k: 8 })).map((h) => ({ id: h.id, score: h.score })),
          q,
        ).toEqual(hits);
      await store.close();
    }
  });
});
