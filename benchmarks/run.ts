/**
 * `npm run bench [memory|memories|segments|sandbox|cli|scale|loop|scaling|claude|hostile|postgres|context ...]`: runs the runtime micro-benchmarks and rewrites the
 * matching sections of BENCHMARKS.md, with the machine and the date. Sections not run are kept. With
 * `--prepare`, only builds what those sections reuse between runs (outside the benchmark lock).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { writePrelude } from '../build-prelude.ts';
import { SHAPES } from './hostile.ts';
import { describeStoreAtScale } from './store-at-scale-report.ts';

type Figures = Record<string, number>;

interface Section {
  title: string;
  /** What each figure is, and its target where the issue sets one. */
  run: (log: (s: string) => void) => Promise<Figures>;
  describe: (f: Figures) => string[];
  /** Builds what the run reuses, so it can be done outside the benchmark lock (`--prepare`). */
  prepare?: (log: (s: string) => void) => Promise<void>;
}

const fmt = (n: number | undefined, digits = 2) =>
  n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(digits);
const verdict = (ok: boolean) => (ok ? 'meets target' : '**misses target**');

const SECTIONS: Record<string, Section> = {
  memory: {
    title: 'Chunk graph (memory/)',
    run: async (log) => {
      const { benchStore } = await import('./store-scale.ts');
      const { benchText } = await import('./memory-text.ts');
      const { benchSearch } = await import('./memory-search.ts');
      const { benchGrep } = await import('./memory-grep.ts');
      const store = await benchStore({ log });
      const text = await benchText();
      const search = await benchSearch();
      const grep = await benchGrep();
      return { ...store, ...prefix('text', text), ...prefix('bm25', search), ...prefix('grep', grep) };
    },
    describe: (f) => [
      `| figure | value | target |`,
      `|---|---|---|`,
      `| ingest of ${fmt(f.corpusMB, 1)} MB generated prose (${f.ingestTokens} tokens, ${f.ingestChunks} chunks, default chunkers) | ${fmt(f.ingestMs, 0)} ms (${fmt(f.ingestMBps, 1)} MB/s) | ≤ 10 000 ms: ${verdict((f.ingestMs ?? Infinity) <= 10_000)} |`,
      `| ingest of the same corpus into ~100k chunks (size chunker, 100 tokens) | ${fmt(f.ingest100kMs, 0)} ms, ${f.chunks100k} chunks | |`,
      `| store open at ${f.chunks100k} chunks (manifest + documents) | ${fmt(f.openMs)} ms | ≤ 300 ms: ${verdict((f.openMs ?? Infinity) <= 300)} |`,
      `| first-search index load at ${f.chunks100k} chunks | ${fmt(f.indexLoadMs, 0)} ms | |`,
      `| BM25 search p50 / p95 (k=10, 500 queries of 1–4 terms) | ${fmt(f.searchP50Ms)} / ${fmt(f.searchP95Ms)} ms | p50 ≤ 5 ms: ${verdict((f.searchP50Ms ?? Infinity) <= 5)} |`,
      `| minisearch on the same chunks: index / search p50 / p95 | ${fmt(f.minisearchIndexMs, 0)} ms / ${fmt(f.minisearchP50Ms)} / ${fmt(f.minisearchP95Ms)} ms | |`,
      `| search p50 ratio minisearch ÷ rlm | ${fmt(f.searchSpeedupVsMinisearch, 1)}× | |`,
      `| process memory after the 100k-chunk searches: heap / RSS | ${fmt(f.heapUsedMB, 0)} / ${fmt(f.rssMB, 0)} MB | reported |`,
      '',
      'Component figures (separate synthetic corpora):',
      '',
      ...Object.entries(f)
        .filter(([k]) => /^(text|bm25|grep)\./.test(k))
        .map(([k, v]) => `- \`${k}\`: ${Number.isInteger(v) ? v : fmt(v)}`),
    ],
  },
};

function prefix(p: string, f: Figures): Figures {
  return Object.fromEntries(Object.entries(f).map(([k, v]) => [`${p}.${k}`, v]));
}

