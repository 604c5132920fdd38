/**
 * `rlm repair` on a PostgreSQL store: the derived tables are rebuilt from documents and chunks, what
 * was wrong is said, what points at nothing is removed, a document missing chunks is dropped only
 * once confirmed, and all of it runs while other writers and readers use the store.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import type { SearchHit } from '../../../memory/types.ts';
import { cli } from '../../cli/helpers.ts';
import { caught } from '../../helpers/errors.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp.ts';
import { noise, prose } from '../helpers/corpus.ts';

const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!;
const QUERIES = ['glacier river', 'copper lantern harbor', 'violin thunder', 'marble falcon orchard'];

async function open(url: string, create = false): Promise<PostgresStore> {
  const store = await PostgresStore.open(url, { create });
  onTestFinished(() => store.close());
  return store;
}

/** A store of generated files and a long document cut back to back, mid-word. */
async function filled(): Promise<{ url: string; store: PostgresStore }> {
  const url = freshSchemaUrl();
  const store = await open(url, true);
  const dir = path.join(tempDir(), 'docs');
  mkdirSync(dir);
  for (let i = 0; i < 5; i++) writeFileSync(path.join(dir, `f${i}.txt`), prose(i + 1, 30));
  await store.ingestPaths([dir]);
  await store.ingestText('noise', noise(5, 3000), { chunker: 'size', chunkTokens: 60, overlapTokens: 0 });
  return { url, store };
}

async function results(store: PostgresStore): Promise<SearchHit[][]> {
  return Promise.all(QUERIES.map((q) => store.search(q, { k: 8, touch: false })));
}

function same(a: SearchHit[][], b: SearchHit[][]): void {
  expect(b.map((hits) => hits.map((h) => h.id))).toEqual(a.map((hits) => hits.map((h) => h.id)));
  for (const [i, hits] of a.entries())
    for (const [j, h] of hits.entries()) expect(b[i]![j]!.score).toBeCloseTo(h.score, 9);
}

/** The one line a repair of a consistent store reports. */
const REBUILT =
  /^rebuilt the search index \(\d+ segments?, there were \d+\), grep's tokens and related links of \d+ chunks/;

