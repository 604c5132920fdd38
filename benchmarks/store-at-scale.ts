/**
 * The folder store at the scale it is built for (`npm run bench -- scale`): a store of about 100M tokens
 * beside one of about 3M, both from generated stand-ins for `/usr/share/doc` (scale-corpus.ts), measured
 * in the same run: cold `rlm peek`, `rlm links`, `rlm stats` and `rlm search` in a process of their own
 * under `/usr/bin/time` (wall, CPU, peak RSS; medians of three), the MCP server's `rlm_peek` and
 * `rlm_search` with the store open (p50 / p95), ingest memory at 100 MB and 1 GB of input and its
 * throughput, the store's size on disk beside its text, and `rlm repair` of a healthy and of a damaged
 * store. Commands run the compiled CLI (bin/rlm.js → dist/), built first.
 *
 * Corpora and the 1 GB ingest (a memory figure) are slow to make: with RLM_BENCH_STORE_DIR they are kept
 * there and reused, and `node benchmarks/store-at-scale.ts prepare` makes them ahead of a locked run.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEnv } from '../core/env.ts';
import { buildDist } from './build-dist.ts';
import { writeDocCorpus } from './scale-corpus.ts';
import { measureServer, measureServerIngest } from './store-at-scale-mcp.ts';
import { median, timed } from './timed.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'rlm.js');
/** Corpus sizes, MB: about 3M tokens, the 100 MB ingest, about 100M tokens, 1 GB. */
const SIZES = { small: 10, mid: 100, big: 335, huge: 1000 } as const;
/** The query the issue timed. */
const QUERY = 'libc security fix';

type Figures = Record<string, number>;

/** The folder corpora and cached figures live in. */
function workDir(): { dir: string; keep: boolean } {
  const kept = readEnv().benchStoreDir;
  if (kept) {
    mkdirSync(kept, { recursive: true });
    return { dir: kept, keep: true };
  }
  return { dir: mkdtempSync(path.join(os.tmpdir(), 'rlm-bench-store-')), keep: false };
}

/** The corpus of `mb` MB, generated once. */
function corpus(dir: string, mb: number, log: (s: string) => void): string {
  const folder = path.join(dir, `corpus-${mb}`);
  const done = `${folder}.done`;
  if (!existsSync(done)) {
    rmSync(folder, { recursive: true, force: true });
    log(`generating a ${mb} MB corpus`);
    writeDocCorpus(folder, mb * 1e6);
    writeFileSync(done, '');
  }
  return folder;
}

/** `rlm ARGS` under /usr/bin/time. */
function rlm(args: string[]): ReturnType<typeof timed> {
  return timed(process.execPath, [BIN, ...args]);
}

/** Ingests `from` into a fresh `store`: wall, CPU, peak RSS and the report. */
function ingest(
  from: string,
  store: string,
): { run: ReturnType<typeof timed>; report: Record<string, number> } {
  rmSync(store, { recursive: true, force: true });
  const run = rlm(['ingest', from, '--store', store, '--json']);
  return { run, report: JSON.parse(run.stdout) as Record<string, number> };
}

/**
 * The 1 GB ingest's figures, measured once per work folder (memory: it need not run under the lock).
 * Read back from there, they carry `cached: 1` and the time they were measured (`measuredAt`, ms).
 */
function hugeIngest(dir: string, log: (s: string) => void): Figures {
  const cache = path.join(dir, 'huge-ingest.json');
  if (existsSync(cache)) return { ...(JSON.parse(readFileSync(cache, 'utf8')) as Figures), cached: 1 };
  const from = corpus(dir, SIZES.huge, log);
  log('ingesting 1 GB (memory figure)');
  const store = path.join(dir, 'store-huge');
  const { run, report } = ingest(from, store);
  const segmentMB = largestSegmentMB(store);
  rmSync(store, { recursive: true, force: true });
  const figures = {
    ms: run.ms,
    cpuMs: run.cpuMs,
    rssMB: run.rssMB,
    chunks: report.chunks!,
    segmentMB,
    loadAverage: os.loadavg()[0]!,
    measuredAt: Date.now(),
  };
  writeFileSync(cache, JSON.stringify(figures));
  return figures;
}

