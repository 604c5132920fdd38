/**
 * A folder store written in many small steps (one file per ingest, as the Claude Code hook imports one
 * session per call): how many segments it ends with, and what grep, search and a fresh process's first
 * search cost then, with the small segments merged (the store's behaviour, memory/engine/merge-plan.ts)
 * and without (merging switched off, as before it existed).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setMergeThresholds } from '../memory/engine/merge-plan.ts';
import { MANIFEST_FILE } from '../memory/files/manifest.ts';
import { ChunkStore } from '../memory/files/store.ts';

/** Writes, one ingest each. */
const WRITES = 400;
/** Timed calls per figure (the median is reported). */
const CALLS = 30;

async function median(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[CALLS >> 1]!;
}

/** One store written in {@link WRITES} ingests, merging or not; its figures. */
async function writeAndMeasure(merging: boolean): Promise<Record<string, number>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rlm-bench-segments-'));
  const before = merging
    ? undefined
    : setMergeThresholds({ small: 256, at: Number.MAX_SAFE_INTEGER, merged: 2_048 });
  try {
    const store = await ChunkStore.open(path.join(dir, 'store'), { create: true });
    const started = performance.now();
    for (let i = 0; i < WRITES; i++) {
      const file = path.join(dir, `session-${i}.md`);
      writeFileSync(
        file,
        `# Session ${i}\n\nretry backoff billing item ${i} token segtok${i} ERR-${1000 + i}\n`,
      );
      await store.ingestPaths([file]);
    }
    const writeMs = (performance.now() - started) / WRITES;
    const grepMs = await median(() => store.grep('ERR-1\\d\\d', { count: true }));
    const searchMs = await median(() => store.search('billing token'));
    await store.close();
    const fresh = await ChunkStore.open(path.join(dir, 'store'));
    const t = performance.now();
    await fresh.search('billing token');
    const firstSearchMs = performance.now() - t;
    await fresh.close();
    const manifest = JSON.parse(readFileSync(path.join(dir, 'store', MANIFEST_FILE), 'utf8')) as {
      segments: string[];
    };
    return { segments: manifest.segments.length, writeMs, grepMs, searchMs, firstSearchMs };
  } finally {
    if (before) setMergeThresholds(before);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Both stores' figures, `merged.*` and `unmerged.*`. */
export async function benchSegments(log: (s: string) => void): Promise<Record<string, number>> {
  log(`${WRITES} single-file ingests, small segments merged`);
  const merged = await writeAndMeasure(true);
  log(`${WRITES} single-file ingests, merging off`);
  const unmerged = await writeAndMeasure(false);
  const out: Record<string, number> = { writes: WRITES, calls: CALLS };
  for (const [k, v] of Object.entries(merged)) out[`merged.${k}`] = v;
  for (const [k, v] of Object.entries(unmerged)) out[`unmerged.${k}`] = v;
  return out;
}
