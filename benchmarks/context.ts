/**
 * Big contexts end to end, rlm beside the official Python RLM (`npm run bench -- context`): the same
 * scripted run over the same generated logs, against the same zero-latency OpenAI-compatible server on
 * 127.0.0.1 (fake-openai.ts), so every second measured is the runtimes' own. The root model's one reply is
 * a block that counts a regex over the whole context, asks 100 batched sub-calls about slices of it, and
 * ends the run with FINAL; the answer is checked against the count the generator wrote.
 *
 * Per runtime, size (1, 10, 100 MB; `RLM_BENCH_CONTEXT_MB=1,10` for others) and shape (one file, a folder
 * of 256 KiB files): time to the first model request (what reading the input costs before the model can
 * start), the whole run (process start to exit), the 100 sub-calls (first arrival to last answer at the
 * server, and the most in flight at once), and peak memory (tree-memory.ts). Runs alternate between the
 * runtimes (`RLM_BENCH_CONTEXT_RUNS` rounds, default 3) and every figure is a median.
 *
 * The official RLM runs from a virtual environment (`RLM_BENCH_OFFICIAL_PYTHON`, default
 * /tmp/official-rlm/bin/python; install steps in the peers' README); where it is missing its column says so.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processEnv, readEnv } from '../core/env.ts';
import { type FakeOpenAI, type ServerLog, SUB_CALL_MARKER, startFakeOpenAI } from './fake-openai.ts';
import { Rng } from './rng.ts';
import { type TreeMemory, treeCpuMs, watchTreeMemory } from './tree-memory.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'rlm.js');
const OFFICIAL_SCRIPT = path.join(ROOT, 'benchmarks', 'official-rlm.py');
const MB = 1024 * 1024;
const FOLDER_FILE_BYTES = 256 * 1024;
const SUB_CALLS = 100;
const SLICE_CHARS = 2000;
const QUESTION = 'How many ERR-NNNN codes does the context contain?';

/** The root reply for rlm: one block doing the whole run (works for one string or several documents). */
const JS_SCRIPT = [
  '```repl',
  "const docs = typeof context === 'string' ? [context] : Array.from(context);",
  'let n = 0;',
  'for (const d of docs) n += (d.match(/ERR-\\d{4}/g) || []).length;',
  'const total = docs.reduce((s, d) => s + d.length, 0);',
  'const slices = [];',
  `for (let i = 0; i < ${SUB_CALLS}; i++) {`,
  `  let at = Math.floor((i * total) / ${SUB_CALLS}), k = 0;`,
  '  while (at >= docs[k].length) { at -= docs[k].length; k++; }',
  `  slices.push(docs[k].slice(at, at + ${SLICE_CHARS}));`,
  '}',
  `const answers = await llm_query_batched(slices.map((s, i) => '${SUB_CALL_MARKER} ' + i + ': reply ok.\\n' + s));`,
  "FINAL(n + ' ' + answers.filter((a) => a === 'ok').length);",
  '```',
].join('\n');

/**
 * rlm's grep over the same context, timed inside the block: a count with grep's count mode
 * (`{count: true}`: a number per document, no cap). Over `--context` files grep runs in the sandbox over
 * the text its isolate process holds and builds no index; the second call repeats the first.
 */
const GREP_SCRIPT = [
  '```repl',
  'const n = (r) => (Array.isArray(r) ? r.length : r.matches);',
  "const mode = (r) => (Array.isArray(r) ? (r.truncated ? 'capped' : 'listed') : 'count');",
  'const t0 = performance.now();',
  "const first = grep('ERR-\\\\d{4}', { count: true, limit: 100000 });",
  'const t1 = performance.now();',
  "const again = grep('ERR-\\\\d{4}', { count: true, limit: 100000 });",
  'const t2 = performance.now();',
  'FINAL(JSON.stringify({ n: n(first), again: n(again), mode: mode(first), firstMs: t1 - t0, againMs: t2 - t1 }));',
  '```',
].join('\n');