describe.skipIf(!postgresAvailable('postgres repair'))('rlm repair on a PostgreSQL store', () => {
  it('finds nothing to fix in a consistent store, and search ranks as before', async () => {
    const { url, store } = await filled();
    const ranked = await results(store);
    const report = await PostgresStore.repair(url);
    expect(report).toMatchObject({ segments: 0, documents: 6, dropped: [], applied: true });
    expect(report.chunks).toBe((await store.stats()).chunks);
    expect(report.actions).toHaveLength(1);
    expect(report.actions[0]).toMatch(REBUILT);
    same(ranked, await results(store));
  });

  it('rebuilds damaged derived tables and says what it fixed', async () => {
    const { url, store } = await filled();
    const ranked = await results(store);
    const s = schemaOf(url);
    const noiseText = (await store.readDocument('noise'))!.text;
    const edge = (await store.documentChunks('noise'))[0]!.end;
    const literal = noiseText.slice(edge - 5, edge + 5);
    const { rows: first } = await adminQuery(`SELECT min(id) AS id FROM ${s}.bm25_segments`);
    await adminQuery(`DELETE FROM ${s}.bm25_segments WHERE id = $1`, [first[0].id]);
    await adminQuery(`DELETE FROM ${s}.related WHERE from_seq IN (SELECT min(from_seq) FROM ${s}.related)`);
    await adminQuery(`UPDATE ${s}.chunks SET terms = terms + 1 WHERE ordinal = 0`);
    await adminQuery(`UPDATE ${s}.documents SET grams = '' WHERE id = 'noise'`);
    await adminQuery(`UPDATE ${s}.documents SET tokens = tokens + 1 WHERE id = 'noise'`);
    await adminQuery(
      `INSERT INTO ${s}.manual_links (from_doc, from_ordinal, to_doc, to_ordinal, type, strength) VALUES ('noise', 0, 'gone', 0, 'supports', 1)`,
    );
    await adminQuery(
      `INSERT INTO ${s}.access (id, count, last_ms) VALUES ('gone:3', 2, 1), ('noise:0', 1, 1)`,
    );
    // A process that reads the store now finds it damaged: a segment missing, grep's tokens wrong.
    const damaged = await open(url);
    expect(await results(damaged)).not.toEqual(ranked);
    expect((await damaged.grep(literal, { literal: true })).matches).toEqual([]);

    const report = await PostgresStore.repair(url);
    const said = report.actions.join('\n');
    expect(said).toMatch(/^search index: \d+ chunks, it held \d+ chunks$/m);
    expect(said).toMatch(/^fixed the BM25 length of 6 chunks$/m);
    expect(said).toMatch(/^fixed grep's tokens of 1 document$/m);
    expect(said).toMatch(/^fixed the token count of 1 document$/m);
    expect(said).toMatch(/^removed 1 hand-made link to or from chunks that are gone$/m);
    expect(said).toMatch(/^removed the access stats of 1 chunk that are gone$/m);
    // Both the process that had read the store before and the one that read it damaged rank as before.
    same(ranked, await results(store));
    same(ranked, await results(damaged));
    expect((await damaged.grep(literal, { literal: true })).matches.map((m) => m.documentOffset)).toEqual([
      edge - 5,
    ]);
    expect((await store.accessStats('noise:0')).count).toBe(1);
    // Fixed for good: a second repair finds nothing.
    expect((await PostgresStore.repair(url)).actions).toEqual([expect.stringMatching(REBUILT)]);
  });

  it('drops a document missing chunks only once confirmed; otherwise changes nothing', async () => {
    const { url, store } = await filled();
    const s = schemaOf(url);
    const victim = (await store.documents()).find((d) => d.chunks > 2)!;
    await adminQuery(`DELETE FROM ${s}.chunks WHERE document = $1 AND ordinal = 1`, [victim.id]);
    await adminQuery(`UPDATE ${s}.documents SET grams = 'x' WHERE id = $1`, [victim.id]);
    const refused = await PostgresStore.repair(url);
    expect(refused.applied).toBe(false);
    expect(refused.dropped).toEqual([{ id: victim.id, path: victim.path }]);
    const { rows } = await adminQuery(`SELECT count(*)::int AS n FROM ${s}.documents WHERE grams = 'x'`);
    expect(rows[0].n).toBe(1);
    let asked: unknown;
    const done = await PostgresStore.repair(url, {
      confirm: (d) => {
        asked = d;
        return true;
      },
    });
    expect(asked).toEqual([{ id: victim.id, path: victim.path }]);
    expect(done).toMatchObject({ applied: true, dropped: [{ id: victim.id, path: victim.path }] });
    expect(done.actions.join('\n')).toContain(`dropped document ${victim.id} (${victim.path})`);
    expect(await store.findDocument(victim.id)).toBeUndefined();
    expect((await store.stats()).documents).toBe(5);
    expect((await PostgresStore.repair(url)).actions).toEqual([expect.stringMatching(REBUILT)]);
  });

  it('runs while other writers and readers use the store: nothing is lost, and the result is consistent', async () => {
    const { url, store } = await filled();
    const writer = await open(url);
    const reader = await open(url);
    const remembered: Promise<unknown>[] = [];
    const searched: Promise<unknown>[] = [];
    const repaired = PostgresStore.repair(url);
    for (let i = 0; i < 30; i++) {
      remembered.push(writer.remember({ text: `Fact number ${i} about the quillwort pond`, topic: 'pond' }));
      searched.push(reader.search('glacier river', { k: 3, touch: false }));
    }
    remembered.push(store.ingestText('late', prose(99, 20)));
    const [report] = await Promise.all([repaired, Promise.all(remembered), Promise.all(searched)]);
    expect(report.applied).toBe(true);
    expect((await store.listMemories({ topic: 'pond' })).length).toBe(30);
    expect((await store.recall('quillwort pond', { k: 50 })).length).toBe(30);
    expect((await store.search('quillwort', { k: 50 })).length).toBe(30);
    // Whatever came before or after the rebuild, the tables agree with the chunks.
    expect((await PostgresStore.repair(url)).actions).toEqual([expect.stringMatching(REBUILT)]);
  });

  it('is the CLI command for a store URL, with the folder repair JSON shape', async () => {
    const { url, store } = await filled();
    await store.close();
    const ok = await cli(['repair', '--store', url, '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    const json = ok.json<Record<string, unknown>>();
    expect(Object.keys(json).sort()).toEqual([
      'actions',
      'applied',
      'chunks',
      'documents',
      'dropped',
      'segments',
    ]);
    expect(json).toMatchObject({ segments: 0, documents: 6, applied: true, dropped: [] });
    const plain = await cli(['repair', '--store', url]);
    expect(plain.stdout).toMatch(/^repaired: 6 documents, \d+ chunks\n$/);
    expect(plain.stdout + plain.stderr).not.toContain(decodeURIComponent(new URL(url).password));
    await adminQuery(`DELETE FROM ${schemaOf(url)}.chunks WHERE document = 'noise' AND ordinal = 0`);
    const refused = await cli(['repair', '--store', url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/1 document cannot be kept.*\n {2}\(no file\) noise\n/);
    expect(refused.stderr).toContain('nothing was changed');
    expect((await cli(['repair', '--store', url, '--yes'])).code).toBe(0);
    const missing = await caught(PostgresStore.repair(freshSchemaUrl()));
    expect(missing.code).toBe('STORE_MISSING');
  });
});
