import { promises as fs, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import type { ChunkStoreApi } from '../../../memory/types.ts';
import { tempDir } from '../../helpers/temp.ts';
import { prose, writeSampleCorpus } from '../helpers/corpus.ts';

const open: ChunkStoreApi[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function directoryStore(): Promise<{ store: ChunkStoreApi; root: string }> {
  const root = tempDir();
  const store = await ChunkStore.open(path.join(root, 'store'), { create: true });
  open.push(store);
  return { store, root };
}

async function memoryStore(): Promise<{ store: ChunkStoreApi; root: string }> {
  const store = new MemoryChunkStore();
  open.push(store);
  return { store, root: tempDir() };
}

describe.each([
  ['ChunkStore', directoryStore],
  ['MemoryChunkStore', memoryStore],
])('%s', (_name, make) => {
  it('ingests a folder, skips binary files with a note, and counts what it did', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    const report = await store.ingestPaths([corpus]);
    expect(report.added).toBe(4);
    expect(report.updated).toBe(0);
    expect(report.skipped).toBe(0);
    expect(report.notes.map((n) => path.basename(n.path))).toEqual(['image.png']);
    expect(report.documents).toBe(4);
    expect(report.chunks).toBeGreaterThanOrEqual(5);
    expect(report.tokens).toBeGreaterThan(300);
    expect(store.stats().documents).toBe(4);
  });

  it('skips unchanged files and replaces changed ones with their old chunks gone', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    await store.ingestPaths([corpus]);
    const again = await store.ingestPaths([corpus]);
    expect(again).toMatchObject({ added: 0, updated: 0, skipped: 4 });

    expect((await store.search('zephyrine')).length).toBeGreaterThan(0);
    writeFileSync(path.join(corpus, 'guide.md'), '# Setup\n\nNow install the brandnewtool instead.\n');
    const changed = await store.ingestPaths([corpus]);
    expect(changed).toMatchObject({ added: 0, updated: 1, skipped: 3 });
    expect(await store.search('zephyrine')).toEqual([]);
    const hits = await store.search('brandnewtool');
    expect(hits).toHaveLength(1);
    expect(store.getChunk(hits[0]!.id)?.text).toContain('brandnewtool');
  });

  it('searches with filters by document, type and tag', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    await store.ingestPaths([corpus], { tags: ['project-x'] });
    const decision = await store.search('decided PostgreSQL storage');
    expect(decision[0]?.preview).toContain('PostgreSQL');
    expect(decision[0]?.tags).toContain('project-x');
    const doc = decision[0]!.document;
    expect(await store.search('PostgreSQL', { document: 'nope' })).toEqual([]);
    expect((await store.search('PostgreSQL', { document: doc }))[0]?.document).toBe(doc);
    expect(await store.search('PostgreSQL', { tags: ['absent-tag'] })).toEqual([]);
    expect((await store.search('add number', { type: 'code' }))[0]?.type).toBe('code');
    // typo tolerance comes from the BM25 index
    expect((await store.search('zephyrin toolkitt'))[0]?.preview).toContain('zephyrine');
  });

  it('gives chunks stable ids, follows / context_of / related_to links, and chunk text equal to the source', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    await store.ingestPaths([corpus], { chunker: 'paragraph' });
    const story = store.documents().find((d) => d.path?.endsWith('story.txt'))!;
    expect(story.id).toMatch(/^story-txt-[0-9a-f]{8}$/);
    const chunks = store.documentChunks(story.id);
    expect(chunks.length).toBeGreaterThan(1);
    const source = await fs.readFile(path.join(corpus, 'notes', 'story.txt'), 'utf8');
    for (const c of chunks) expect(c.text).toBe(source.slice(c.start, c.end));
    const second = chunks[1]!.id;
    const follows = store.neighbors(second, 'follows');
    expect(follows).toContainEqual({ from: second, to: chunks[0]!.id, type: 'follows', strength: 1 });
    expect(store.neighbors(second, 'context_of').map((l) => l.to)).toContain(chunks[0]!.id);
    // the story repeats one small vocabulary, so its chunks are related to each other
    const related = chunks.flatMap((c) => store.neighbors(c.id, 'related_to'));
    expect(related.length).toBeGreaterThan(0);
    for (const l of related) expect(l.strength).toBeGreaterThan(0);
    // stats() counts the same links as neighbors() shows, and counts again after a change.
    const expectedLinks = () => {
      const ids = store.documents().flatMap((d) => store.documentChunks(d.id).map((c) => c.id));
      const distinct = new Set(
        ids.flatMap((id) => store.neighbors(id, 'related_to').map((l) => `${l.from} ${l.to}`)),
      );
      const follows = store.documents().reduce((n, d) => n + Math.max(0, d.chunks - 1), 0);
      return distinct.size + follows;
    };
    const before = store.stats().links;
    expect(before).toBe(expectedLinks());
    await store.removeDocument(story.id);
    expect(store.stats().links).toBe(expectedLinks());
    expect(store.stats().links).toBeLessThan(before);
  });

  it('sets, lists and removes hand-made links, and forgets a document with rm', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    await store.ingestPaths([corpus]);
    const [a] = await store.search('zephyrine');
    const [b] = await store.search('flimflam');
    await store.link(a!.id, b!.id, 'contradicts', 0.5);
    expect(store.neighbors(b!.id, 'contradicts')).toEqual([
      { from: a!.id, to: b!.id, type: 'contradicts', strength: 0.5 },
    ]);
    await expect(store.link(a!.id, 'nope:0', 'supports')).rejects.toSatisfy((e) =>
      isRlmError(e, 'NOT_FOUND'),
    );
    await expect(store.link(a!.id, b!.id, 'related_to' as 'supports')).rejects.toSatisfy((e) =>
      isRlmError(e, 'BAD_INPUT'),
    );
    expect(await store.removeDocument(a!.document)).toBe(true);
    expect(store.neighbors(b!.id, 'contradicts')).toEqual([]);
    expect(await store.search('zephyrine')).toEqual([]);
    expect(await store.removeDocument(a!.document)).toBe(false);
    expect(store.stats().documents).toBe(3);
  });

  it('greps chunk text with regex and literal patterns', async () => {
    const { store, root } = await make();
    await store.ingestPaths([writeSampleCorpus(root)]);
    const regex = await store.grep('quark\\w+');
    expect(regex.matches).toHaveLength(1);
    expect(regex.matches[0]!.text).toContain('Run the quarkbeam command');
    const chunk = store.getChunk(regex.matches[0]!.id)!;
    expect(chunk.text.slice(regex.matches[0]!.offset)).toMatch(/^quarkbeam/);
    expect((await store.grep('(a+', { literal: true })).matches).toEqual([]);
    await expect(store.grep('(a+')).rejects.toSatisfy((e) => isRlmError(e, 'BAD_INPUT'));
  });

  it('ingests text directly and records access stats', async () => {
    const { store } = await make();
    await store.ingestText('inline-doc', prose(3, 3));
    const hit = (await store.search('glacier river'))[0]!;
    expect(store.accessStats(hit.id).count).toBeGreaterThanOrEqual(1);
    await expect(store.ingestText('bad id!', 'x')).rejects.toSatisfy((e) => isRlmError(e, 'BAD_INPUT'));
  });
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
