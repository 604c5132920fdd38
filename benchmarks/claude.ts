/**
 * `npm run bench claude`: importing Claude Code history. Generates 1,000 sessions (~200 MB, most of it tool
 * output, as in real sessions) over 20 projects, imports them into a fresh store in a child process (so its
 * peak RSS is the import's alone), re-imports (everything unchanged), and times recall. Then imports one
 * 100 MB session on its own, to show a big session is streamed rather than loaded.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTree } from './claude-corpus.ts';

type Figures = Record<string, number>;

const QUERIES = [
  'flaky login test',
  'slow build cache',
  'memory leak worker listeners',
  'database migration index',
  'timezone reports UTC',
  'rate limiting backoff',
  'deploy token vault',
  'css layout mobile flex',
];

/** The child's part: import, re-import, recall timings; prints figures as JSON. */
async function child(projectsDir: string, storeDir: string): Promise<void> {
  const { ChunkStore } = await import('../memory/files/store.ts');
  const { importClaude } = await import('../src/claude/import.ts');
  const { recall } = await import('../src/claude/catalog.ts');
  const t0 = performance.now();
  const store = await ChunkStore.open(storeDir, { create: true });
  const r = await importClaude(store, { projectsDir });
  const importMs = performance.now() - t0;
  const importRssMB = process.resourceUsage().maxRSS / 1024;
  const t1 = performance.now();
  const again = await importClaude(store, { projectsDir });
  const reimportMs = performance.now() - t1;
  await store.close();
  const reader = await ChunkStore.open(storeDir);
  const t2 = performance.now();
  await recall(reader, QUERIES[0]!, { k: 10 }); // first recall loads the indexes
  const firstRecallMs = performance.now() - t2;
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const q = QUERIES[i % QUERIES.length]!;
    const s = performance.now();
    await recall(reader, q, i % 4 === 0 ? { k: 10, project: `app-${i % 20}-service` } : { k: 10 });
    times.push(performance.now() - s);
  }
  await reader.close();
  times.sort((a, b) => a - b);
  const figures: Figures = {
    files: r.files,
    exchanges: r.exchanges,
    chunks: r.chunks,
    importMs,
    importRssMB,
    reimportMs,
    reimportUnchanged: again.unchanged,
    firstRecallMs,
    recallP50Ms: times[Math.floor(times.length * 0.5)]!,
    recallP95Ms: times[Math.floor(times.length * 0.95)]!,
  };
  process.stdout.write(JSON.stringify(figures));
}

/** The child's part for one huge session: import time and peak RSS. */
async function childOne(file: string, storeDir: string): Promise<void> {
  const { ChunkStore } = await import('../memory/files/store.ts');
  const { importClaude } = await import('../src/claude/import.ts');
  const t0 = performance.now();
  const store = await ChunkStore.open(storeDir, { create: true });
  const r = await importClaude(store, { sessions: [file] });
  await store.close();
  const figures: Figures = {
    bigImportMs: performance.now() - t0,
    bigRssMB: process.resourceUsage().maxRSS / 1024,
    bigExchanges: r.exchanges,
  };
  process.stdout.write(JSON.stringify(figures));
}

function runChild(args: string[]): Figures {
  const out = execFileSync(
    process.execPath,
    ['--no-node-snapshot', fileURLToPath(import.meta.url), ...args],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return JSON.parse(out) as Figures;
}

/** Runs the benchmark: generation here, import and recall in a child process. */
export async function benchClaude(
  opts: { sessions?: number; bytesPerSession?: number; log?: (s: string) => void } = {},
): Promise<Figures> {
  const log = opts.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'rlm-bench-claude-'));
  try {
    const sessions = opts.sessions ?? 1000;
    log(`generating ${sessions} sessions…`);
    const { projectsDir, bytes } = generateTree(dir, {
      projects: 20,
      sessions,
      bytesPerSession: opts.bytesPerSession ?? 200_000,
    });
    log(`${(bytes / 1e6).toFixed(0)} MB generated; importing…`);
    const many = runChild(['--child', projectsDir, join(dir, 'store')]);
    rmSync(join(dir, 'projects'), { recursive: true, force: true });
    log('generating one 100 MB session…');
    const big = generateTree(join(dir, 'big'), { projects: 1, sessions: 1, bytesPerSession: 100_000_000 });
    const file = join(big.projectsDir, readdirSync(big.projectsDir)[0]!, 'sess-00000.jsonl');
    const one = runChild(['--child-one', file, join(dir, 'big-store')]);
    return { sessions, corpusMB: bytes / 1e6, ...many, bigMB: big.bytes / 1e6, ...one };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!);
if (process.argv[2] === '--child-one') await childOne(process.argv[3]!, process.argv[4]!);