SECTIONS.memories = {
  title: 'Memories (remember / recall at 100k)',
  run: async (log) => (await import('./memories.ts')).benchMemories({ log }),
  describe: (f) => [
    `A store of ${f.memories} memories (seeded sentences of Zipf-distributed words, 100 topics, mixed importance; all but the timed ones`,
    'imported with `rememberMany`), then single calls through the library on a warm store. `remember` is',
    'lock + journal append + fdatasync + the in-memory tail; every 1000th also folds the journal into a',
    "segment (rewriting the documents file): that is its max. Its p50 rides on the disk's fsync, measured",
    `below. Load average during the run: ${fmt(f.loadAverage, 1)} on ${os.cpus().length} cores.`,
    '',
    '| figure | value | target |',
    '|---|---|---|',
    `| remember p50 / p95 / mean / max | ${fmt(f.rememberP50Ms)} / ${fmt(f.rememberP95Ms)} / ${fmt(f.rememberMeanMs)} / ${fmt(f.rememberMaxMs, 0)} ms | p50 ≤ 5 ms: ${verdict((f.rememberP50Ms ?? Infinity) <= 5)} |`,
    `| the disk's floor: one append + fdatasync, p50 | ${fmt(f.fsyncP50Ms)} ms | |`,
    `| recall p50 / p95 (k=10, 1–3 word queries) | ${fmt(f.recallP50Ms)} / ${fmt(f.recallP95Ms)} ms | p50 ≤ 5 ms: ${verdict((f.recallP50Ms ?? Infinity) <= 5)} |`,
    `| recall p50 with a topic filter | ${fmt(f.recallTopicP50Ms)} ms | |`,
    `| topics (weights of every memory) | ${fmt(f.topicsMs, 0)} ms | |`,
    `| import of the first ${(f.memories ?? 0) - 2000} memories (rememberMany) | ${fmt(f.bulkMs, 0)} ms | |`,
    `| store open at ${f.memories} memories | ${fmt(f.openMs, 0)} ms | |`,
    `| heap after the run | ${fmt(f.heapUsedMB, 0)} MB | reported |`,
  ],
};

SECTIONS.segments = {
  title: 'A folder store written in small steps (segment merges)',
  run: async (log) => (await import('./segments.ts')).benchSegments(log),
  describe: (f) => [
    `${f.writes} ingests of one small file each (as the Claude Code hook imports a session per call) into a folder`,
    `store, then grep (count mode), search and a fresh process's first search, medians of ${f.calls}; with the small`,
    'segments merged after the writes (memory/engine/merge-plan.ts) and with merging switched off.',
    '',
    '| figure | merged | not merged |',
    '|---|---|---|',
    `| segments | ${f['merged.segments']} | ${f['unmerged.segments']} |`,
    `| write (one ingest), mean | ${fmt(f['merged.writeMs'], 1)} ms | ${fmt(f['unmerged.writeMs'], 1)} ms |`,
    `| grep p50 | ${fmt(f['merged.grepMs'], 1)} ms | ${fmt(f['unmerged.grepMs'], 1)} ms |`,
    `| search p50 | ${fmt(f['merged.searchMs'], 2)} ms | ${fmt(f['unmerged.searchMs'], 2)} ms |`,
    `| first search of a fresh open | ${fmt(f['merged.firstSearchMs'], 1)} ms | ${fmt(f['unmerged.firstSearchMs'], 1)} ms |`,
  ],
};

SECTIONS.sandbox = {
  title: 'Sandbox (src/sandbox)',
  run: async () => (await import('./sandbox.ts')).benchSandbox(),
  describe: (f) => [
    '| figure | value | target |',
    '|---|---|---|',
    `| session start (an isolate process and its spare isolate ready, prepared in idle time) | ${fmt(f.sessionStartMs, 3)} ms | ≤ 2 ms: ${verdict((f.sessionStartMs ?? Infinity) <= 2)} |`,
    `| session start, cold (no isolate process ready: a process start) | ${fmt(f.sessionStartColdMs, 3)} ms | |`,
    `| trivial block, validation and rewrite included | ${fmt(f.trivialBlockMs, 3)} ms | ≤ 1 ms: ${verdict((f.trivialBlockMs ?? Infinity) <= 1)} |`,
    `| validation + rewrite alone | ${fmt(f.validateRewriteMs, 3)} ms | |`,
    `| host-call round trip | ${fmt(f.hostCallMs, 3)} ms | |`,
    `| a block stuck in one V8 step, 300 ms CPU limit: start to result (process killed) | ${fmt(f.stuckStopMs, 0)} ms | |`,
    `| host event-loop stall meanwhile, another session answering blocks | ${fmt(f.stuckHostStallMs, 1)} ms | |`,
    `| abort to result of a block spinning in a loop (process killed) | ${fmt(f.abortStopMs, 0)} ms | |`,
    `| validation refusing a block of three 8000-character regex literals | ${fmt(f.bigRegexRefusalMs, 3)} ms | |`,
    `| ${fmt(f.contextMB, 0)} MB context copied into a session's isolate (each session; its process holds the text) | ${fmt(f.contextLoadMs, 3)} ms | ≤ 5 ms: ${verdict((f.contextLoadMs ?? Infinity) <= 5)} |`,
    `| session start with that context | ${fmt(f.sessionStartWith40MBContextMs, 3)} ms | |`,
    `| registering the context (once per host process) | ${fmt(f.contextCopyOnceMs, 1)} ms | |`,
    `| first session with that context on an isolate process (sent over IPC) | ${fmt(f.contextFirstLoadMs, 1)} ms | |`,
    `| grep, rare literal: rlm vs GNU \`grep -c\` | ${fmt(f.grepLiteralMBps, 0)} vs ${fmt(f.gnuGrepLiteralMBps, 0)} MB/s (×${fmt(f.grepLiteralVsGnu, 1)}) | ≥ GNU: ${verdict((f.grepLiteralVsGnu ?? 0) >= 1)} |`,
    `| grep, regex alternation: rlm vs GNU | ${fmt(f.grepRegexMBps, 0)} vs ${fmt(f.gnuGrepRegexMBps, 0)} MB/s (×${fmt(f.grepRegexVsGnu, 1)}) | ≥ GNU: ${verdict((f.grepRegexVsGnu ?? 0) >= 1)} |`,
    `| grep, ${f.grepCommonMatches} matching lines: rlm vs GNU | ${fmt(f.grepCommonMBps, 0)} vs ${fmt(f.gnuGrepCommonMBps, 0)} MB/s (×${fmt(f.grepCommonVsGnu, 1)}) | ≥ GNU: ${verdict((f.grepCommonVsGnu ?? 0) >= 1)} |`,
    '',
    'Each session runs in an isolate process, a child process the host kills when V8 does not yield, so',
    'blocks and host calls cross a process boundary by message. A session normally starts on a process',
    'prepared in idle time (the warm figure; the isolate opens while the caller prepares its first block,',
    'which waits for it); a cold start pays for a process start, which no ms target',
    'can cover. A 40 MB context is sent to a process once, then loaded from its own copy; that load is timed',
    'on its own (microseconds: isolated-vm hands the isolate the text without copying its characters again).',
  ],
};

