/**
 * The `rlm` command at scale, end to end, as a user runs it: `rlm ingest` of generated Markdown (many
 * files, then one big file) and `rlm grep` over the store, each in its own process under
 * `/usr/bin/time`, so the wall time includes Node's start and the peak RSS is the kernel's figure.
 * GNU `grep -rE` runs on the same files in the same run for comparison. Every figure is the median of three
 * runs, and a grep over a one-line store gives rlm's fixed cost (Node, modules, store, worker).
 *
 * Size: `RLM_BENCH_SCALE_MB` (default 100). Runs the compiled CLI (bin/rlm.js → dist/), built first.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEnv } from '../core/env.ts';
import { buildDist } from './build-dist.ts';
import { Rng } from './rng.ts';
import { median, timed } from './timed.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'rlm.js');
/** The pattern both greps look for: POSIX ERE and JavaScript read it the same way. */
export const SCALE_PATTERN = 'ERR-[0-9]{4}-[a-z]+';

const WORDS = (
  'the of and to in a is that for it as was with be by on not this are or from at which but have an they ' +
  'memory chunk graph vector search store token model context answer query index file line code river ' +
  'stone garden window bridge lantern copper meadow harbor violin thunder pepper marble falcon orchard ' +
  'refreshToken parseConfig retry_backoff session_id getUserName'
).split(' ');

/** Writes `bytes` of Markdown under `dir` in files of about `fileBytes`; returns the file count. */
export function writeMarkdown(dir: string, bytes: number, fileBytes: number, seed = 42): number {
  mkdirSync(dir, { recursive: true });
  const rng = new Rng(seed);
  let written = 0;
  let files = 0;
  while (written < bytes) {
    const parts: string[] = [];
    let size = 0;
    let section = 0;
    const target = Math.min(fileBytes, bytes - written);
    while (size < target) {
      let s: string;
      if (size === 0 || rng.next() < 0.03) s = `\n## Section ${++section}\n\n`;
      else {
        const n = 8 + rng.int(0, 12);
        const words = Array.from({ length: n }, () => WORDS[rng.int(0, WORDS.length - 1)]!);
        if (rng.next() < 0.002) words.push(`ERR-${String(rng.int(0, 9999)).padStart(4, '0')}-stone`);
        s = `${words.join(' ')}.${rng.next() < 0.25 ? '\n\n' : '\n'}`;
      }
      parts.push(s);
      size += s.length;
    }
    writeFileSync(path.join(dir, `doc-${String(files).padStart(5, '0')}.md`), parts.join(''));
    written += size;
    files++;
  }
  return files;
}

/** A one-line file: ingesting it measures the process's fixed memory (Node, modules, tokenizer). */
function tinyFile(work: string): string {
  const file = path.join(work, 'tiny.md');
  writeFileSync(file, '# tiny\n');
  return file;
}

export async function benchCliScale(log: (s: string) => void = () => {}): Promise<Record<string, number>> {
  // Before anything of this run adds to it: the run's own processes would raise it.
  const loadAverage = os.loadavg()[0]!;
  const mb = Number(readEnv().benchScaleMb ?? 100);
  const bytes = mb * 1024 * 1024;
  buildDist(log);
  const work = mkdtempSync(path.join(tmpdir(), 'rlm-bench-scale-'));
  try {
    const many = path.join(work, 'many');
    const files = writeMarkdown(many, bytes, 200_000);
    log(`${mb} MB of Markdown in ${files} files; ingesting`);
    const store = path.join(work, 'store');
    // As a user runs it: bin/rlm.js starts plain `node` (see its first line). Peak RSS varies from run to
    // run with when V8 collects, so each ingest runs three times, into a fresh store each time.
    const ingest = median(3, (i) => {
      rmSync(store, { recursive: true, force: true });
      if (i > 0) log(`ingest again (${i + 1}/3)`);
      return timed(process.execPath, [BIN, 'ingest', many, '--store', store]);
    });
    log(`ingest ${ingest.ms.toFixed(0)} ms, ${ingest.rssMB.toFixed(0)} MB; grep`);
    const grepArgs = [BIN, 'grep', SCALE_PATTERN, '--store', store, '--limit', '100000'];
    timed(process.execPath, grepArgs); // warm the page cache for both greps alike
    timed('grep', ['-rE', SCALE_PATTERN, many]);
    const rlmGrep = median(3, () => timed(process.execPath, grepArgs));
    const gnuGrep = median(3, () => timed('grep', ['-rE', SCALE_PATTERN, many]));
    // What any rlm grep costs before it reads a byte of text: Node, modules, the store, the worker.
    const tinyStore = path.join(work, 'tiny-store');
    timed(process.execPath, [BIN, 'ingest', tinyFile(work), '--store', tinyStore]);
    const tinyGrep = median(3, () =>
      timed(process.execPath, [BIN, 'grep', SCALE_PATTERN, '--store', tinyStore]),
    );
    rmSync(store, { recursive: true, force: true });

    // The same amount of text in one file: peak RSS should not depend on how big a single file is.
    const one = path.join(work, 'one');
    writeMarkdown(one, bytes, bytes + 1, 7);
    log(`one ${mb} MB file; ingesting`);
    const big = median(3, () => {
      const bigStore = path.join(work, 'store1');
      rmSync(bigStore, { recursive: true, force: true });
      return timed(process.execPath, [BIN, 'ingest', one, '--store', bigStore]);
    });
    return {
      loadAverage,
      corpusMB: mb,
      files,
      ingestMs: ingest.ms,
      ingestCpuMs: ingest.cpuMs,
      ingestRssMB: ingest.rssMB,
      ingestRssRatio: ingest.rssMB / mb,
      bigFileMB: mb,
      bigFileIngestMs: big.ms,
      bigFileIngestCpuMs: big.cpuMs,
      bigFileIngestRssMB: big.rssMB,
      bigFileRssRatio: big.rssMB / mb,
      bigFileVsManyRss: big.rssMB / ingest.rssMB,
      baselineRssMB: timed(process.execPath, [
        BIN,
        'ingest',
        tinyFile(work),
        '--store',
        path.join(work, 'store2'),
      ]).rssMB,
      rlmGrepMs: rlmGrep.ms,
      rlmGrepCpuMs: rlmGrep.cpuMs,
      rlmGrepRssMB: rlmGrep.rssMB,
      rlmGrepRssRatio: rlmGrep.rssMB / mb,
      rlmGrepLines: rlmGrep.stdoutLines,
      rlmGrepTinyStoreMs: tinyGrep.ms,
      nodeStartMs: median(3, () => timed(process.execPath, ['-e', '0'])).ms,
      rlmGrepTinyStoreRssMB: tinyGrep.rssMB,
      gnuGrepMs: gnuGrep.ms,
      gnuGrepCpuMs: gnuGrep.cpuMs,
      gnuGrepRssMB: gnuGrep.rssMB,
      gnuGrepLines: gnuGrep.stdoutLines,
      grepVsGnu: rlmGrep.ms / Math.max(gnuGrep.ms, 1),
      grepCpuVsGnu: rlmGrep.cpuMs / Math.max(gnuGrep.cpuMs, 10),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await benchCliScale((s) => process.stderr.write(`${s}\n`)));
}
