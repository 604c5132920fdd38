/**
 * Many writers on one PostgreSQL store, as separate processes: no store-wide lock, transactions instead.
 * Two ingests of one file leave one copy, concurrent `remember`s lose nothing, and a writer killed in the
 * middle of an ingest leaves a consistent store that a re-run completes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp.ts';
import { runChild } from '../helpers/child.ts';
import { prose } from '../helpers/corpus.ts';

const CHILD = fileURLToPath(new URL('../helpers/store-child.ts', import.meta.url));

async function open(url: string): Promise<PostgresStore> {
  const store = await PostgresStore.open(url);
  onTestFinished(() => store.close());
  return store;
}

/** `n` files of generated prose in a new folder. */
function corpus(n: number, paragraphs = 40): string {
  const dir = path.join(tempDir(), 'docs');
  mkdirSync(dir);
  for (let i = 0; i < n; i++) writeFileSync(path.join(dir, `f${i}.txt`), prose(i + 1, paragraphs));
  return dir;
}

/** Every document has all its chunks, and no chunk belongs to a document that is not there. */
async function checkConsistent(store: PostgresStore): Promise<void> {
  for (const d of await store.documents()) {
    const chunks = await store.documentChunks(d.id);
    expect(chunks.map((c) => c.ordinal)).toEqual(Array.from({ length: d.chunks }, (_, i) => i));
  }
  const s = await store.stats();
  const counted = (await store.documents()).reduce((n, d) => n + d.chunks, 0);
  expect(s.chunks).toBe(counted);
}

describe.skipIf(!postgresAvailable('postgres concurrency'))('PostgreSQL store, many writers', () => {
  it('two ingests of the same files at once leave one copy of each', async () => {
    const url = freshSchemaUrl();
    const docs = corpus(6);
    const runs = await Promise.all([0, 1].map(() => runChild(CHILD, ['ingest', url, '20000', docs])));
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const reports = runs.map((r) => JSON.parse(r.out.trim().split('\n').at(-1)!));
    // Each file was written by one of them; the other found it there and skipped it.
    expect(reports[0].added + reports[1].added).toBe(6);
    expect(reports[0].skipped + reports[1].skipped).toBe(6);
    const store = await open(url);
    expect((await store.documents()).length).toBe(6);
    await checkConsistent(store);
    const hits = await store.search('glacier river', { k: 1000, touch: false });
    expect(new Set(hits.map((h) => h.id)).size).toBe(hits.length);
  });

  it('8 processes remembering 100 memories each lose none', async () => {
    const url = freshSchemaUrl();
    // The store exists before the writers start, so they measure writing, not creating.
    await PostgresStore.open(url, { create: true }).then((s) => s.close());
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => runChild(CHILD, ['remember', url, '100', `writer${i}`])),
    );
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const store = await open(url);
    const all = await store.listMemories();
    expect(all).toHaveLength(800);
    for (let i = 0; i < 8; i++) {
      const texts = new Set(all.filter((m) => m.topic === `writer${i}`).map((m) => m.text));
      expect(texts.size).toBe(100);
    }
    expect((await store.topics()).map((t) => t.memories)).toEqual(Array(8).fill(100));
    expect(await store.recall('writer3 memory 42', { k: 1 })).toHaveLength(1);
  }, 120_000);

  it('a writer killed mid-ingest leaves a consistent store, and a re-run completes it', async () => {
    const url = freshSchemaUrl();
    const docs = corpus(12, 60);
    const child = spawn(process.execPath, [CHILD, 'ingest', url, '5000', docs], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, s) => resolve(s)));
    let seen = '';
    // Killed as its third batch starts: an ingest commits a batch while it prepares the next, and
    // prepares the third once the first is committed; so one batch is in, and one may be in flight.
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d) => {
        seen += String(d);
        if ((seen.match(/commit/g) ?? []).length >= 3) resolve();
      });
      child.on('exit', () => resolve());
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const store = await open(url);
    const before = (await store.documents()).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(12);
    await checkConsistent(store);
    const rerun = await runChild(CHILD, ['ingest', url, '5000', docs]);
    expect(rerun.code, rerun.err).toBe(0);
    const report = JSON.parse(rerun.out.trim().split('\n').at(-1)!);
    expect(report).toMatchObject({ added: 12 - before, skipped: before, documents: 12 });
    await checkConsistent(store);
  }, 120_000);
});