SECTIONS.cli = {
  title: 'The rlm command at scale (`rlm ingest`, `rlm grep`)',
  run: async (log) => (await import('./cli-scale.ts')).benchCliScale(log),
  describe: (f) => [
    `Generated Markdown (RLM_BENCH_SCALE_MB, default 100), each command in its own process under \`/usr/bin/time\`:`,
    "wall time includes Node's start; CPU is user + system time; RSS is the kernel's peak. GNU grep runs on the",
    'same files in the same run. Each figure is the median of three runs (ingests into a fresh store each time).',
    (f.loadAverage ?? 0) > 1.5
      ? `**The machine was shared while this ran (1-minute load average ${fmt(f.loadAverage, 1)} on ${os.cpus().length} cores before it started), so wall times are inflated; CPU times and RSS are the steadier figures.**`
      : `1-minute load average before the run: ${fmt(f.loadAverage, 1)} on ${os.cpus().length} cores.`,
    '',
    '| figure | value | target |',
    '|---|---|---|',
    `| \`rlm ingest\` of ${fmt(f.corpusMB, 0)} MB in ${f.files} files: wall / CPU | ${fmt(f.ingestMs, 0)} / ${fmt(f.ingestCpuMs, 0)} ms | |`,
    `| \`rlm ingest\` peak RSS | ${fmt(f.ingestRssMB, 0)} MB (${fmt(f.ingestRssRatio, 1)}× the corpus) | ≤ 3×: ${verdict((f.ingestRssRatio ?? Infinity) <= 3)} |`,
    `| \`rlm ingest\` of the same ${fmt(f.bigFileMB, 0)} MB as one file: wall / CPU / peak RSS | ${fmt(f.bigFileIngestMs, 0)} / ${fmt(f.bigFileIngestCpuMs, 0)} ms / ${fmt(f.bigFileIngestRssMB, 0)} MB (${fmt(f.bigFileVsManyRss, 2)}× the many-file ingest) | flat in file size (≤ 1.2×): ${verdict((f.bigFileVsManyRss ?? Infinity) <= 1.2)} |`,
    `| fixed part of any ingest's RSS (Node, modules, tokenizer: a one-line file) | ${fmt(f.baselineRssMB, 0)} MB | |`,
    `| \`rlm grep '${'ERR-[0-9]{4}-[a-z]+'}'\` (${f.rlmGrepLines} lines): wall / CPU | ${fmt(f.rlmGrepMs, 0)} / ${fmt(f.rlmGrepCpuMs, 0)} ms | |`,
    `| GNU \`grep -rE\` on the files (${f.gnuGrepLines} lines): wall / CPU | ${fmt(f.gnuGrepMs, 0)} / ${fmt(f.gnuGrepCpuMs, 0)} ms | |`,
    `| fixed part of any \`rlm grep\` (a one-line store): wall / peak RSS; Node's own start (\`node -e 0\`) | ${fmt(f.rlmGrepTinyStoreMs, 0)} ms / ${fmt(f.rlmGrepTinyStoreRssMB, 0)} MB; ${fmt(f.nodeStartMs, 0)} ms | |`,
    `| rlm grep ÷ GNU grep, wall (CPU) | ${fmt(f.grepVsGnu, 1)}× (${fmt(f.grepCpuVsGnu, 1)}×) | ≤ 3×: ${verdict((f.grepVsGnu ?? Infinity) <= 3)} |`,
    `| \`rlm grep\` peak RSS | ${fmt(f.rlmGrepRssMB, 0)} MB (${fmt(f.rlmGrepRssRatio, 1)}× the corpus) | ≤ 2×: ${verdict((f.rlmGrepRssRatio ?? Infinity) <= 2)} |`,
    '',
    `Node's own start (\`node -e 0\`, ${fmt(f.nodeStartMs, 0)} ms) is ${fmt((f.nodeStartMs ?? 0) / Math.max(f.gnuGrepMs ?? 0, 1), 1)}× GNU grep's whole run here, so`,
    'no command run by Node can be within 3× of it end to end. `rlm grep` reads one chunk file per segment',
    '(`seg-N.chunks`, memory/SCHEMA.md) in a worker thread and decodes it chunk by chunk; beyond its fixed part',
    `(Node, modules, store, worker) it spends ${fmt((f.rlmGrepMs ?? 0) - (f.rlmGrepTinyStoreMs ?? 0), 0)} ms on the ${fmt(f.corpusMB, 0)} MB.`,
  ],
};