/** The same run for the official RLM, in its Python REPL (it ends a run through `answer["ready"]`). */
const PY_SCRIPT = [
  '```repl',
  'import re',
  'docs = context if isinstance(context, list) else [context]',
  "n = sum(len(re.findall(r'ERR-\\d{4}', d)) for d in docs)",
  'total = sum(len(d) for d in docs)',
  'slices = []',
  `for i in range(${SUB_CALLS}):`,
  `    at, k = (i * total) // ${SUB_CALLS}, 0`,
  '    while at >= len(docs[k]):',
  '        at -= len(docs[k])',
  '        k += 1',
  `    slices.append(docs[k][at:at + ${SLICE_CHARS}])`,
  `answers = llm_query_batched([f'${SUB_CALL_MARKER} {i}: reply ok.\\n{s}' for i, s in enumerate(slices)])`,
  "answer['content'] = f\"{n} {sum(a == 'ok' for a in answers)}\"",
  "answer['ready'] = True",
  '```',
].join('\n');

const LEVELS = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'];
const SERVICES = ['billing', 'auth', 'search', 'ingest', 'mailer', 'gateway', 'scheduler'];
const WORDS =
  'request served cache miss retry queued user session token refreshed timeout upstream slow disk flushed index merged'.split(
    ' ',
  );

