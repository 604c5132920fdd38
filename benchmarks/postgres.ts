/**
 * The folder store and the PostgreSQL store side by side, in one run (`npm run bench -- postgres`):
 * ingest of generated prose (default chunkers), search p50/p95 over the chunks that gives, grep over the
 * same text, recall at many memories, and the load test (benchmarks/load-test.ts) on each. The server is
 * RLM_BENCH_POSTGRES (or RLM_TEST_POSTGRES), else a throwaway cluster started with .ci/postgres.sh.
 * Sizes: RLM_BENCH_PG_MB (default 100), RLM_BENCH_PG_MEMORIES (default 100 000). With
 * RLM_BENCH_PG_FIXTURES (a folder) and a server that keeps its schemas, the corpus and the memory stores
 * recall is timed on are kept there and reused: `npm run bench -- --prepare postgres` builds them outside
 * the benchmark lock, so the locked run times only the figures.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * CPU time so far of the server processes serving `url`'s database, ms, read from /proc (the server is
 * on this machine); undefined when it cannot be read. With the process's own CPU time it gives the work
 * of an operation whatever the machine's load: wall times on a shared machine mostly measure waiting.
 */
async function serverCpuMs(url: string): Promise<number | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    let ticks = 0;
    for (const r of rows) {
      const stat = readFileSync(`/proc/${r.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  } finally {
    await c.end();
  }
}

/** Kernel clock ticks per second, the unit of /proc/PID/stat times (100 on Linux). */
const CLOCK_TICKS = 100;

/** The latency and CPU time of one operation on each backend, ms. */
interface OpFigures {
  p50: number;
  p95: number;
  /** CPU time per call: this process's, plus the server's for PostgreSQL. */
  cpuMs: number;
}

/**
 * `op` on both stores over `qs`, after 20 calls each to warm up. Latencies come from calls alternating
 * between the backends, so both meet the same load on a shared machine; CPU times from a run of each
 * after the other (the server's read from /proc, for PostgreSQL at `url`).
 */
async function compareOp(
  stores: { fs: Store; pg: Store },
  op: (store: Store, q: string) => Promise<unknown>,
  qs: string[],
  url: string,
): Promise<{ fs: OpFigures; pg: OpFigures }> {
  for (const q of qs.slice(0, 20)) {
    await op(stores.fs, q);
    await op(stores.pg, q);
  }
  const times = { fs: [] as number[], pg: [] as number[] };
  for (const q of qs) {
    times.fs.push((await timed(() => op(stores.fs, q)))[1]);
    times.pg.push((await timed(() => op(stores.pg, q)))[1]);
  }
  const cpu = async (name: 'fs' | 'pg'): Promise<number> => {
    const server = name === 'pg' ? await serverCpuMs(url) : 0;
    const own = process.cpuUsage();
    for (const q of qs) await op(stores[name], q);
    const used = process.cpuUsage(own);
    const serverUsed = name === 'pg' ? ((await serverCpuMs(url)) ?? Number.NaN) - (server ?? Number.NaN) : 0;
    return ((used.user + used.system) / 1000 + serverUsed) / qs.length;
  };
  return {
    fs: { ...percentiles(times.fs), cpuMs: await cpu('fs') },
    pg: { ...percentiles(times.pg), cpuMs: await cpu('pg') },
  };
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

/** Memory stores of `memories` memories for recall, one per backend, and what building them took. */
interface MemoryFixtures {
  fs: string;
  pg: string;
  figures: Record<string, number>;
  /** Found from an earlier run rather than built by this one. */
  reused: boolean;
}

async function schemaMemories(url: string, schema: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT CASE WHEN to_regclass($1) IS NULL THEN 0 ELSE (SELECT count(*) FROM ${schema}.documents WHERE topic IS NOT NULL) END AS n`,
      [`${schema}.documents`],
    );
    return Number(rows[0].n);
  } finally {
    await c.end();
  }
}

/**
 * The memory stores recall is timed on, in `dir`: found there (and on the server) when `keep` and an
 * earlier run or `--prepare` built them, built otherwise. Building them is not one of the issue's
 * figures; with kept fixtures it happens outside the timed run.
 */
async function memoryFixtures(
  dir: string,
  url: string,
  memories: number,
  keep: boolean,
  log: (s: string) => void,
): Promise<MemoryFixtures> {
  const manifest = path.join(dir, `memories-${memories}.json`);
  const fx: MemoryFixtures = {
    fs: path.join(dir, `memories-${memories}`),
    pg: withSchema(url, `bench_fx_memories_${memories}`),
    figures: {},
    reused: false,
  };
  const schema = `bench_fx_memories_${memories}`;
  if (keep && existsSync(manifest) && existsSync(fx.fs) && (await schemaMemories(url, schema)) >= memories) {
    log(`memory stores of ${memories} memories found in ${dir}`);
    return { ...fx, figures: JSON.parse(readFileSync(manifest, 'utf8')), reused: true };
  }
  rmSync(fx.fs, { recursive: true, force: true });
  await dropSchema(url, schema);
  const inputs = memoryInputs(memories);
  fx.figures.loadAverage = os.loadavg()[0]!;
  for (const [name, open] of [
    ['fs', () => ChunkStore.open(fx.fs, { create: true })],
    ['pg', () => PostgresStore.open(fx.pg, { create: true })],
  ] as const) {
    const store: Store = await open();
    log(`${name}: building a store of ${memories} memories`);
    fx.figures[`${name}.rememberManyMs`] = (await timed(() => store.rememberMany(inputs)))[1];
    await store.close();
  }
  // What autovacuum would do over the next minutes, done now: a timed run must not share the machine
  // with the clean-up of this bulk load.
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const table of ['documents', 'chunks', 'access', 'related', 'bm25_segments', 'bm25_dead'])
    await c.query(`VACUUM ANALYZE ${schema}.${table}`);
  await c.end();
  writeFileSync(manifest, JSON.stringify(fx.figures));
  return fx;
}