SECTIONS.scale = {
  title: 'The folder store at 100M tokens (`rlm peek`, `links`, `stats`, `search`, MCP, ingest, repair)',
  run: async (log) => (await import('./store-at-scale.ts')).benchStoreAtScale(log),
  describe: (f) => describeStoreAtScale(f),
};

SECTIONS.loop = {
  title: 'RLM loop (src/runtime)',
  run: async () => (await import('./loop.ts')).benchLoop(),
  describe: (f) => [
    '| figure | value | target |',
    '|---|---|---|',
    `| runtime overhead per iteration (zero-latency model, stub sandbox) | ${fmt(f.iterationOverheadMs, 3)} ms | ≤ 5 ms: ${verdict((f.iterationOverheadMs ?? Infinity) <= 5)} |`,
    `| same with the real isolate (one trivial block per turn) | ${fmt(f.iterationWithIsolateMs, 3)} ms | ≤ 5 ms: ${verdict((f.iterationWithIsolateMs ?? Infinity) <= 5)} |`,
    `| overhead per leaf sub-call | ${fmt(f.subCallOverheadMs, 3)} ms | ≤ 10 ms: ${verdict((f.subCallOverheadMs ?? Infinity) <= 10)} |`,
    `| overhead per sub-RLM call (own session) | ${fmt(f.subRlmCallOverheadMs, 3)} ms | ≤ 10 ms: ${verdict((f.subRlmCallOverheadMs ?? Infinity) <= 10)} |`,
    `| overhead per sub-call made from isolate code | ${fmt(f.subCallWithIsolateMs, 3)} ms | |`,
    `| 100 ms model: sequential vs batched sub-calls | ${fmt(f.sequentialCallsPerSec, 1)} vs ${fmt(f.batchedCallsPerSec, 1)} calls/s (×${fmt(f.batchedSpeedup, 1)}) | |`,
    `| one batch of 30,000 items (instant model): wall time, longest event-loop stall | ${fmt(f.batch30kMs, 0)} ms, ${fmt(f.batch30kMaxLoopGapMs, 1)} ms | stall ≤ 100 ms: ${verdict((f.batch30kMaxLoopGapMs ?? Infinity) <= 100)} |`,
  ],
};

SECTIONS.scaling = {
  title: 'Scaling curve: a full rlm run from 8K to 10M tokens',
  run: async (log) => {
    const { benchScaling, SCALING_SIZES } = await import('./scaling.ts');
    await benchScaling(['8k'], () => {}); // warm-up: tokenizer, isolate, code paths
    const points = await benchScaling(SCALING_SIZES, log);
    const f: Figures = {};
    for (const p of points) {
      f[`${p.suite}.${p.size}.runMs`] = p.runMs;
      f[`${p.suite}.${p.size}.chars`] = p.contextChars;
      f[`${p.suite}.${p.size}.score`] = p.score;
    }
    return f;
  },
  describe: (f) => {
    const rows = new Map<string, { suite: string; size: number }>();
    for (const k of Object.keys(f)) {
      const [suite, size] = k.split('.');
      rows.set(`${suite}.${size}`, { suite: suite!, size: Number(size) });
    }
    return [
      'Zero-latency scripted policy (`rlm bench --model smoke`), so the time is all runtime: prompt, isolate,',
      "context load, the policy's grep / search code, and the answer. Contexts from the benchmark generators.",
      '',
      '| suite | context tokens | context chars | run time | score |',
      '|---|---|---|---|---|',
      ...[...rows.values()].map(
        ({ suite, size }) =>
          `| ${suite} | ${size.toLocaleString('en-US')} | ${f[`${suite}.${size}.chars`]?.toLocaleString('en-US')} | ${fmt(f[`${suite}.${size}.runMs`], 0)} ms | ${f[`${suite}.${size}.score`]} |`,
      ),
    ];
  },
};

