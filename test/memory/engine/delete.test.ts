/**
 * The library's delete paths (removeDocument, forgetMemories, deleteDocuments, importDocuments' drops,
 * ingestPaths' prune), over both backends: afterwards no read finds the text (search, grep, recall,
 * getChunk, readDocument, documents, neighbors), and for the folder store no file holds it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { RememberingStore } from '../../../memory/engine/memories.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import { filesHolding } from '../../helpers/files-holding.ts';

const SECRET = 'quokkazanzibar';

function temp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rlm-libdelete-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** What still finds the secret or the deleted ids through the library's reads. */
async function findable(store: RememberingStore, ids: string[], survivor: string): Promise<string[]> {
  const found: string[] = [];
  // With vectors, search returns the nearest chunks whatever they say: what counts is which.
  const gone = (document: string, text: string) => ids.includes(document) || text.includes(SECRET);
  if ((await store.search(SECRET, { archived: true })).some((h) => gone(h.document, h.preview)))
    found.push('search');
  if ((await store.grep(SECRET, { literal: true })).matches.length > 0) found.push('grep');
  if ((await store.recall(SECRET, { archived: true })).some((m) => gone(m.id, m.text))) found.push('recall');
  for (const id of ids) {
    if (await store.getChunk(`${id}:0`)) found.push(`getChunk ${id}:0`);
    if (await store.readDocument(id)) found.push(`readDocument ${id}`);
    if (store.documents().some((d) => d.id === id)) found.push(`documents ${id}`);
  }
  if (
    (await store.neighbors(survivor)).some((l) =>
      ids.some((id) => l.from.startsWith(`${id}:`) || l.to.startsWith(`${id}:`)),
    )
  )
    found.push(`neighbors ${survivor}`);
  return found;
}

/** Memories deleted while journaled and after a fold (an access recorded first). */
async function deleteMemories(store: RememberingStore): Promise<{ ids: string[]; survivor: string }> {
  const keep = await store.remember({ text: 'Tea at four, harbour lanterns at dusk.' });
  const folded = await store.remember({ text: `folded ${SECRET} harbour lanterns` });
  await store.decay(); // folds the journal (with vectors it was folded at once)
  const journaled = await store.remember({ text: `journaled ${SECRET} note` });
  store.touch([`${folded.id}:0`]);
  expect(await store.forgetMemories([folded.id])).toEqual([folded.id]);
  expect(await store.removeDocument(journaled.id)).toBe(true);
  expect((await store.getMemory(keep.id))?.text).toBe('Tea at four, harbour lanterns at dusk.');
  return { ids: [folded.id, journaled.id], survivor: `${keep.id}:0` };
}

/** Documents sharing segments, deleted by deleteDocuments, importDocuments' drops and --prune. */
async function deleteDocuments(store: RememberingStore): Promise<{ ids: string[]; survivor: string }> {
  const shared = 'copper meadow falcon orchard glacier compass velvet ember';
  await store.ingestText('keep', `${shared} stays.`);
  const text = (x: string) => `${shared} ${SECRET} ${x}`;
  await store.importDocuments(async function* () {
    for (const id of ['gone-a', 'gone-b'])
      yield { add: { id, path: null, text: text(id), drafts: [draft(text(id))] } };
  });
  const files = temp();
  writeFileSync(path.join(files, 'gone.txt'), `file ${SECRET} text\n`);
  await store.ingestPaths([files]);
  const fileId = store.documents().find((d) => d.path?.endsWith('gone.txt'))!.id;
  expect(await store.deleteDocuments(['gone-a'])).toEqual({
    deleted: ['gone-a'],
    summaries: [],
    restored: [],
  });
  const dropped = await store.importDocuments(async function* () {
    yield { drop: ['gone-b'] };
  });
  expect(dropped.removed).toBe(1);
  rmSync(path.join(files, 'gone.txt'));
  expect((await store.ingestPaths([files], { prune: true })).removed).toBe(1);
  expect((await store.readDocument('keep'))?.text).toBe(`${shared} stays.`);
  return { ids: ['gone-a', 'gone-b', fileId], survivor: 'keep:0' };
}

const SCENARIOS = [
  ['forgetMemories and removeDocument, journaled and folded memories', deleteMemories],
  ['deleteDocuments, importDocuments drops and ingestPaths --prune', deleteDocuments],
] as const;

describe.each(SCENARIOS)('%s', (_, scenario) => {
  it('leave nothing a read finds, in memory', async () => {
    const store = new MemoryChunkStore();
    onTestFinished(() => store.close());
    const { ids, survivor } = await scenario(store);
    expect(await findable(store, ids, survivor)).toEqual([]);
  });

  it('leave nothing a read finds, nor any file holding it, in a folder store with vectors', async () => {
    const dir = path.join(temp(), 'store');
    const store = await ChunkStore.open(dir, { create: true, embedder: 'hash' });
    onTestFinished(() => store.close());
    const { ids, survivor } = await scenario(store);
    expect(await findable(store, ids, survivor)).toEqual([]);
    await store.close(); // flushes access stats: their lines must not name the deleted either
    expect(filesHolding(dir, [SECRET, ...ids])).toEqual([]);
  });
});

function draft(text: string) {
  return { text, start: 0, end: text.length, tokens: 12 };
}
