/**
 * Store benchmark (`npm run bench:memory`): ingest of a generated 40 MB corpus (≈10M tokens), store
 * open and BM25 search at ~100k chunks, memory use, and minisearch on the same chunks for comparison.
 */
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import MiniSearch from 'minisearch';
import { ChunkStore } from '../memory/files/store.ts';
import { queries, writeCorpus } from './corpus.ts';

export interface StoreBenchOptions {
  /** Corpus size in bytes (default 40 MB). */
  bytes?: number;
  log?: (line: string) => void;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

async function timeSearches(
  search: (q: string) => unknown,
  qs: string[],
): Promise<{ p50: number; p95: number }> {
  for (const q of qs.slice(0, 20)) await search(q); // warm-up
  const times: number[] = [];
  for (const q of qs) {
    const t = performance.now();
    await search(q);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95) };
}

export async function benchStore(opts: StoreBenchOptions = {}): Promise<Record<string, number>> {
  const log = opts.log ?? (() => {});
  const root = path.join(os.tmpdir(), `rlm-bench-store-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  const out: Record<string, number> = {};
  try {
    const corpus = writeCorpus(path.join(root, 'corpus'), opts.bytes ?? 40_000_000);
    out.corpusMB = corpus.bytes / 1e6;
    log(`corpus: ${corpus.files} files, ${out.corpusMB.toFixed(1)} MB`);

    // 1. Default ingest (chunker picked by file type: paragraph for .txt).
    const rss0 = process.memoryUsage().rss;
    let t = performance.now();
    const store = await ChunkStore.open(path.join(root, 'store'), { create: true });
    const report = await store.ingestPaths([path.join(root, 'corpus')]);
    out.ingestMs = performance.now() - t;
    out.ingestTokens = report.tokens;
    out.ingestChunks = report.chunks;
    out.ingestMBps = out.corpusMB / (out.ingestMs / 1000);
    out.ingestRssMB = Math.max(0, process.memoryUsage().rss - rss0) / 1e6;
    await store.close();
    log(`ingest: ${report.chunks} chunks, ${report.tokens} tokens in ${out.ingestMs.toFixed(0)} ms`);

    // 2. A store of ~100k small chunks for open and search.
    t = performance.now();
    const small = await ChunkStore.open(path.join(root, 'store-100k'), { create: true });
    const r2 = await small.ingestPaths([path.join(root, 'corpus')], {
      chunker: 'size',
      chunkTokens: 100,
      overlapTokens: 0,
    });
    out.ingest100kMs = performance.now() - t;
    out.chunks100k = r2.chunks;
    const texts: { id: string; text: string }[] = [];
    for (const d of small.documents())
      for (const c of await small.documentChunks(d.id)) texts.push({ id: c.id, text: c.text });
    await small.close();

    const opens: number[] = [];
    let reopened: ChunkStore | undefined;
    for (let i = 0; i < 5; i++) {
      await reopened?.close();
      t = performance.now();
      reopened = await ChunkStore.open(path.join(root, 'store-100k'));
      opens.push(performance.now() - t);
    }
    opens.sort((a, b) => a - b);
    out.openMs = percentile(opens, 0.5);
    t = performance.now();
    reopened!.warm();
    out.indexLoadMs = performance.now() - t;
    const qs = queries(500);
    const s = await timeSearches((q) => reopened!.search(q, { k: 10 }), qs);
    out.searchP50Ms = s.p50;
    out.searchP95Ms = s.p95;
    const heap = process.memoryUsage();
    out.heapUsedMB = heap.heapUsed / 1e6;
    out.rssMB = heap.rss / 1e6;
    await reopened!.close();
    log(
      `open ${out.openMs.toFixed(1)} ms, index load ${out.indexLoadMs.toFixed(0)} ms, search p50 ${s.p50.toFixed(2)} ms`,
    );

    // 3. minisearch on the same chunks.
    t = performance.now();
    const mini = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], storeFields: [] });
    mini.addAll(texts);
    out.minisearchIndexMs = performance.now() - t;
    const m = await timeSearches((q) => mini.search(q).slice(0, 10), qs);
    out.minisearchP50Ms = m.p50;
    out.minisearchP95Ms = m.p95;
    out.searchSpeedupVsMinisearch = m.p50 / Math.max(1e-6, s.p50);
    log(`minisearch: index ${out.minisearchIndexMs.toFixed(0)} ms, p50 ${m.p50.toFixed(2)} ms`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return out;
}