SECTIONS.claude = {
  title: 'Claude Code history (`rlm claude`)',
  run: async (log) => (await import('./claude.ts')).benchClaude({ log }),
  describe: (f) => [
    `${f.sessions} generated sessions over 20 projects, ${fmt(f.corpusMB, 0)} MB of JSONL (mostly tool output, as in real`,
    'sessions), imported into a fresh store by a child process; recall over the result (k=10, a quarter of',
    'the queries filtered by project).',
    '',
    '| figure | value | target |',
    '|---|---|---|',
    `| import: ${f.files} files, ${f.exchanges} exchanges, ${f.chunks} chunks | ${fmt((f.importMs ?? Number.NaN) / 1000, 1)} s | ≤ 30 s: ${verdict((f.importMs ?? Infinity) <= 30_000)} |`,
    `| peak RSS of the importing process | ${fmt(f.importRssMB, 0)} MB | ≤ 500 MB: ${verdict((f.importRssMB ?? Infinity) <= 500)} |`,
    `| second import (${f.reimportUnchanged} sessions unchanged, skipped) | ${fmt(f.reimportMs, 0)} ms | |`,
    `| first recall (loads the indexes) | ${fmt(f.firstRecallMs, 0)} ms | |`,
    `| recall p50 / p95 (200 queries) | ${fmt(f.recallP50Ms)} / ${fmt(f.recallP95Ms)} ms | p50 ≤ 10 ms: ${verdict((f.recallP50Ms ?? Infinity) <= 10)} |`,
    `| one ${fmt(f.bigMB, 0)} MB session (${f.bigExchanges} exchanges): import time / peak RSS | ${fmt((f.bigImportMs ?? Number.NaN) / 1000, 1)} s / ${fmt(f.bigRssMB, 0)} MB | streamed, not loaded whole |`,
  ],
};

SECTIONS.hostile = {
  title: 'Hostile input shapes (ingest and Claude Code import)',
  run: async (log) => (await import('./hostile.ts')).benchHostile({ log }),
  describe: (f) => {
    const s = (ms: number | undefined) => fmt((ms ?? Number.NaN) / 1000, 1);
    const ratio = (a: number | undefined, b: number | undefined) =>
      fmt((b ?? Number.NaN) / (a ?? Number.NaN), 2);
    return [
      'Input shaped to be slow, in-process, into a fresh store. Linear work shows as twice the time for twice',
      'the input; the tests check it by work counters instead (test/memory/ingest/linear.test.ts).',
      'Before the run memo in the piece scanner (at commit 4bbd373, load ~11 on 2 cores) the import of one',
      'unbroken message took 8.3 s at 4 MB, 22.7 s at 8 MB and 117.3 s at 20 MB: quadratic.',
      '',
      '| figure | wall | CPU |',
      '|---|---|---|',
      `| \`rlm claude ingest\` of a session whose one message is 10 MB without a blank | ${s(f.claudeToken10Ms)} s | ${s(f.claudeToken10CpuMs)} s |`,
      `| the same at 20 MB (CPU ${ratio(f.claudeToken10CpuMs, f.claudeToken20CpuMs)}× the 10 MB one) | ${s(f.claudeToken20Ms)} s | ${s(f.claudeToken20CpuMs)} s |`,
      `| the same 20 MB as ordinary words | ${s(f.claudeWords20Ms)} s | ${s(f.claudeWords20CpuMs)} s |`,
      `| ingest of a 10 MB file without a blank | ${s(f.ingestToken10Ms)} s | ${s(f.ingestToken10CpuMs)} s |`,
      `| the same at 20 MB (CPU ${ratio(f.ingestToken10CpuMs, f.ingestToken20CpuMs)}× the 10 MB one) | ${s(f.ingestToken20Ms)} s | ${s(f.ingestToken20CpuMs)} s |`,
      '',
      'Chunking and classifying 2 MB and 4 MB of each shape with the chunker its file type picks (CPU ms, least',
      'of three runs; the ratio is 4 MB ÷ 2 MB, about 2 when linear):',
      '',
      '| shape | .txt (paragraph) | .md (markdown) | .ts (lines) |',
      '|---|---|---|---|',
      ...Object.keys(SHAPES).map((name, i) => {
        const cell = (file: string) => {
          const a = f[`shape${i}.${file}.smallCpuMs`];
          const b = f[`shape${i}.${file}.largeCpuMs`];
          return `${fmt(a, 0)} / ${fmt(b, 0)} (${ratio(a, b)}×)`;
        };
        return `| ${name} | ${cell('a.txt')} | ${cell('a.md')} | ${cell('a.ts')} |`;
      }),
    ];
  },
};

