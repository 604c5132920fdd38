/**
 * The store conformance suite: the same behaviour from every backend (the in-memory double, the folder
 * store, PostgreSQL), through the interface the surfaces use. Backend-specific behaviour (files on disk,
 * locks, SQL) is tested beside each backend.
 */
import { promises as fs, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { readTarget } from '../../../memory/read.ts';
import type { Store } from '../../../memory/store-api.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';
import { backends } from '../helpers/backends.ts';
import { prose, writeSampleCorpus } from '../helpers/corpus.ts';

describe.each(backends('store conformance'))('%s store', (_name, backend) => {
  async function make(): Promise<{ store: Store; root: string }> {
    const root = tempDir();
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    return { store: await backend.open(), root };
  }

  it('stores text with NUL characters and lone surrogates, as memories, texts and JSONL files', async () => {
    const { store, root } = await make();
    // PostgreSQL's text holds no NUL and its JSON no lone surrogate: there each is U+FFFD, one unit like
    // it, so lengths and offsets stay; the other backends keep the text as it is.
    const stored = (t: string) =>
      backend.name === 'postgres' ? t.replaceAll('\0', '\uFFFD').toWellFormed() : t;
    const odd = 'a\0b and \ud800 lone, then the harbour';
    const m = await store.remember({ text: odd, topic: 'to\0pic\udc00', tags: ['t\0ag'] });
    expect((await store.readDocument(m.id))?.text).toBe(stored(odd));
    expect((await store.recall('harbour')).map((h) => h.id)).toEqual([m.id]);
    await store.ingestText('raw', odd, { tags: ['x\0'] });
    expect((await store.readDocument('raw'))?.text).toBe(stored(odd));
    const folder = path.join(root, 'jsonl');
    await fs.mkdir(folder);
    writeFileSync(
      path.join(folder, 'chat.jsonl'),
      `${JSON.stringify({ role: 'user', content: 'hello \u0000 world \ud800 and the lighthouse' })}\n`,
    );
    writeFileSync(path.join(folder, 'plain.md'), '# Plain\n\nNothing odd about the lighthouse keeper.\n');
    const report = await store.ingestPaths([folder]);
    expect(report.added).toBe(2);
    const hits = await store.search('lighthouse');
    expect(hits).toHaveLength(2);
  });

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
    expect((await store.stats()).documents).toBe(4);
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
    expect((await store.getChunk(hits[0]!.id))?.text).toContain('brandnewtool');
  });

  it('searches with filters by document, type and tag', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    await store.ingestPaths([corpus], { tags: ['project-x'] });
    const decision = await store.search('decided PostgreSQL storage');
    expect(decision[0]?.preview).toContain('PostgreSQL');
    expect(decision[0]?.tags).toContain('project-x');
    const doc = decision[0]!.document;
    // A name of nothing is refused, as grep refuses it: a typo must not read as "no results".
    await expect(store.search('PostgreSQL', { document: 'nope' })).rejects.toMatchObject({
      code: 'BAD_INPUT',
    });
    expect((await store.search('PostgreSQL', { document: doc }))[0]?.document).toBe(doc);
    // The path a file was ingested from names it too.
    const where = decision[0]!.path!;
    expect((await store.search('PostgreSQL', { document: [where] }))[0]?.document).toBe(doc);
    expect(await store.search('PostgreSQL', { tags: ['absent-tag'] })).toEqual([]);
    expect((await store.search('add number', { type: 'code' }))[0]?.type).toBe('code');
    // typo tolerance comes from the BM25 index
    expect((await store.search('zephyrin toolkitt'))[0]?.preview).toContain('zephyrine');
  });

  it('gives chunks stable ids, follows / context_of / related_to links, and chunk text equal to the source', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    await store.ingestPaths([corpus], { chunker: 'paragraph' });
    const story = (await store.documents()).find((d) => d.path?.endsWith('story.txt'))!;
    expect(story.id).toMatch(/^story-txt-[0-9a-f]{8}$/);
    const chunks = await store.documentChunks(story.id);
    expect(chunks.length).toBeGreaterThan(1);
    const source = await fs.readFile(path.join(corpus, 'notes', 'story.txt'), 'utf8');
    for (const c of chunks) expect(c.text).toBe(source.slice(c.start, c.end));
    const second = chunks[1]!.id;
    const follows = await store.neighbors(second, 'follows');
    expect(follows).toContainEqual({ from: second, to: chunks[0]!.id, type: 'follows', strength: 1 });
    expect((await store.neighbors(second, 'context_of')).map((l) => l.to)).toContain(chunks[0]!.id);
    // the story repeats one small vocabulary, so its chunks are related to each other
    const related = (await Promise.all(chunks.map((c) => store.neighbors(c.id, 'related_to')))).flat();
    expect(related.length).toBeGreaterThan(0);
    for (const l of related) expect(l.strength).toBeGreaterThan(0);
    // stats() counts the same links as neighbors() shows, and counts again after a change.
    const expectedLinks = async () => {
      const docs = await store.documents();
      const ids = (await Promise.all(docs.map((d) => store.documentChunks(d.id)))).flat().map((c) => c.id);
      const links = (await Promise.all(ids.map((id) => store.neighbors(id, 'related_to')))).flat();
      const distinct = new Set(links.map((l) => `${l.from} ${l.to}`));
      const follows = docs.reduce((n, d) => n + Math.max(0, d.chunks - 1), 0);
      return distinct.size + follows;
    };
    const before = (await store.stats()).links;
    expect(before).toBe(await expectedLinks());
    await store.removeDocument(story.id);
    expect((await store.stats()).links).toBe(await expectedLinks());
    expect((await store.stats()).links).toBeLessThan(before);
  });

  it('sets, lists and removes hand-made links, and forgets a document with rm', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    await store.ingestPaths([corpus]);
    const [a] = await store.search('zephyrine');
    const [b] = await store.search('flimflam');
    await store.link(a!.id, b!.id, 'contradicts', 0.5);
    expect(await store.neighbors(b!.id, 'contradicts')).toEqual([
      { from: a!.id, to: b!.id, type: 'contradicts', strength: 0.5 },
    ]);
    await expect(store.link(a!.id, 'nope:0', 'supports')).rejects.toSatisfy((e) =>
      isRlmError(e, 'NOT_FOUND'),
    );
    await expect(store.link(a!.id, b!.id, 'related_to' as 'supports')).rejects.toSatisfy((e) =>
      isRlmError(e, 'BAD_INPUT'),
    );
    expect(await store.removeDocument(a!.document)).toBe(true);
    expect(await store.neighbors(b!.id, 'contradicts')).toEqual([]);
    expect(await store.search('zephyrine')).toEqual([]);
    expect(await store.removeDocument(a!.document)).toBe(false);
    expect((await store.stats()).documents).toBe(3);
  });

  it('refuses to link an empty document, which has no chunk, saying so; an id of nothing is NOT_FOUND', async () => {
    const { store, root } = await make();
    const corpus = writeSampleCorpus(root);
    writeFileSync(path.join(corpus, 'empty.txt'), '');
    await store.ingestPaths([corpus]);
    const empty = (await store.documents()).find((d) => d.path?.endsWith('empty.txt'))!;
    expect(empty.chunks).toBe(0);
    const [a] = await store.search('zephyrine');
    const links = (await store.stats()).links;
    for (const [from, to] of [
      [empty.id, a!.id],
      [a!.id, empty.id],
    ] as const) {
      const err = await caught(store.link(from, to, 'supports'));
      expect(err.code).toBe('BAD_INPUT');
      expect(err.message).toBe(`document ${empty.id} has no chunks (it is empty), so it cannot be linked`);
    }
    expect((await caught(store.link('nope', a!.id, 'supports'))).code).toBe('NOT_FOUND');
    expect((await store.stats()).links).toBe(links);
  });

  it('knows a chunk by its one id: another spelling of the ordinal names nothing and cannot be linked', async () => {
    const { store, root } = await make();
    await store.ingestPaths([writeSampleCorpus(root)], { chunker: 'paragraph' });
    const story = (await store.documents()).find((d) => d.path?.endsWith('story.txt'))!;
    expect(story.chunks).toBeGreaterThan(1);
    const one = `${story.id}:1`;
    expect((await store.getChunk(one))?.id).toBe(one);
    const links = (await store.stats()).links;
    for (const ordinal of ['01', '1.0', '+1', ' 1', '0x1', '0b1', '1e0', '']) {
      const id = `${story.id}:${ordinal}`;
      expect(await store.getChunk(id), id).toBeUndefined();
      expect(await readTarget(store, id), id).toBeUndefined();
      // Some backends throw before they return a promise: the async wrapper makes both a rejection.
      await expect((async () => store.neighbors(id))(), id).rejects.toSatisfy((e) =>
        isRlmError(e, 'NOT_FOUND'),
      );
      await expect(store.link(id, `${story.id}:0`, 'contradicts'), id).rejects.toSatisfy((e) =>
        isRlmError(e, 'NOT_FOUND'),
      );
    }
    expect((await store.stats()).links).toBe(links);
    expect(await store.neighbors(one, 'contradicts')).toEqual([]);
    expect(await store.neighbors(`${story.id}:0`, 'contradicts')).toEqual([]);
    await store.link(one, `${story.id}:0`, 'contradicts');
    expect((await store.stats()).links).toBe(links + 1);
  });

  it('greps chunk text with regex and literal patterns', async () => {
    const { store, root } = await make();
    await store.ingestPaths([writeSampleCorpus(root)]);
    const regex = await store.grep('quark\\w+');
    expect(regex.matches).toHaveLength(1);
    expect(regex.matches[0]!.text).toContain('Run the quarkbeam command');
    const chunk = (await store.getChunk(regex.matches[0]!.id))!;
    expect(chunk.text.slice(regex.matches[0]!.offset)).toMatch(/^quarkbeam/);
    expect((await store.grep('(a+', { literal: true })).matches).toEqual([]);
    await expect(store.grep('(a+')).rejects.toSatisfy((e) => isRlmError(e, 'BAD_INPUT'));
  });

  it('ingests text directly and records access stats', async () => {
    const { store } = await make();
    await store.ingestText('inline-doc', prose(3, 3));
    const hit = (await store.search('glacier river'))[0]!;
    expect((await store.accessStats(hit.id)).count).toBeGreaterThanOrEqual(1);
    await expect(store.ingestText('bad id!', 'x')).rejects.toSatisfy((e) => isRlmError(e, 'BAD_INPUT'));
  });
});