/**
 * MB of the largest chunk file (`seg-N.chunks`) of the folder store `store`: its segment's text, plus
 * a header of about 30 bytes a chunk. Batches close after the document that fills them, so a segment
 * holds 4 MiB of text or more.
 */
function largestSegmentMB(store: string): number {
  const segments = path.join(store, 'segments');
  let largest = 0;
  for (const name of readdirSync(segments))
    if (name.endsWith('.chunks')) largest = Math.max(largest, statSync(path.join(segments, name)).size);
  return largest / 1e6;
}

/** Bytes of the files under `dir` whose names `match`. */
function bytesOf(dir: string, match: (name: string) => boolean): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) total += bytesOf(file, match);
    else if (match(entry.name)) total += statSync(file).size;
  }
  return total;
}

/** A chunk id from the middle of a store (a document with a few chunks), for peek and links. */
function middleChunk(store: string): string {
  const out = rlm(['ls', '--store', store, '--json']).stdout;
  const docs = (JSON.parse(out) as { documents: { id: string; chunks: number }[] }).documents.filter(
    (d) => d.chunks > 3,
  );
  return `${docs[docs.length >> 1]!.id}:2`;
}

/** Cold commands on one store: median wall, CPU and RSS of three runs each. */
function coldCommands(store: string, prefix: string): Figures {
  const id = middleChunk(store);
  const commands: [string, string[]][] = [
    ['peek', ['peek', id]],
    ['links', ['links', id]],
    ['stats', ['stats']],
    ['search', ['search', QUERY]],
    ['remember', ['remember', 'The benchmark store keeps generated documentation.', '--topic', 'bench']],
  ];
  const out: Figures = {};
  for (const [name, args] of commands) {
    const r = median(3, () => rlm([...args, '--store', store, '--json']));
    out[`${prefix}.${name}.ms`] = r.ms;
    out[`${prefix}.${name}.cpuMs`] = r.cpuMs;
    out[`${prefix}.${name}.rssMB`] = r.rssMB;
  }
  return out;
}

/** Flips one byte in the body of `file`: its CRC no longer matches. */
function damage(file: string): void {
  const bytes = readFileSync(file);
  const at = bytes.length - 100;
  bytes.writeUInt8(bytes.readUInt8(at) ^ 0x5a, at);
  writeFileSync(file, bytes);
}

/** Makes the corpora and the 1 GB figures (slow; no timing that needs the bench lock). */
export function prepare(log: (s: string) => void = () => {}): void {
  buildDist(log);
  const { dir } = workDir();
  for (const mb of Object.values(SIZES)) corpus(dir, mb, log);
  hugeIngest(dir, log);
}