/** Log lines: `TIME service LEVEL words [ERR-NNNN]`. Returns the text and how many ERR codes it holds. */
function logText(bytes: number, rng: Rng): { text: string; codes: number } {
  const lines: string[] = [];
  let size = 0;
  let codes = 0;
  let second = 0;
  while (size < bytes) {
    second += rng.int(0, 3);
    const t = new Date(Date.UTC(2025, 0, 1) + second * 1000).toISOString();
    const words = Array.from({ length: rng.int(4, 12) }, () => rng.pick(WORDS)).join(' ');
    const level = rng.pick(LEVELS);
    let line = `${t} ${rng.pick(SERVICES)} ${level} ${words}`;
    if (level === 'ERROR') {
      line += ` ERR-${String(rng.int(0, 9999)).padStart(4, '0')}`;
      codes++;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return { text: `${lines.join('\n')}\n`, codes };
}

interface Corpus {
  path: string;
  codes: number;
}

/** One file of `mb` MB, and a folder of the same size in 256 KiB files. */
function writeCorpora(work: string, mb: number): { file: Corpus; folder: Corpus } {
  const rng = new Rng(`context-bench-${mb}`);
  const file = path.join(work, `log-${mb}mb.txt`);
  const one = logText(mb * MB, rng);
  writeFileSync(file, one.text);
  const folder = path.join(work, `logs-${mb}mb`);
  mkdirSync(folder);
  let codes = 0;
  for (let i = 0, left = mb * MB; left > 0; i++, left -= FOLDER_FILE_BYTES) {
    const part = logText(Math.min(FOLDER_FILE_BYTES, left), rng);
    writeFileSync(path.join(folder, `part-${String(i).padStart(5, '0')}.log`), part.text);
    codes += part.codes;
  }
  return { file: { path: file, codes: one.codes }, folder: { path: folder, codes } };
}

/** What one run measured. */
interface RunFigures {
  /** Why the run did not give the right answer, or null. Its figures are kept: they say how far it got. */
  failure: string | null;
  /** What the run answered (the grep run's figures). */
  answer: string;
  firstRequestMs: number;
  /** CPU time the runtime's processes had used when its first request arrived. */
  firstRequestCpuMs: number;
  wholeMs: number;
  /** CPU time its processes used in all (sampled: see tree-memory.ts). */
  cpuMs: number;
  batchMs: number;
  maxInFlight: number;
  treeMB: number;
  largestMB: number;
}

type Runtime = 'rlm' | 'official' | 'grep';

function command(runtime: Runtime, server: FakeOpenAI, corpus: string, python: string): [string, string[]] {
  if (runtime !== 'official') {
    const model = runtime === 'grep' ? 'openai:bench-grep' : 'openai:bench-js';
    const args = [
      'answer',
      QUESTION,
      '--context',
      corpus,
      '--model',
      model,
      '--max-iterations',
      '3',
      '--json',
    ];
    return [process.execPath, [BIN, ...args]];
  }
  return [python, [OFFICIAL_SCRIPT, server.url, 'bench-py', QUESTION, corpus]];
}

/** Runs one runtime once over `corpus`. */
async function runOnce(
  runtime: Runtime,
  server: FakeOpenAI,
  corpus: Corpus,
  python: string,
): Promise<RunFigures> {
  const log: ServerLog = server.reset();
  const [cmd, args] = command(runtime, server, corpus.path, python);
  const started = performance.now();
  const child = spawn(cmd, args, {
    env: { ...processEnv(), OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'bench', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stopWatching = watchTreeMemory(child.pid ?? -1);
  let firstRequestCpuMs = Number.NaN;
  log.onFirstRequest = () => {
    firstRequestCpuMs = treeCpuMs(child.pid ?? -1);
  };
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const wholeMs = performance.now() - started;
  const memory: TreeMemory = await stopWatching();
  const answer = (() => {
    try {
      return String((JSON.parse(stdout) as { answer?: unknown }).answer);
    } catch {
      return '';
    }
  })();
  const expected = runtime === 'grep' ? answer : `${corpus.codes} ${SUB_CALLS}`;
  const failure =
    code !== 0 || answer !== expected
      ? `exit ${code}, answer ${JSON.stringify(answer.slice(0, 100))} (expected ${expected}): ${stderr.trim().split('\n').at(-1)?.slice(0, 300) ?? ''}`
      : null;
  return {
    failure,
    answer,
    firstRequestMs: (log.firstRequestAt ?? Number.NaN) - started,
    firstRequestCpuMs,
    wholeMs,
    cpuMs: memory.cpuMs,
    batchMs: (log.lastSubCallAt ?? Number.NaN) - (log.firstSubCallAt ?? Number.NaN),
    maxInFlight: log.maxInFlight,
    treeMB: memory.treeMB,
    largestMB: memory.largestMB,
  };
}

function median(runs: RunFigures[]): Omit<RunFigures, 'failure' | 'answer'> & { failed: number } {
  const mid = (k: Exclude<keyof RunFigures, 'failure' | 'answer'>) => {
    const xs = runs.map((r) => r[k]).sort((a, b) => a - b);
    return xs[xs.length >> 1] ?? Number.NaN;
  };
  return {
    failed: runs.filter((r) => r.failure !== null).length,
    firstRequestMs: mid('firstRequestMs'),
    firstRequestCpuMs: mid('firstRequestCpuMs'),
    wholeMs: mid('wholeMs'),
    cpuMs: mid('cpuMs'),
    batchMs: mid('batchMs'),
    maxInFlight: mid('maxInFlight'),
    treeMB: mid('treeMB'),
    largestMB: mid('largestMB'),
  };
}

/** The official RLM's interpreter, or why it cannot run. */
function officialPython(): { python: string } | { missing: string } {
  const python = readEnv().benchContext.officialPython ?? '/tmp/official-rlm/bin/python';
  if (!existsSync(python)) return { missing: `no Python at ${python}` };
  try {
    execFileSync(python, ['-c', 'import rlm, openai'], { stdio: 'pipe' });
    return { python };
  } catch {
    return { missing: `the rlm package does not import in ${python}` };
  }
}

export async function benchContext(log: (s: string) => void = () => {}): Promise<Record<string, number>> {
  // Before this run adds to it: other work on the machine inflates every wall time.
  const loadBefore = os.loadavg()[0]!;
  const bench = readEnv().benchContext;
  const sizes = (bench.mb ?? '1,10,100').split(',').map(Number);
  const rounds = Number(bench.runs ?? 3);
  log('building dist/ for bin/rlm.js');
  execFileSync(process.execPath, [path.join(ROOT, 'build.mjs')], { cwd: ROOT, stdio: 'pipe' });
  const official = officialPython();
  if ('missing' in official) log(`official RLM column skipped: ${official.missing}`);
  const runtimes: Runtime[] = 'python' in official ? ['rlm', 'official'] : ['rlm'];
  const server = await startFakeOpenAI({
    'bench-js': JS_SCRIPT,
    'bench-py': PY_SCRIPT,
    'bench-grep': GREP_SCRIPT,
  });
  const work = mkdtempSync(path.join(tmpdir(), 'rlm-bench-context-'));
  const f: Record<string, number> = { rounds, officialMissing: 'missing' in official ? 1 : 0 };
  const loads: number[] = [];
  try {
    for (const mb of sizes) {
      const corpora = writeCorpora(work, mb);
      for (const shape of ['file', 'folder'] as const) {
        const corpus = corpora[shape];
        const runs: Record<Runtime, RunFigures[]> = { rlm: [], official: [], grep: [] };
        for (let round = 0; round < rounds; round++) {
          // Alternate which runtime goes first, so neither always meets a warmer page cache.
          const order = round % 2 === 0 ? runtimes : [...runtimes].reverse();
          for (const runtime of order) {
            loads.push(os.loadavg()[0]!);
            const r = await runOnce(runtime, server, corpus, 'python' in official ? official.python : '');
            runs[runtime].push(r);
            if (r.failure !== null) log(`${mb} MB ${shape} ${runtime} FAILED: ${r.failure}`);
            log(
              `${mb} MB ${shape} ${runtime}: first request ${r.firstRequestMs.toFixed(0)} ms (${r.firstRequestCpuMs.toFixed(0)} ms CPU), whole ${r.wholeMs.toFixed(0)} ms (${r.cpuMs.toFixed(0)} ms CPU), batch ${r.batchMs.toFixed(0)} ms (${r.maxInFlight} in flight), memory ${r.treeMB.toFixed(0)} MB`,
            );
          }
        }
        for (const runtime of runtimes) {
          for (const [k, v] of Object.entries(median(runs[runtime]))) f[`${runtime}.${shape}.${mb}.${k}`] = v;
        }
        f[`codes.${shape}.${mb}`] = corpus.codes;
        // grep once per context: what it costs, whether it counted, and whether it had to build the index.
        const g = await runOnce('grep', server, corpus, '');
        const seen = grepFigures(g, corpus.codes);
        log(`${mb} MB ${shape} grep: ${JSON.stringify(seen)}${g.failure === null ? '' : ` (${g.failure})`}`);
        for (const [k, v] of Object.entries(seen)) f[`grep.${shape}.${mb}.${k}`] = v;
      }
      rmSync(path.join(work, `log-${mb}mb.txt`), { force: true });
      rmSync(path.join(work, `logs-${mb}mb`), { recursive: true, force: true });
    }
  } finally {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
  f.loadBefore = loadBefore;
  f.loadMax = Math.max(...loads);
  f.loadMedian = loads.sort((a, b) => a - b)[loads.length >> 1] ?? Number.NaN;
  return f;
}

/** Modes of the grep run, as numbers for the figures table. */
const GREP_MODES = ['failed', 'listed', 'capped', 'count'] as const;

/** The grep run's answer as figures; mode `failed` (0) when it ended without one. */
function grepFigures(run: RunFigures, codes: number): Record<string, number> {
  try {
    const r = JSON.parse(run.answer) as { n: number; mode: string; firstMs: number; againMs: number };
    const mode = GREP_MODES.indexOf(r.mode as (typeof GREP_MODES)[number]);
    return {
      n: r.n,
      right: r.n === codes ? 1 : 0,
      mode: Math.max(mode, 0),
      firstMs: r.firstMs,
      againMs: r.againMs,
    };
  } catch {
    return { n: Number.NaN, right: 0, mode: 0, firstMs: Number.NaN, againMs: Number.NaN };
  }
}
