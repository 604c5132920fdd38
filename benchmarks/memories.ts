/**
 * Memory benchmark (`npm run bench -- memories`): a store of 100k memories (seeded generated sentences
 * with Zipf-distributed words, 100 topics, mixed importance), then the latency of single `remember` calls (journal append + fsync under
 * the lock, including the folds they trigger) and of `recall` (search + weights + access), store open and
 * `topics` at that size. Run alone with `node --no-node-snapshot benchmarks/memories.ts [memories]`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ChunkStore } from '../memory/files/store.ts';
import type { RememberInput } from '../memory/memories/memory-model.ts';
import { MEMORY_IMPORTANCE } from '../memory/types.ts';
import { Rng } from './rng.ts';

export interface MemoriesBenchOptions {
  /** Memories in the store when single calls are timed (default 100 000). */
  memories?: number;
  /** Single `remember` calls timed (default 2000: two folds at the default foldEvery). */
  remembers?: number;
  /** `recall` queries timed (default 500). */
  recalls?: number;
  log?: (line: string) => void;
}

const WORDS =
  'deploy billing cache redis postgres kafka retention schema migration token auth login session cookie header proxy nginx docker image build release branch review test flaky timeout retry queue worker cron backup restore index query latency budget invoice customer contract meeting tuesday friday morning french english answer style tabs spaces linter format typescript python rust golang module package version upgrade pin lockfile vendor secret vault rotate monthly weekly daily region europe latency replica shard partition leader follower election quorum snapshot compaction'.split(
    ' ',
  );

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

function summary(times: number[]): { p50: number; p95: number; mean: number; max: number } {
  const s = [...times].sort((a, b) => a - b);
  return {
    p50: percentile(s, 0.5),
    p95: percentile(s, 0.95),
    mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length),
    max: s.at(-1) ?? 0,
  };
}

export async function benchMemories(opts: MemoriesBenchOptions = {}): Promise<Record<string, number>> {
  const log = opts.log ?? (() => {});
  const total = opts.memories ?? 100_000;
  const singles = opts.remembers ?? 2000;
  const rng = new Rng('memories');
  const rand = () => rng.next();
  const pick = <T>(list: readonly T[]): T => rng.pick(list);
  // Words of notes follow a Zipf law over a 20k vocabulary (a few common words, a long tail), as prose
  // does; the named WORDS are the most common ones.
  const vocabulary = [...WORDS];
  const syllables = 'ka lo mi ra te su vo ne pi da fe gu ri so ba zen tor lim pra kes'.split(' ');
  while (vocabulary.length < 20_000) {
    let w = '';
    for (let i = 0, n = 2 + Math.floor(rand() * 3); i < n; i++) w += pick(syllables);
    vocabulary.push(w);
  }
  const cumulative: number[] = [];
  let sum = 0;
  for (let i = 0; i < vocabulary.length; i++) {
    sum += 1 / (i + 1);
    cumulative.push(sum);
  }
  const zipf = (): string => {
    const x = rand() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo]!;
  };
  const sentence = (i: number): RememberInput => {
    const words = Array.from({ length: 8 + Math.floor(rand() * 12) }, zipf);
    return {
      text: `Note ${i}: ${words.join(' ')}.`,
      topic: `topic-${Math.floor(rand() * 100)}`,
      importance: pick(MEMORY_IMPORTANCE),
      tags: [pick(WORDS)],
    };
  };
  const root = path.join(os.tmpdir(), `rlm-bench-memories-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  const out: Record<string, number> = { memories: total };
  try {
    mkdirSync(root, { recursive: true });
    let t = 0;
    // The disk's own floor: one small append + fdatasync, measured first, in the same folder.
    const { appendJournalLine } = await import('../memory/files/journal.ts');
    const floor: number[] = [];
    let end = 0;
    for (let i = 0; i < 200; i++) {
      t = performance.now();
      end = await appendJournalLine(
        path.join(root, 'fsync-probe.jsonl'),
        end,
        JSON.stringify({ probe: i, text: 'x'.repeat(120) }),
      );
      floor.push(performance.now() - t);
    }
    out.fsyncP50Ms = summary(floor).p50;
    t = performance.now();
    const store = await ChunkStore.open(root, { create: true });
    const bulk = Array.from({ length: total - singles }, (_, i) => sentence(i));
    await store.rememberMany(bulk);
    out.bulkMs = performance.now() - t;
    log(`${bulk.length} memories imported in ${out.bulkMs.toFixed(0)} ms`);
    store.warm();
    await store.recall('deploy'); // load the index and the tokenizer before timing

    const times: number[] = [];
    for (let i = 0; i < singles; i++) {
      const input = sentence(total - singles + i);
      t = performance.now();
      await store.remember(input);
      times.push(performance.now() - t);
    }
    const r = summary(times);
    Object.assign(out, {
      rememberP50Ms: r.p50,
      rememberP95Ms: r.p95,
      rememberMeanMs: r.mean,
      rememberMaxMs: r.max,
    });
    log(
      `remember p50 ${r.p50.toFixed(2)} ms, p95 ${r.p95.toFixed(2)}, mean ${r.mean.toFixed(2)}, max ${r.max.toFixed(0)}`,
    );

    const queries = Array.from({ length: opts.recalls ?? 500 }, () =>
      Array.from({ length: 1 + Math.floor(rand() * 3) }, zipf).join(' '),
    );
    for (const q of queries.slice(0, 20)) await store.recall(q);
    const recalls: number[] = [];
    for (const q of queries) {
      t = performance.now();
      await store.recall(q, { k: 10 });
      recalls.push(performance.now() - t);
    }
    const rc = summary(recalls);
    Object.assign(out, { recallP50Ms: rc.p50, recallP95Ms: rc.p95 });
    const topicRecalls: number[] = [];
    for (const q of queries.slice(0, 200)) {
      t = performance.now();
      await store.recall(q, { k: 10, topic: 'topic-7' });
      topicRecalls.push(performance.now() - t);
    }
    out.recallTopicP50Ms = summary(topicRecalls).p50;
    log(`recall p50 ${rc.p50.toFixed(2)} ms, p95 ${rc.p95.toFixed(2)}`);
    t = performance.now();
    store.topics();
    out.topicsMs = performance.now() - t;
    await store.close();

    t = performance.now();
    const reopened = await ChunkStore.open(root);
    out.openMs = performance.now() - t;
    out.journaled = reopened.memoryTotals().journaled;
    await reopened.close();
    out.heapUsedMB = process.memoryUsage().heapUsed / 1e6;
    out.loadAverage = os.loadavg()[0] ?? 0;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  const f = await benchMemories({
    ...(n ? { memories: n } : {}),
    log: (s) => process.stderr.write(`${s}\n`),
  });
  process.stdout.write(`${JSON.stringify(f, null, 2)}\n`);
}
