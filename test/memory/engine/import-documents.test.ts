import { beforeEach, describe, expect, it } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import type { ImportedDocument, ImportItem } from '../../../memory/types.ts';
import { tempDir } from '../../helpers/temp.ts';

let dir: string;
beforeEach(() => {
  dir = tempDir('rlm-import-docs-');
});

function doc(id: string, words: string, meta: Record<string, string | number> = {}): ImportedDocument {
  const a = `first ${words}`;
  const b = `second ${words}`;
  return {
    id,
    path: `/src/${id}.jsonl`,
    text: `${a}\n\n${b}`,
    drafts: [
      { text: a, start: 0, end: a.length, tokens: 2, tags: ['role:exchange'], time: '2026-01-01T00:00:00Z' },
      { text: b, start: a.length + 2, end: a.length + 2 + b.length, tokens: 2, section: 'exchange 2' },
    ],
    tags: ['claude', 'session:s1'],
    meta: { source: 'test', from: 0, ...meta },
  };
}

async function* items(...list: ImportItem[]): AsyncGenerator<ImportItem> {
  yield* list;
}

describe('importDocuments', () => {
  it('writes pre-chunked documents as given, with document tags on every chunk and meta kept', async () => {
    const store = await ChunkStore.open(dir, { create: true });
    const r = await store.importDocuments(() => items({ add: doc('a', 'alpha') }, { add: doc('b', 'beta') }));
    expect(r).toMatchObject({ added: 2, documents: 2, chunks: 4 });
    await store.close();
    const reopened = await ChunkStore.open(dir);
    expect(reopened.documents().find((d) => d.id === 'a')).toMatchObject({
      path: '/src/a.jsonl',
      chunker: 'turn',
      tags: ['claude', 'session:s1'],
      meta: { source: 'test', from: 0 },
    });
    expect(reopened.getChunk('a:0')).toMatchObject({
      text: 'first alpha',
      tags: ['claude', 'session:s1', 'role:exchange'],
      time: '2026-01-01T00:00:00Z',
    });
    expect(reopened.getChunk('a:1')).toMatchObject({ section: 'exchange 2', start: 13 });
    expect((await reopened.search('beta', { tags: ['claude'] })).map((h) => h.document)).toEqual(['b', 'b']);
    await reopened.close();
  });

  it('skips a document with the same text, tags and meta; rewrites it when its meta changes', async () => {
    const store = await ChunkStore.open(dir, { create: true });
    await store.importDocuments(() => items({ add: doc('a', 'alpha') }));
    expect(await store.importDocuments(() => items({ add: doc('a', 'alpha') }))).toMatchObject({
      skipped: 1,
    });
    expect(await store.importDocuments(() => items({ add: doc('a', 'alpha', { to: 9 }) }))).toMatchObject({
      updated: 1,
    });
    await store.close();
  });

  it('drops documents in the same commit as the next additions', async () => {
    const store = await ChunkStore.open(dir, { create: true });
    await store.importDocuments(() => items({ add: doc('old', 'gamma') }));
    const r = await store.importDocuments((docs) => {
      expect(docs.map((d) => d.id)).toEqual(['old']);
      return items({ add: doc('new', 'delta'), drop: ['old', 'missing'] });
    });
    expect(r).toMatchObject({ added: 1, removed: 1, documents: 1 });
    expect(await store.search('gamma')).toEqual([]);
    const drop = await store.importDocuments(() => items({ drop: ['new'] }));
    expect(drop).toMatchObject({ removed: 1, documents: 0 });
    await store.close();
  });

  it('keeps a document that is dropped and added back unchanged', async () => {
    const store = await ChunkStore.open(dir, { create: true });
    await store.importDocuments(() => items({ add: doc('a', 'alpha') }, { add: doc('b', 'beta') }));
    const r = await store.importDocuments(() => items({ drop: ['a', 'b'], add: doc('a', 'alpha') }));
    expect(r).toMatchObject({ skipped: 1, removed: 1, documents: 1 });
    expect(store.documents().map((d) => d.id)).toEqual(['a']);
    await store.close();
  });

  it('commits whole documents per step: a failing importer leaves the committed ones and an openable store', async () => {
    const store = await ChunkStore.open(dir, { create: true });
    async function* failing(): AsyncGenerator<ImportItem> {
      yield { add: doc('one', 'epsilon') };
      yield { add: doc('two', 'zeta') };
      throw new Error('killed');
    }
    await expect(store.importDocuments(failing, { segmentChars: 10 })).rejects.toThrow('killed');
    await store.close();
    const reopened = await ChunkStore.open(dir);
    expect(reopened.documents().map((d) => [d.id, d.chunks])).toEqual([
      ['one', 2],
      ['two', 2],
    ]);
    await reopened.close();
  });
});