/** The generated corpus of `mb` MB in `dir` (written once: it is the same for the same size). */
function corpusIn(dir: string, mb: number): string {
  const corpus = path.join(dir, `corpus-${mb}`);
  const done = path.join(dir, `corpus-${mb}.done`);
  if (!existsSync(done)) {
    rmSync(corpus, { recursive: true, force: true });
    writeCorpus(corpus, mb * 1_000_000);
    writeFileSync(done, '');
  }
  return corpus;
}

function sizes(): { mb: number; memories: number } {
  return {
    mb: Number(readEnv().benchPostgres.mb ?? 100),
    memories: Number(readEnv().benchPostgres.memories ?? 100_000),
  };
}

/**
 * Builds the fixtures a later run reuses (`npm run bench -- --prepare postgres`, outside the benchmark
 * lock): the corpus and the memory stores, in RLM_BENCH_PG_FIXTURES and on RLM_BENCH_POSTGRES.
 */
export async function preparePostgres(opts: { log?: (s: string) => void } = {}): Promise<void> {
  const { fixtures, url } = readEnv().benchPostgres;
  if (!fixtures || !url)
    throw new Error(
      '--prepare postgres needs RLM_BENCH_PG_FIXTURES (a folder) and RLM_BENCH_POSTGRES (a server)',
    );
  const { mb, memories } = sizes();
  mkdirSync(fixtures, { recursive: true });
  corpusIn(fixtures, mb);
  await memoryFixtures(fixtures, url, memories, true, opts.log ?? (() => {}));
}

export async function benchPostgres(
  opts: { log?: (s: string) => void } = {},
): Promise<Record<string, number>> {
  const log = opts.log ?? (() => {});
  const { mb, memories } = sizes();
  const kept = readEnv().benchPostgres.fixtures;
  const f: Record<string, number> = { mb, memories, loadAverage: os.loadavg()[0]! };
  const root = mkdtempSync(path.join(os.tmpdir(), 'rlm-bench-pg-'));
  const { url, stop } = server();
  const schemas = ['bench_docs', 'bench_load'];
  try {
    for (const s of schemas) await dropSchema(url, s);
    if (kept) mkdirSync(kept, { recursive: true });
    const corpus = corpusIn(kept ?? root, mb);
    const qs = queries(500);
    const docs = {
      fs: await ChunkStore.open(path.join(root, 'docs'), { create: true }),
      pg: await PostgresStore.open(withSchema(url, 'bench_docs'), { create: true }),
    };
    for (const name of ['fs', 'pg'] as const) {
      log(`${name}: ingest of ${mb} MB`);
      const [report, ms] = await timed(() => docs[name].ingestPaths([corpus]));
      f[`${name}.ingestMs`] = ms;
      f[`${name}.chunks`] = report.chunks;
      log(`${name}: ${Math.round(ms)} ms, ${report.chunks} chunks`);
    }
    log('searching both');
    const search = await compareOp(docs, (s, q) => s.search(q, { touch: false }), qs, url);
    for (const name of ['fs', 'pg'] as const) {
      f[`${name}.searchP50Ms`] = search[name].p50;
      f[`${name}.searchP95Ms`] = search[name].p95;
      f[`${name}.searchCpuMs`] = search[name].cpuMs;
      f[`${name}.grepLiteralMs`] = (
        await timed(() => docs[name].grep('zelbrika', { literal: true, limit: 1000, timeoutMs: 600_000 }))
      )[1];
      f[`${name}.grepRegexMs`] = (
        await timed(() => docs[name].grep('\\bgov\\w+ment\\b', { limit: 100_000, timeoutMs: 600_000 }))
      )[1];
    }
    f['pg.loadAverage'] = os.loadavg()[0]!;
    await docs.fs.close();
    await docs.pg.close();
    const fx = await memoryFixtures(kept ?? root, url, memories, kept !== undefined, log);
    // Imports of the memories: timed when the stores were built, which a kept fixture was earlier.
    f['fs.rememberManyMs'] = fx.figures['fs.rememberManyMs']!;
    f['pg.rememberManyMs'] = fx.figures['pg.rememberManyMs']!;
    f['fixtures.loadAverage'] = fx.figures.loadAverage!;
    f.fixturesReused = fx.reused ? 1 : 0;
    f['recall.loadAverage'] = os.loadavg()[0]!;
    const mems = { fs: await ChunkStore.open(fx.fs), pg: await PostgresStore.open(fx.pg) };
    log(`recall at ${memories} memories, both`);
    const recall = await compareOp(mems, (s, q) => s.recall(q), qs.slice(0, 200), url);
    for (const name of ['fs', 'pg'] as const) {
      const store = mems[name];
      f[`${name}.recallP50Ms`] = recall[name].p50;
      f[`${name}.recallP95Ms`] = recall[name].p95;
      f[`${name}.recallCpuMs`] = recall[name].cpuMs;
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
    if (!kept) await dropSchema(url, `bench_fx_memories_${memories}`).catch(() => undefined);
    stop();
    rmSync(root, { recursive: true, force: true });
  }
  return f;
}
