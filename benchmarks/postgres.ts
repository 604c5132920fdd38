/**
 * The folder store and the PostgreSQL store side by side, in one run (`npm run bench -- postgres`):
 * ingest of generated prose (default chunkers), search p50/p95 over the chunks that gives, grep over the
 * same text, recall at many memories, and the load test (benchmarks/load-test.ts) on each. The server is
 * RLM_BENCH_POSTGRES (or RLM_TEST_POSTGRES), else a throwaway cluster started with .ci/postgres.sh.
 * Sizes: RLM_BENCH_PG_MB (default 100), RLM_BENCH_PG_MEMORIES (default 100 000).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { readEnv } from '../core/env.ts';
import { ChunkStore } from '../memory/files/store.ts';
import { PostgresStore } from '../memory/postgres/store.ts';
import type { Store } from '../memory/store-api.ts';
import { queries, writeCorpus } from './corpus.ts';
import { loadTest } from './load-test.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function percentiles(times: number[]): { p50: number; p95: number } {
  const s = [...times].sort((a, b) => a - b);
  return {
    p50: s[Math.floor(s.length / 2)] ?? 0,
    p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? 0,
  };
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await fn();
  return [r, performance.now() - t];
}

/** A server URL for the run: the one given, else a throwaway cluster (stopped by the returned function). */
function server(): { url: string; stop: () => void } {
  const given = readEnv().benchPostgres.url;
  if (given) return { url: given, stop: () => {} };
  const script = path.join(ROOT, '.ci', 'postgres.sh');
  const [dir, url] = execFileSync(script, ['start'], { encoding: 'utf8' }).trim().split('\n');
  return { url: url!, stop: () => execFileSync(script, ['stop', dir!]) };
}

function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  return u.toString();
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
}

async function searchFigures(store: Store, qs: string[]): Promise<{ p50: number; p95: number }> {
  for (const q of qs.slice(0, 20)) await store.search(q, { touch: false });
  const times: number[] = [];
  for (const q of qs) times.push((await timed(() => store.search(q, { touch: false })))[1]);
  return percentiles(times);
}

async function recallFigures(store: Store, qs: string[]): Promise<{ p50: number; p95: number }> {
  for (const q of qs.slice(0, 20)) await store.recall(q);
  const times: number[] = [];
  for (const q of qs) times.push((await timed(() => store.recall(q)))[1]);
  return percentiles(times);
}

function memoryInputs(n: number): { text: string; topic: string; importance: string; now: Date }[] {
  const qs = queries(n, 11);
  const importance = ['critical', 'high', 'medium', 'low'];
  return qs.map((q, i) => ({
    text: `note ${i}: ${q} ${qs[(i * 7) % n]}`,
    topic: `topic${i % 100}`,
    importance: importance[i % 4]!,
    now: new Date(Date.now() - (i % 30) * 86_400_000),
  }));
}

export async function benchPostgres(
  opts: { log?: (s: string) => void } = {},
): Promise<Record<string, number>> {
  const log = opts.log ?? (() => {});
  const mb = Number(readEnv().benchPostgres.mb ?? 100);
  const memories = Number(readEnv().benchPostgres.memories ?? 100_000);
  const f: Record<string, number> = { mb, memories, loadAverage: os.loadavg()[0]! };
  const root = mkdtempSync(path.join(os.tmpdir(), 'rlm-bench-pg-'));
  const { url, stop } = server();
  const schemas = ['bench_docs', 'bench_memories', 'bench_load'];
  try {
    for (const s of schemas) await dropSchema(url, s);
    const corpus = path.join(root, 'corpus');
    writeCorpus(corpus, mb * 1_000_000);
    const qs = queries(500);
    for (const [name, open] of [
      ['fs', () => ChunkStore.open(path.join(root, 'docs'), { create: true })],
      ['pg', () => PostgresStore.open(withSchema(url, 'bench_docs'), { create: true })],
    ] as const) {
      const store: Store = await open();
      log(`${name}: ingest of ${mb} MB`);
      const [report, ms] = await timed(() => store.ingestPaths([corpus]));
      f[`${name}.ingestMs`] = ms;
      f[`${name}.chunks`] = report.chunks;
      log(`${name}: ${Math.round(ms)} ms, ${report.chunks} chunks; searching`);
      const s = await searchFigures(store, qs);
      f[`${name}.searchP50Ms`] = s.p50;
      f[`${name}.searchP95Ms`] = s.p95;
      f[`${name}.grepLiteralMs`] = (
        await timed(() => store.grep('zelbrika', { literal: true, limit: 1000, timeoutMs: 600_000 }))
      )[1];
      f[`${name}.grepRegexMs`] = (
        await timed(() => store.grep('\\bgov\\w+ment\\b', { limit: 100_000, timeoutMs: 600_000 }))
      )[1];
      f[`${name}.loadAverage`] = os.loadavg()[0]!;
      await store.close();
    }
    const inputs = memoryInputs(memories);
    for (const [name, open] of [
      ['fs', () => ChunkStore.open(path.join(root, 'memories'), { create: true })],
      ['pg', () => PostgresStore.open(withSchema(url, 'bench_memories'), { create: true })],
    ] as const) {
      const store: Store = await open();
      log(`${name}: ${memories} memories`);
      f[`${name}.rememberManyMs`] = (await timed(() => store.rememberMany(inputs)))[1];
      const r = await recallFigures(store, qs.slice(0, 200));
      f[`${name}.recallP50Ms`] = r.p50;
      f[`${name}.recallP95Ms`] = r.p95;
      const singles: number[] = [];
      for (let i = 0; i < 100; i++)
        singles.push((await timed(() => store.remember({ text: `single ${i} ${qs[i]}` })))[1]);
      f[`${name}.rememberP50Ms`] = percentiles(singles).p50;
      await store.close();
    }
    const small = path.join(root, 'small');
    writeCorpus(small, 2_000_000, 100_000, 9);
    for (const [name, store] of [
      ['fs', path.join(root, 'load-store')],
      ['pg', withSchema(url, 'bench_load')],
    ] as const) {
      const s =
        name === 'fs'
          ? await ChunkStore.open(store, { create: true })
          : await PostgresStore.open(store, { create: true });
      await s.ingestPaths([small]);
      await s.close();
      log(`${name}: load test`);
      const r = await loadTest(store, root, 300);
      for (const [k, v] of Object.entries(r)) f[`${name}.load.${k}`] = v;
    }
  } finally {
    for (const s of schemas) await dropSchema(url, s).catch(() => undefined);
    stop();
    rmSync(root, { recursive: true, force: true });
  }
  return f;
}
