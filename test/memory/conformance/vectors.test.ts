/**
 * Vector search, the same on every backend that keeps vectors: the folder store (vectra) and
 * PostgreSQL with pgvector (PGlite's server, started for this file). A store given an embedder when it
 * is made embeds what it ingests and what it remembers; search is hybrid by default, vector or BM25 on
 * request, with the filters holding in every mode; recall finds by meaning; the embedder is fixed.
 * Each test opens one store (a PGlite server serves one at a time).
 */
import { rmSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Store } from '../../../memory/store-api.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';
import { vectorBackends } from '../helpers/backends.ts';
import { writeSampleCorpus } from '../helpers/corpus.ts';

describe.each(vectorBackends())('vector search, %s store', (_name, backend) => {
  function corpus(): string {
    const root = tempDir();
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    return writeSampleCorpus(root);
  }

  it('embeds what it ingests: hybrid by default, vector and BM25 on request, filters in every mode', async () => {
    const store = await backend.open({ embedder: 'hash' });
    expect(store.embedder).toBe('hash:384');
    await store.ingestPaths([corpus()]);
    const vector = await store.search('rotate flimflam keys', { mode: 'vector', k: 3 });
    expect(vector[0]?.preview).toContain('flimflam');
    expect(vector[0]!.score).toBeGreaterThan(0);
    expect(vector[0]!.score).toBeLessThanOrEqual(1);
    const hybrid = await store.search('rotate flimflam keys', { k: 3 });
    expect(hybrid[0]?.preview).toContain('flimflam');
    // Fused by reciprocal rank: first in both lists is 2 / 61.
    expect(hybrid[0]!.score).toBeCloseTo(2 / 61, 9);
    const words = await store.search('rotate flimflam keys', { mode: 'bm25', k: 3 });
    expect(words[0]!.score).toBeGreaterThan(1);
    const doc = vector[0]!.document;
    for (const mode of ['vector', 'hybrid', 'bm25'] as const) {
      const inDoc = await store.search('service', { mode, document: doc, k: 20 });
      expect(inDoc.every((h) => h.document === doc)).toBe(true);
      expect(await store.search('service', { mode, tags: ['absent-tag'] })).toEqual([]);
      const code = await store.search('add number', { mode, type: 'code', k: 20 });
      expect(code.length).toBeGreaterThan(0);
      expect(code.every((h) => h.type === 'code')).toBe(true);
    }

    const again = await backend.reopen(store);
    const reopened = (again ?? store) as Store;
    expect(reopened.embedder).toBe('hash:384');
    const [hit] = await reopened.search('quarkbeam service', { mode: 'vector', k: 1 });
    expect((await reopened.getChunk(hit!.id))?.text).toContain('quarkbeam');
  });

  it('recalls memories by meaning, which words alone miss', async () => {
    const store = await backend.open({ embedder: 'hash' });
    await store.remember({ text: 'Configure the zorblaxian reactor before the demo', topic: 'ops' });
    await store.remember({ text: 'Lunch is at noon on Fridays', topic: 'life' });
    // "zorblax" is no word of the memory, nor near enough for typo matching: only its letters meet.
    expect(await store.search('zorblax', { mode: 'bm25', type: 'memory' })).toEqual([]);
    const [found] = await store.recall('zorblax');
    expect(found?.text).toContain('zorblaxian');
    expect((await store.recall('zorblax', { topic: 'life' })).map((m) => m.text)).not.toContain(found?.text);
    // A memory that is removed takes its vector along.
    await store.forgetMemories([found!.id]);
    expect((await store.recall('zorblax')).map((m) => m.id)).not.toContain(found!.id);
    expect(
      (await store.search('zorblaxian reactor', { mode: 'vector' })).map((h) => h.document),
    ).not.toContain(found!.id);
  });

  it('keeps its embedder: another one is refused', async () => {
    const store = await backend.open({ embedder: 'hash:64' });
    expect((await backend.reopen(store, { embedder: 'hash:64' }))?.embedder).toBe('hash:64');
    const mixed = await caught(backend.reopen(store, { embedder: 'hash:128' })!);
    expect(mixed.code).toBe('BAD_INPUT');
    expect(mixed.message).toContain('uses embedder hash:64, not hash:128');
    expect(mixed.message).toContain('rlm repair');
  });

  it('gives no embedder to a store that holds documents (repair adds one)', async () => {
    const plain = await backend.open();
    await plain.ingestText('doc', 'Some text to search.');
    const late = await caught(backend.reopen(plain, { embedder: 'hash' })!);
    expect(late.code).toBe('BAD_INPUT');
    expect(late.message).toMatch(/built without an embedder; run `rlm repair --store \S+ --embedder hash`/);
    expect((await caught(plain.search('text', { mode: 'vector' }))).message).toContain('needs an embedder');
    expect(plain.embedder).toBeNull();
  });
});