export async function benchStoreAtScale(log: (s: string) => void = () => {}): Promise<Figures> {
  const loadAverage = os.loadavg()[0]!;
  buildDist(log);
  const { dir, keep } = workDir();
  const f: Figures = { loadAverage };
  try {
    const huge = hugeIngest(dir, log);
    for (const [k, v] of Object.entries(huge)) f[`huge.${k}`] = v;
    const tiny = path.join(dir, 'tiny.md');
    writeFileSync(tiny, '# tiny\n');
    f.baselineRssMB = ingest(tiny, path.join(dir, 'store-tiny')).run.rssMB;
    rmSync(path.join(dir, 'store-tiny'), { recursive: true, force: true });

    // Three runs: one ingest's peak varies by some 15 MB from run to run, as much as the goal allows.
    log('ingesting 100 MB (three times)');
    const peaks: number[] = [];
    const mid = median(3, () => {
      const { run } = ingest(corpus(dir, SIZES.mid, log), path.join(dir, 'store-mid'));
      peaks.push(run.rssMB);
      return run;
    });
    // The same corpus and code cut the same segments every run: the last run's store stands for all.
    f['mid.segmentMB'] = largestSegmentMB(path.join(dir, 'store-mid'));
    rmSync(path.join(dir, 'store-mid'), { recursive: true, force: true });
    Object.assign(f, { 'mid.ms': mid.ms, 'mid.cpuMs': mid.cpuMs, 'mid.rssMB': mid.rssMB });
    Object.assign(f, { 'mid.rssMinMB': Math.min(...peaks), 'mid.rssMaxMB': Math.max(...peaks) });
    log('rlm_ingest of 100 MB and of a one-line file, each by an rlm serve of its own');
    const served = await measureServerIngest(
      BIN,
      corpus(dir, SIZES.mid, log),
      path.join(dir, 'store-served'),
    );
    const servedTiny = await measureServerIngest(BIN, tiny, path.join(dir, 'store-served'));
    Object.assign(f, {
      'served.ms': served.ms,
      'served.rssMB': served.rssMB,
      'served.serverMB': served.serverMB,
      'served.afterMB': served.afterMB,
      'served.baselineRssMB': servedTiny.serverMB,
    });

    log(`ingesting ${SIZES.big} MB (the big store, three times)`);
    const big = path.join(dir, 'store-big');
    let built: ReturnType<typeof ingest> | undefined;
    // The last run's store is the one the commands below read.
    const bigRun = median(3, () => {
      built = ingest(corpus(dir, SIZES.big, log), big);
      return built.run;
    });
    Object.assign(f, {
      'big.ingestMs': bigRun.ms,
      'big.ingestCpuMs': bigRun.cpuMs,
      'big.ingestRssMB': bigRun.rssMB,
    });
    if (built === undefined) throw new Error('no ingest ran');
    for (const k of ['documents', 'chunks', 'links', 'tokens']) f[`big.${k}`] = built.report[k]!;
    log('ingesting the small store');
    const small = path.join(dir, 'store-small');
    const builtSmall = ingest(corpus(dir, SIZES.small, log), small);
    for (const k of ['documents', 'chunks', 'links', 'tokens']) f[`small.${k}`] = builtSmall.report[k]!;

    const stats = JSON.parse(rlm(['stats', '--store', big, '--json']).stdout) as { bytes: number };
    f.textMB = stats.bytes / 1e6;
    f.corpusMB = bytesOf(corpus(dir, SIZES.big, log), () => true) / 1e6;
    f['disk.totalMB'] = bytesOf(big, () => true) / 1e6;
    f['disk.chunksMB'] = bytesOf(big, (n) => n.endsWith('.chunks')) / 1e6;
    f['disk.bm25MB'] = bytesOf(big, (n) => n.endsWith('.bm25')) / 1e6;
    f['disk.linksMB'] = bytesOf(big, (n) => n.endsWith('.links')) / 1e6;
    f['disk.documentsMB'] = bytesOf(big, (n) => n.startsWith('documents-')) / 1e6;

    log('cold commands');
    Object.assign(f, coldCommands(small, 'smallCli'), coldCommands(big, 'bigCli'));
    log('the MCP server with each store open');
    Object.assign(f, await measureServer(small, 'smallMcp'), await measureServer(big, 'bigMcp'));

    log('repair: a healthy store, then one damaged index and one damaged links file');
    const healthy = rlm(['repair', '--store', big, '--json']);
    Object.assign(f, {
      'repair.ms': healthy.ms,
      'repair.cpuMs': healthy.cpuMs,
      'repair.rssMB': healthy.rssMB,
    });
    const segments = path.join(big, 'segments');
    const names = readdirSync(segments)
      .filter((n) => n.endsWith('.bm25'))
      .sort();
    damage(path.join(segments, names[names.length >> 1]!));
    damage(path.join(segments, names[names.length >> 2]!.replace('.bm25', '.links')));
    const damaged = rlm(['repair', '--store', big, '--json']);
    Object.assign(f, {
      'repairDamaged.ms': damaged.ms,
      'repairDamaged.cpuMs': damaged.cpuMs,
      'repairDamaged.rssMB': damaged.rssMB,
    });
    f.loadAfter = os.loadavg()[0]!;
    return f;
  } finally {
    for (const name of ['store-big', 'store-small'])
      if (!keep) rmSync(path.join(dir, name), { recursive: true, force: true });
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  if (process.argv[2] === 'prepare') prepare(log);
  else console.log(await benchStoreAtScale(log));
}