SECTIONS.harness = {
  title: 'Long-context suites (`rlm bench`, smoke policy)',
  run: async (log) => {
    const { runBench } = await import('./harness.ts');
    const { benchModelFactory, SMOKE_MODEL } = await import('./policies/smoke.ts');
    const { METHODS } = await import('./methods.ts');
    const { SUITES } = await import('./tasks/types.ts');
    const report = await runBench({
      suites: SUITES,
      methods: METHODS,
      sizes: [8192, 32768, 131072],
      n: 2,
      seed: 1,
      model: SMOKE_MODEL,
      modelFactory: benchModelFactory(),
      env: {},
      onProgress: (p) => {
        if (p.result) log(`${p.done}/${p.total} ${p.label}`);
      },
    });
    const f: Figures = {};
    for (const row of report.summary) {
      const key = `${row.suite}|${row.method}|${row.size}`;
      f[`${key}.accuracy`] = row.accuracy;
      f[`${key}.meanScore`] = row.meanScore;
      f[`${key}.medianElapsedMs`] = row.medianElapsedMs;
    }
    return f;
  },
  describe: (f) => [
    'The scripted smoke policy (`rlm bench --model smoke`) is not a language model: it is a fixed program per',
    'suite that exercises the whole stack offline (sandbox, grep, sub-calls, scoring). Its scores check the',
    'harness, not model quality; the `direct` and `bm25` rows show what the baselines can reach with a policy',
    'that only reads the prompt. Run `rlm bench --model anthropic:...` for real figures.',
    '',
    '| suite | method | context tokens | accuracy | mean score | median time |',
    '|---|---|---|---|---|---|',
    ...[...new Set(Object.keys(f).map((k) => k.slice(0, k.lastIndexOf('.'))))].map((key) => {
      const [suite, method, size] = key.split('|');
      return `| ${suite} | ${method} | ${Number(size).toLocaleString('en-US')} | ${fmt(f[`${key}.accuracy`])} | ${fmt(f[`${key}.meanScore`])} | ${fmt(f[`${key}.medianElapsedMs`], 0)} ms |`;
    }),
  ],
};

SECTIONS.postgres = {
  title: 'PostgreSQL store beside the folder store',
  run: async (log) => (await import('./postgres.ts')).benchPostgres({ log }),
  prepare: async (log) => (await import('./postgres.ts')).preparePostgres({ log }),
  describe: (f) => {
    const ratio = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined || b === 0 ? 'n/a' : `${(a / b).toFixed(1)}×`;
    const row = (what: string, key: string, digits = 2, most?: number) => {
      const r = (f[`pg.${key}`] ?? Number.NaN) / (f[`fs.${key}`] ?? Number.NaN);
      const goal = most === undefined ? '' : `PostgreSQL ≤ ${most}×: ${verdict(r <= most)}`;
      return `| ${what} | ${fmt(f[`fs.${key}`], digits)} | ${fmt(f[`pg.${key}`], digits)} | ${ratio(f[`pg.${key}`], f[`fs.${key}`])} | ${goal} |`;
    };
    const load = (name: string) =>
      `| ${name} | ${fmt(f[`${name === 'folder' ? 'fs' : 'pg'}.load.throughput`], 1)} calls/s | ${fmt(f[`${name === 'folder' ? 'fs' : 'pg'}.load.p50Ms`], 0)} / ${fmt(f[`${name === 'folder' ? 'fs' : 'pg'}.load.p95Ms`], 0)} ms | ${f[`${name === 'folder' ? 'fs' : 'pg'}.load.liveFailures`]} of ${f[`${name === 'folder' ? 'fs' : 'pg'}.load.liveCalls`]} | ${f[`${name === 'folder' ? 'fs' : 'pg'}.load.killedCalls`]} | ${f[`${name === 'folder' ? 'fs' : 'pg'}.load.lostMemories`]} of ${f[`${name === 'folder' ? 'fs' : 'pg'}.load.acknowledgedMemories`]} |`;
    return [
      `Both backends in one run on the same generated corpus (${fmt(f.mb, 0)} MB of prose, default chunkers: ${f['fs.chunks']} chunks) and`,
      `${f.memories} memories; PostgreSQL 15 on the same machine (local TCP), each process of a backend keeping its search index in memory.`,
      'Search and recall latencies come from calls alternating between the backends (both meet the same load); their CPU',
      "times from a run of each after the other, PostgreSQL's counting its server processes too.",
      `1-minute load average ${fmt(f.loadAverage, 1)} before the run, ${fmt(f['pg.loadAverage'], 1)} after the searches and greps,`,
      `${fmt(f['recall.loadAverage'], 1)} before the recalls, on ${os.cpus().length} cores shared with other work, so wall times are inflated; the ratios are the figures to read.`,
      `The issue's sizes are 100 MB and 100 000 memories (the defaults); RLM_BENCH_PG_MB and RLM_BENCH_PG_MEMORIES set${(f.mb ?? 100) < 100 || (f.memories ?? 100_000) < 100_000 ? ' smaller ones, as this run did' : ' others'}.`,
      f.fixturesReused === 1
        ? `The memory stores were built before this run (RLM_BENCH_PG_FIXTURES, outside the benchmark lock, load ${fmt(f['fixtures.loadAverage'], 1)}); their import times are from then, and earlier runs' recalls and remembers are in them.`
        : 'The memory stores were built in this run.',
      '',
      '| figure | folder | PostgreSQL | ratio | goal |',
      '|---|---|---|---|---|',
      row(`ingest of ${fmt(f.mb, 0)} MB, ms`, 'ingestMs', 0, 2),
      row(`search p50, ms (k=10, 500 queries, ${f['pg.chunks']} chunks)`, 'searchP50Ms', 2, 3),
      row('search p95, ms', 'searchP95Ms'),
      row('search, CPU time per query, ms (PostgreSQL: client + server)', 'searchCpuMs'),
      row('grep, rare literal over all the text, ms', 'grepLiteralMs', 0),
      row('grep, regex over all the text, ms', 'grepRegexMs', 0),
      row(`import of ${f.memories} memories (rememberMany), ms`, 'rememberManyMs', 0),
      row(`recall p50, ms (k=10, at ${f.memories} memories)`, 'recallP50Ms', 2, 3),
      row('recall p95, ms', 'recallP95Ms'),
      row('recall, CPU time per call, ms (PostgreSQL: client + server)', 'recallCpuMs'),
      row('remember p50, ms (one call)', 'rememberP50Ms'),
      '',
      'Load test (benchmarks/load-test.ts): 3 `rlm serve --transport http` processes on one store, 300 concurrent',
      'tool calls (remember, recall, search, grep, rlm_answer with a scripted model) spread over them through 4',
      'sessions each; the third server is killed with SIGKILL when half the calls have ended. Throughput and latency',
      'are those of the calls to live servers (the calls left on the killed one wait for the client to give up).',
      '',
      '| store | throughput | latency p50 / p95 | failed calls on live servers | calls lost with the killed server | acknowledged memories missing |',
      '|---|---|---|---|---|---|',
      load('folder'),
      load('PostgreSQL'),
    ];
  },
};

