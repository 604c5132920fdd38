/**
 * Vectors in a PostgreSQL store, beyond what every backend shares (test/memory/conformance/
 * vectors.test.ts): an embedder that fails at ingest, `rlm repair` adding, replacing and removing vectors
 * while another process still holds the old embedder, a server that lost pgvector, and `rlm store copy`
 * carrying the embedder both ways. Against PGlite with pgvector (test/helpers/pglite.ts).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { cli } from '../../cli/helpers.ts';
import { caught } from '../../helpers/errors.ts';
import { type PgliteServer, startPglite } from '../../helpers/pglite.ts';
import { tempDir } from '../../helpers/temp.ts';
import { writeSampleCorpus } from '../helpers/corpus.ts';
import { embedderServer } from '../helpers/embedder-server.ts';

let server: PgliteServer;
beforeAll(async () => {
  server = await startPglite();
}, 120_000);
afterAll(() => server?.stop());

async function open(url: string, opts: { create?: boolean; embedder?: string } = {}): Promise<PostgresStore> {
  const store = await PostgresStore.open(url, opts);
  onTestFinished(() => store.close());
  return store;
}

async function vectorCount(where = 'true'): Promise<number> {
  return Number((await server.sql(`SELECT count(*) AS n FROM vectors WHERE ${where}`))[0]!.n);
}

describe('vectors in a PostgreSQL store', () => {
  it('an embedder that fails at ingest: the documents are written without vectors, and repair adds them', async () => {
    const endpoint = await embedderServer();
    const url = server.storeUrl();
    const store = await open(url, { create: true, embedder: endpoint.spec });
    expect(store.embedder).toMatch(/^http:http:\/\/127\.0\.0\.1:\d+\/v1#fake@128$/);
    endpoint.alive = false;
    const report = await store.ingestPaths([writeSampleCorpus(tempDir())]);
    expect(report.added).toBe(4);
    expect(report.warnings?.join('\n')).toMatch(
      /the embedder \S+ failed .*searchable with BM25 but have no vectors.*`rlm repair --store \S+ --embedder \S+` adds them/,
    );
    expect(await vectorCount()).toBe(0);
    const warnings: string[] = [];
    const hits = await store.search('flimflam', { onWarning: (w) => warnings.push(w) });
    expect(hits[0]?.preview).toContain('flimflam');
    expect(warnings.join('\n')).toMatch(/failed .*results are BM25 only/);
    const dead = await caught(PostgresStore.repair(url));
    expect(dead.code).toBe('PROVIDER');
    expect(dead.message).toMatch(/nothing was changed.*--embedder none/);

    endpoint.alive = true;
    const repaired = await PostgresStore.repair(url);
    expect(repaired.actions.join('\n')).toMatch(/^embedded \d+ chunks that had no vector with http:/m);
    expect(await vectorCount()).toBe((await store.stats()).chunks);
    expect((await store.search('rotate flimflam keys', { mode: 'vector', k: 1 }))[0]?.preview).toContain(
      'flimflam',
    );
  });

  it('repair replaces, removes and adds the embedder while the store is in use', async () => {
    const url = server.storeUrl();
    const old = await open(url, { create: true, embedder: 'hash' });
    await old.ingestPaths([writeSampleCorpus(tempDir())]);
    const chunks = (await old.stats()).chunks;

    // Named again, the store's own embedder embeds every chunk anew.
    await server.sql('UPDATE vectors SET embedding = array_fill(0::real, ARRAY[384])');
    const again = await PostgresStore.repair(url, { embedder: 'hash' });
    expect(again.actions).toContain('rebuilt vectors with hash:384');
    expect((await old.search('rotate flimflam keys', { mode: 'vector', k: 1 }))[0]?.preview).toContain(
      'flimflam',
    );

    const replaced = await PostgresStore.repair(url, { embedder: 'hash:64' });
    expect(replaced.actions).toContain('rebuilt vectors with hash:64');
    expect(await vectorCount("embedder = 'hash:64'")).toBe(chunks);
    expect(await vectorCount("embedder <> 'hash:64'")).toBe(0);
    // A process still holding the old embedder writes nothing with it, and reads no vectors of it.
    const stale = await caught(old.remember({ text: 'Written with the old embedder' }));
    expect(stale.code).toBe('BAD_INPUT');
    expect(stale.message).toMatch(/embedder is now hash:64, not hash:384 .*run it again/);
    expect(await old.search('flimflam', { mode: 'vector' })).toEqual([]);
    const now = await open(url);
    expect(now.embedder).toBe('hash:64');
    expect((await now.search('rotate flimflam keys', { mode: 'vector', k: 1 }))[0]?.preview).toContain(
      'flimflam',
    );
    await now.remember({ text: 'Written with the new embedder' });
    expect(await vectorCount()).toBe(chunks + 1);

    const removed = await PostgresStore.repair(url, { embedder: 'none' });
    expect(removed.actions).toContain('removed the embedder hash:64 and its vectors');
    expect(await vectorCount()).toBe(0);
    const plain = await open(url);
    expect(plain.embedder).toBeNull();
    expect((await caught(plain.search('flimflam', { mode: 'vector' }))).code).toBe('BAD_INPUT');

    const endpoint = await embedderServer();
    endpoint.alive = false;
    const failed = await caught(PostgresStore.repair(url, { embedder: endpoint.spec }));
    expect(failed.code).toBe('PROVIDER');
    expect(failed.message).toContain('nothing was changed');
    expect((await open(url)).embedder).toBeNull();

    const added = await PostgresStore.repair(url, { embedder: 'hash' });
    expect(added.actions).toContain('rebuilt vectors with hash:384');
    const back = await open(url);
    expect(back.embedder).toBe('hash:384');
    expect((await back.recall('written with the new embedder'))[0]?.text).toBe(
      'Written with the new embedder',
    );
  });

  it('a server that lost pgvector: hybrid search says so and matches words, vector search is refused', async () => {
    const url = server.storeUrl();
    const store = await open(url, { create: true, embedder: 'hash' });
    await store.ingestText('doc', 'The flimflam rotates the keys every night.');
    await server.sql('DROP EXTENSION vector');
    onTestFinished(async () => {
      await server.sql('CREATE EXTENSION vector');
    });
    const after = await open(url);
    expect(after.embedder).toBe('hash:384');
    const warnings: string[] = [];
    const hits = await after.search('flimflam', { onWarning: (w) => warnings.push(w) });
    expect(hits.map((h) => h.id)).toEqual(['doc:0']);
    expect(warnings).toEqual([expect.stringMatching(/has no pgvector extension.*results are BM25 only$/)]);
    const refused = await caught(after.search('flimflam', { mode: 'vector' }));
    expect(refused.message).toMatch(/has no pgvector extension, so the vectors of \S+ cannot be searched$/);
    // Vectors are plain arrays: writes keep them, for when pgvector is back.
    await after.ingestText('more', 'Another note.');
    expect(await vectorCount()).toBe(2);
  });

  it('the CLI: ingest, search and recall by meaning; store copy carries the embedder both ways', async () => {
    const root = tempDir();
    const folder = path.join(root, 'store');
    const corpus = writeSampleCorpus(root);
    expect((await cli(['ingest', corpus, '--store', folder, '--embedder', 'hash'])).code).toBe(0);
    const url = server.storeUrl();
    const copied = await cli(['store', 'copy', folder, url, '--json']);
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stderr).not.toContain('warning');
    const found = await cli(['search', 'rotate flimflam keys', '--store', url, '--mode', 'vector', '--json']);
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.stringify(found.json<{ results: unknown[] }>().results[0])).toContain('flimflam');
    expect((await cli(['remember', 'Configure the zorblaxian reactor', '--store', url])).code).toBe(0);
    const recalled = await cli(['recall', 'zorblax', '--store', url]);
    expect(recalled.stdout).toContain('zorblaxian');

    const back = path.join(root, 'back');
    const returned = await cli(['store', 'copy', url, back]);
    expect(returned.code, returned.stderr).toBe(0);
    const store = await ChunkStore.open(back);
    onTestFinished(() => store.close());
    expect(store.embedder).toBe('hash:384');
    expect((await store.search('zorblax', { mode: 'vector', k: 1 }))[0]?.preview).toContain('zorblaxian');
  });
});

describe('a PostgreSQL server without pgvector', () => {
  let plain: PgliteServer;
  beforeAll(async () => {
    plain = await startPglite({ vector: false });
  }, 120_000);
  afterAll(() => plain?.stop());

  it('refuses --embedder in one line; BM25 keeps working, and a copy goes on without vectors', async () => {
    const url = plain.storeUrl();
    const refused = await caught(PostgresStore.open(url, { create: true, embedder: 'hash' }));
    expect(refused.code).toBe('BAD_INPUT');
    expect(refused.message).toMatch(
      /^PostgreSQL at 127\.0\.0\.1:\d+ has no pgvector extension, so \S+ cannot keep vectors; BM25 search works without --embedder$/,
    );
    const root = tempDir();
    const doc = path.join(root, 'note.md');
    writeFileSync(doc, '# Notes\n\nThe quarkbeam starts the service.\n');
    const cliRefused = await cli(['ingest', doc, '--store', url, '--embedder', 'hash']);
    expect(cliRefused.code).toBe(2);
    expect(cliRefused.stderr.trim().split('\n')).toHaveLength(1);
    expect(cliRefused.stderr).toContain('has no pgvector extension');
    expect((await cli(['ingest', doc, '--store', url])).code).toBe(0);
    expect((await cli(['search', 'quarkbeam', '--store', url])).stdout).toContain('note.md');

    const folder = path.join(root, 'vectors');
    expect((await cli(['ingest', doc, '--store', folder, '--embedder', 'hash'])).code).toBe(0);
    await plain.sql('DROP SCHEMA rlm CASCADE');
    const copied = await cli(['store', 'copy', folder, url]);
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stderr).toMatch(
      /rlm: warning: .*has no pgvector extension.*the copy has no vectors.*`rlm repair --store URL --embedder hash:384` adds them/,
    );
    expect((await cli(['search', 'quarkbeam', '--store', url])).stdout).toContain('note.md');
  });
});
