/**
 * Small segments merged (memory/engine/merge-plan.ts, purge.ts `rewriteSegments`): a store written in
 * many small steps ends with few segments, and reads exactly as before the merge: every text, search
 * (words and vectors), grep and link, hand-made links and tags included. The folder store's files of
 * the merged segments go with the commit.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { planMerges, setMergeThresholds } from '../../../memory/engine/merge-plan.ts';
import { MANIFEST_FILE } from '../../../memory/files/manifest.ts';
import { ChunkStore } from '../../../memory/files/store.ts';

const never = { small: 256, at: 1_000_000, merged: 2_048 };
const usual = { small: 256, at: 8, merged: 2_048 };

describe('planMerges', () => {
  it('merges small segments in store order into groups of at most `merged` chunks, once `at` are small', () => {
    const before = setMergeThresholds({ small: 10, at: 3, merged: 20 });
    onTestFinished(() => {
      setMergeThresholds(before);
    });
    const chunks = new Map([
      ['a', 5],
      ['b', 50],
      ['c', 8],
      ['d', 9],
      ['e', 2],
    ]);
    // Too few segments to merge: no document is counted.
    const uncounted = () => {
      throw new Error('counted');
    };
    expect(planMerges(['a', 'b'], uncounted, 7)).toBeUndefined();
    expect(planMerges(['a', 'b', 'c'], () => new Map([['b', 50]]), 7)).toBeUndefined();
    const plan = planMerges(['a', 'b', 'c', 'd', 'e'], () => chunks, 7)!;
    // a + c (13), then d + e (11): the big segment b stays.
    expect([...plan.renamed]).toEqual([
      ['a', 'seg-000007'],
      ['c', 'seg-000007'],
      ['d', 'seg-000008'],
      ['e', 'seg-000008'],
    ]);
    expect(plan.nextSegment).toBe(9);
    // A group of one is not a merge.
    expect(
      planMerges(
        ['a', 'd', 'e'],
        () =>
          new Map([
            ['a', 9],
            ['d', 9],
            ['e', 9],
          ]),
        1,
      )?.renamed.size,
    ).toBe(2);
  });
});

/** Everything a reader can see of the store, in a form that compares. */
async function view(store: ChunkStore, ids: string[]) {
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    out[`text ${id}`] = (await store.readDocument(id))?.text;
    const doc = store.documents().find((d) => d.id === id)!;
    for (let i = 0; i < doc.chunks; i++) {
      const c = await store.getChunk(`${id}:${i}`);
      out[`chunk ${id}:${i}`] = { text: c?.text, tags: c?.tags, start: c?.start };
      out[`links ${id}:${i}`] = (await store.neighbors(`${id}:${i}`))
        .map((l) => `${l.type} ${l.from} ${l.to} ${l.strength.toFixed(4)}`)
        .sort();
    }
  }
  for (const q of ['lantern harbour', 'zebra', 'quokka seven', 'tide'])
    for (const mode of ['bm25', 'vector', 'hybrid'] as const)
      out[`search ${q} ${mode}`] = (await store.search(q, { k: 5, mode })).map(
        (h) => `${h.id} ${h.score.toFixed(4)}`,
      );
  out.grep = (await store.grep('lantern|zebra', { count: true })).counts;
  const { documents, chunks, links, tokens } = store.stats();
  out.stats = { documents, chunks, links, tokens };
  return out;
}

describe('a folder store written in many small steps', () => {
  it('merges its small segments and reads exactly as before', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rlm-merge-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const before = setMergeThresholds(never);
    onTestFinished(() => {
      setMergeThresholds(before);
    });
    const store = await ChunkStore.open(path.join(dir, 'store'), { create: true, embedder: 'hash' });
    onTestFinished(() => store.close());
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = `note-${i}`;
      ids.push(id);
      const words = i % 3 === 0 ? 'zebra crossing at the tide' : 'lantern over the harbour at dusk';
      await store.ingestText(
        id,
        `Note ${i}: the ${words}, quokka ${i}.\n\n${'More words about it. '.repeat(40 + i)}`,
        {
          tags: [`t${i}`],
        },
      );
    }
    // Replaced and removed documents leave dead chunks in their segments.
    await store.ingestText('note-4', 'Note 4, rewritten: a lantern again.');
    expect(await store.removeDocument('note-5')).toBe(true);
    ids.splice(ids.indexOf('note-5'), 1);
    await store.link('note-1:0', 'note-9:0', 'supports');
    const manifest = () => JSON.parse(readFileSync(path.join(dir, 'store', MANIFEST_FILE), 'utf8'));
    expect(manifest().segments.length).toBeGreaterThanOrEqual(10);
    const expected = await view(store, ids);

    setMergeThresholds(usual);
    // Any write merges once enough segments are small: here one that changes nothing else (the same
    // text with the same tags is skipped).
    const same = await store.ingestText('note-0', (await store.readDocument('note-0'))!.text, {
      tags: ['t0'],
    });
    expect(same.skipped).toBe(1);
    expect(manifest().segments).toHaveLength(1);
    expect(await view(store, ids)).toEqual(expected);
    // The merged segments' files are gone; the store opens again as it was.
    const segmentFiles = readdirSync(path.join(dir, 'store', 'segments'));
    expect(new Set(segmentFiles.map((f) => f.split('.')[0]))).toEqual(new Set(manifest().segments));
    const again = await ChunkStore.open(path.join(dir, 'store'), { embedder: 'hash' });
    onTestFinished(() => again.close());
    expect(await view(again, ids)).toEqual(expected);
  });
});