SECTIONS.context = {
  title: 'Big contexts end to end, beside the official RLM',
  run: async (log) => (await import('./context.ts')).benchContext(log),
  describe: (f) => describeContext(f),
};

/** The context section's tables: one row per size and shape, rlm and the official RLM side by side. */
function describeContext(f: Figures): string[] {
  const sizes = [...new Set(Object.keys(f).flatMap((k) => /^rlm\.file\.(\d+)\./.exec(k)?.[1] ?? []))]
    .map(Number)
    .sort((a, b) => a - b);
  const official = f.officialMissing !== 1;
  const s = (ms: number | undefined) => fmt((ms ?? Number.NaN) / 1000, 2);
  const pair = (shape: string, mb: number, key: string, show: (n: number | undefined) => string) =>
    `${show(f[`rlm.${shape}.${mb}.${key}`])}${official ? ` / ${show(f[`official.${shape}.${mb}.${key}`])}` : ''}`;
  const rows: string[] = [];
  const withCpu = (shape: string, mb: number, key: string, cpuKey: string, r: string) =>
    `${s(f[`${r}.${shape}.${mb}.${key}`])} (${s(f[`${r}.${shape}.${mb}.${cpuKey}`])})`;
  const timed = (shape: string, mb: number, key: string, cpuKey: string) =>
    `${withCpu(shape, mb, key, cpuKey, 'rlm')}${official ? ` / ${withCpu(shape, mb, key, cpuKey, 'official')}` : ''}`;
  for (const mb of sizes) {
    for (const shape of ['file', 'folder']) {
      const first = f[`rlm.${shape}.${mb}.firstRequestMs`] ?? Number.NaN;
      const whole = f[`rlm.${shape}.${mb}.wholeMs`] ?? Number.NaN;
      const theirs = f[`official.${shape}.${mb}.wholeMs`] ?? Number.NaN;
      const tree = f[`rlm.${shape}.${mb}.treeMB`] ?? Number.NaN;
      const failed = ['rlm', 'official']
        .filter((r) => (f[`${r}.${shape}.${mb}.failed`] ?? 0) > 0)
        .map((r) => `${r} answered wrong in ${f[`${r}.${shape}.${mb}.failed`]} of ${f.rounds} runs`);
      rows.push(
        `| ${mb} MB ${shape}${failed.length > 0 ? ` (**${failed.join('; ')}**)` : ''} | ${timed(shape, mb, 'firstRequestMs', 'firstRequestCpuMs')} s | ${timed(shape, mb, 'wholeMs', 'cpuMs')} s | ${pair(shape, mb, 'batchMs', s)} s (${pair(shape, mb, 'maxInFlight', (n) => fmt(n, 0))}) | ${pair(shape, mb, 'treeMB', (n) => fmt(n, 0))} MB (${fmt(tree / mb, 1)}×) | ${pair(shape, mb, 'largestMB', (n) => fmt(n, 0))} MB | ${verdict(first <= 1000)}; ${official ? verdict(whole <= theirs) : 'n/a'}; ${mb >= 100 ? verdict(tree <= 2.5 * mb) : 'n/a below 100 MB'} |`,
      );
    }
  }
  const loaded = (f.loadMedian ?? 0) > 1.5;
  const largest = sizes.at(-1);
  const own =
    largest === undefined ? Number.NaN : (f[`rlm.file.${largest}.treeMB`] ?? Number.NaN) - 2 * largest;
  return [
    'One scripted run, the same for both runtimes: the root model replies with one block that counts',
    "`ERR-\\d{4}` over the whole context with the language's own regex, asks 100 batched sub-calls about",
    '2,000-character slices, and ends the run (rlm: `FINAL`; the official RLM: `answer["ready"]`). The model is a',
    'zero-latency OpenAI-compatible server on 127.0.0.1 in the benchmark process. The contexts are generated',
    'logs: one file, or a folder of 256 KiB files. Each runtime runs as a user runs it (`rlm answer --context`;',
    '`python official-rlm.py`, which reads the files and calls `RLM.completion`), alternating, medians of',
    `${f.rounds} runs. Time to first request and the whole run count from the process's start, each with the CPU`,
    "time (user + system) the runtime's processes had used by then, which load does not inflate; the batch is",
    'first sub-call in to last answer out at the server; memory is the peak over the process and its children',
    "(PSS summed: rlm runs its sandbox in a child process), and the largest single RSS (`/usr/bin/time`'s figure).",
    official
      ? 'Each cell is rlm / official RLM.'
      : '**The official RLM was not run** (Python or its package is missing: see /work/shared/peers/README.md); cells are rlm only.',
    loaded
      ? `**The machine was shared while this ran: 1-minute load average ${fmt(f.loadBefore, 1)} before, median ${fmt(f.loadMedian, 1)}, at most ${fmt(f.loadMax, 1)} across the runs, on ${os.cpus().length} cores; wall times are inflated, for both runtimes alike.**`
      : `1-minute load average ${fmt(f.loadBefore, 1)} before, median ${fmt(f.loadMedian, 1)} across the runs, on ${os.cpus().length} cores.`,
    '',
    '| context | first request (CPU) | whole run (CPU) | 100 sub-calls (most in flight) | peak memory, tree (× context) | largest process RSS | targets: first request ≤ 1 s; whole run ≤ official; tree ≤ 2.5× at 100 MB |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `rlm's peak is twice the text plus what the host and the isolate process hold of their own (${fmt(own, 0)} MB`,
    `in the ${largest} MB file row): the host keeps none of the text and the isolate process one copy, but while it`,
    "takes the text in, the decoded string and isolated-vm's copy of it (made from a string, the only way in) exist",
    'at once. So 2.5× is out of reach at 100 MB (it would leave 50 MB for two Node processes) and the ratio falls',
    'toward 2× as contexts grow. The spare isolate process for the next session starts after that peak.',
    '',
    "rlm's `grep('ERR-\\d{4}')` over the same contexts, timed inside one block, once per context, in count mode",
    '(`{count: true}`, no cap). Over `--context` files grep runs in the sandbox over the text the isolate process',
    'holds, by document, and builds no index; the second grep repeats the first.',
    '',
    '| context | mode | matches found (of) | first grep | second grep |',
    '|---|---|---|---|---|',
    ...sizes.flatMap((mb) =>
      ['file', 'folder'].map((shape) => {
        const g = (k: string) => f[`grep.${shape}.${mb}.${k}`];
        const mode = ['failed', 'listed', 'capped at 100,000', 'count'][g('mode') ?? 0];
        return `| ${mb} MB ${shape} | ${mode} | ${fmt(g('n'), 0)} (${fmt(f[`codes.${shape}.${mb}`], 0)}) | ${s(g('firstMs'))} s | ${s(g('againMs'))} s |`;
      }),
    ),
  ];
}

function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

function rewrite(file: string, name: string, body: string): void {
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${body}\n${end}`;
  let doc = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Benchmarks\n\nWritten by `npm run bench`; do not edit by hand.\n';
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  doc =
    i >= 0 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, doc);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const wanted = args.filter((a) => a !== '--prepare');
  const names = wanted.length > 0 ? wanted : Object.keys(SECTIONS);
  for (const n of names)
    if (!SECTIONS[n])
      throw new Error(`unknown benchmark '${n}' (known: ${Object.keys(SECTIONS).join(', ')})`);
  if (args.includes('--prepare')) {
    // Fixtures only: nothing is timed or written to BENCHMARKS.md.
    for (const name of names) {
      const log = (s: string) => process.stderr.write(`[${name}] ${s}\n`);
      if (SECTIONS[name]!.prepare) await SECTIONS[name]!.prepare!(log);
      else log('nothing to prepare');
    }
    return;
  }
  const file = fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url));
  // The sandbox benchmarks run the prelude bundled from the current sources.
  await writePrelude();
  for (const name of names) {
    const section = SECTIONS[name]!;
    const log = (s: string) => process.stderr.write(`[${name}] ${s}\n`);
    log('running…');
    // The machine is often shared: the load around the run says how far its figures can be trusted.
    const loadBefore = os.loadavg()[0] ?? 0;
    const figures = await section.run(log);
    const loadAfter = os.loadavg()[0] ?? 0;
    const body = [
      `## ${section.title}`,
      '',
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine()}; ` +
        `1-minute load average ${loadBefore.toFixed(2)} before the run, ${loadAfter.toFixed(2)} after.`,
      '',
      ...section.describe(figures),
    ].join('\n');
    rewrite(file, name, body);
    process.stdout.write(`${body}\n\n`);
  }
}

await main();
