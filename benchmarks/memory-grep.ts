/**
 * Grep micro-benchmark: regex throughput inside the worker vs GNU `grep -c` on the same 40 MB text, the
 * cost of the first call (worker start, then corpus transfer), the in-process literal paths, and count
 * mode over millions of matches beside the CPU budget a grep of that size gets.
 * Run alone with `node --no-node-snapshot benchmarks/memory-grep.ts`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { processEnv } from '../core/env.ts';
import { GREP_BASE_MS, GREP_MS_PER_MILLION_CHARS, type GrepChunk, GrepRunner } from '../memory/grep/grep.ts';
import { median } from './stats.ts';

const TARGET_CHARS = 40 * 1024 * 1024;
const CHUNK_CHARS = 8000;
const WORDS =
  'the of and to in memory chunk graph vector search store token model context answer query index file line code'.split(
    ' ',
  );
// Same pattern for both engines: POSIX ERE and JS agree on this syntax.
const PATTERN = 'ERR-[0-9]{4}-[a-z]+';

/** Deterministic text: random word lines, with a rare `ERR-nnnn-word` marker to find. */
function makeText(): string {
  // mulberry32: small, seedable, and its low bits are usable (an LCG's are not).
  let seed = 42;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const lines: string[] = [];
  let size = 0;
  while (size < TARGET_CHARS) {
    const n = 6 + (rand() % 10);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(WORDS[rand() % WORDS.length] ?? 'x');
    if (rand() % 500 === 0)
      words.push(`ERR-${String(rand() % 10_000).padStart(4, '0')}-${WORDS[rand() % WORDS.length]}`);
    const line = words.join(' ');
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** Splits on line boundaries into chunks of about {@link CHUNK_CHARS}, like the size chunker would. */
function chunk(text: string): GrepChunk[] {
  const chunks: GrepChunk[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start + CHUNK_CHARS);
    end = end === -1 ? text.length : end + 1;
    chunks.push({ id: `c${chunks.length}`, text: text.slice(start, end) });
    start = end;
  }
  return chunks;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

const round = (x: number) => Math.round(x * 10) / 10;

/** Runs the benchmark; returns flat numbers (ms, MB/s, counts). */
export async function benchGrep(): Promise<Record<string, number>> {
  const text = makeText();
  const mb = text.length / 1e6;
  const corpus = chunk(text);
  const dir = await mkdtemp(join(tmpdir(), 'rlm-bench-grep-'));
  const file = join(dir, 'corpus.txt');
  await writeFile(file, text);
  // Start the worker on a one-line corpus first, so thread start-up and corpus transfer are told apart.
  const runner = new GrepRunner([{ id: 'warm', text: 'x' }], { timeoutMs: 60_000 });
  const opts = { limit: 100_000, timeoutMs: 60_000 };
  try {
    const start = await timed(() => runner.grep('x', opts));
    runner.setCorpus(corpus);
    const first = await timed(() => runner.grep(PATTERN, opts));
    const searches: number[] = [];
    for (let i = 0; i < 3; i++) searches.push((await timed(() => runner.grep(PATTERN, opts))).ms);
    const regexMs = median(searches);
    const literal: number[] = [];
    const literalCi: number[] = [];
    for (let i = 0; i < 3; i++) {
      literal.push((await timed(() => runner.grep('ERR-', { ...opts, literal: true }))).ms);
      literalCi.push(
        (await timed(() => runner.grep('err-', { ...opts, literal: true, ignoreCase: true }))).ms,
      );
    }
    // Count mode over every occurrence of a common word: millions of matches, no cap, against the
    // budget a grep of this size gets (2 s of CPU plus 50 ms per million characters).
    const counts: number[] = [];
    let counted = 0;
    for (let i = 0; i < 3; i++) {
      const c = await timed(() => runner.grep('\\bthe\\b', { count: true }));
      counts.push(c.ms);
      counted = c.value.counts?.matches ?? 0;
    }
    const result: Record<string, number> = {
      corpusMB: round(mb),
      chunks: corpus.length,
      matches: first.value.matches.length,
      workerStartMs: round(start.ms),
      firstSearchMs: round(first.ms),
      corpusTransferMs: round(first.ms - regexMs),
      regexMs: round(regexMs),
      regexMBps: round(mb / (regexMs / 1000)),
      literalMs: round(median(literal)),
      literalMBps: round(mb / (median(literal) / 1000)),
      literalIgnoreCaseMs: round(median(literalCi)),
      countMatches: counted,
      countMs: round(median(counts)),
      countMBps: round(mb / (median(counts) / 1000)),
      countBudgetMs: round(GREP_BASE_MS + (text.length / 1e6) * GREP_MS_PER_MILLION_CHARS),
    };
    const gnu: number[] = [];
    let gnuCount = -1;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const out = spawnSync('grep', ['-c', '-E', PATTERN, file], {
        encoding: 'utf8',
        env: { ...processEnv(), LC_ALL: 'C' },
      });
      if (out.error || (out.status !== 0 && out.status !== 1)) break;
      gnu.push(performance.now() - t);
      gnuCount = Number(out.stdout.trim());
    }
    if (gnu.length > 0) {
      result.gnuGrepMs = round(median(gnu));
      result.gnuGrepMBps = round(mb / (median(gnu) / 1000));
      result.gnuGrepMatches = gnuCount;
    }
    return result;
  } finally {
    await runner.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await benchGrep(), null, 2));
}
