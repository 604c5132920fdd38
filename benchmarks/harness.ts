/**
 * The benchmark loop: for each size, suite and instance, generate the task once (one context in memory at
 * a time), run every method on it, score the answer and record usage and time. A `maxCostUsd` guard stops
 * the run once the spend reaches it and marks what is left as skipped; so does the abort signal.
 */
import type { Env } from '../core/env.ts';
import type { ModelFactory, RlmOptions, SandboxFactory } from '../src/runtime/options.ts';
import type { PriceTable } from '../src/runtime/pricing.ts';
import { type MethodEnv, type MethodName, runMethod } from './methods.ts';
import { goldText, isCorrect, scoreAnswer } from './scoring.ts';
import { type BenchResult, type SummaryRow, summarize } from './summary.ts';
import { type GeneratorOptions, generateTask } from './tasks/index.ts';
import { sizeLabel } from './tasks/text.ts';
import type { BenchTask, SuiteName } from './tasks/types.ts';

/** What to run. */
export interface BenchConfig {
  suites: readonly SuiteName[];
  methods: readonly MethodName[];
  /** Context sizes in tokens. */
  sizes: readonly number[];
  /** Instances per suite and size. */
  n: number;
  seed: number;
  /** Model spec (the same model for every method). */
  model: string;
  modelFactory: ModelFactory;
  env?: Env;
  sandboxFactory?: SandboxFactory;
  rlmOptions?: Partial<RlmOptions>;
  windowTokens?: number;
  bm25K?: number;
  bm25ChunkTokens?: number;
  prices?: PriceTable;
  /** Stop once this much has been spent (USD). */
  maxCostUsd?: number;
  generators?: GeneratorOptions;
  signal?: AbortSignal;
  /** Called before each run (`result` undefined) and after it. */
  onProgress?: (p: BenchProgress) => void;
}

interface BenchProgress {
  done: number;
  total: number;
  label: string;
  spentUsd: number;
  result?: BenchResult;
}

/** The `rlm bench --json` object (CONTRACTS.md). */
export interface BenchReport {
  suites: SuiteName[];
  model: string;
  results: BenchResult[];
  summary: SummaryRow[];
  methods: MethodName[];
  sizes: number[];
  n: number;
  seed: number;
  spentUsd: number;
  /** Why the run stopped early, if it did. */
  stopped: 'max_cost' | 'aborted' | null;
  startedAt: string;
  elapsedMs: number;
}

const MAX_ANSWER_CHARS = 2000;

function skippedResult(
  suite: SuiteName,
  task: string,
  method: MethodName,
  size: number,
  expected: string,
  contextTokens: number,
): BenchResult {
  return {
    suite,
    task,
    method,
    size,
    score: 0,
    correct: false,
    iterations: 0,
    subCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    elapsedMs: 0,
    status: 'skipped',
    answer: '',
    expected,
    contextTokens,
    skipped: true,
  };
}

/** Runs the benchmark and returns the report (nothing is written; see report.ts). */
export async function runBench(config: BenchConfig): Promise<BenchReport> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const results: BenchResult[] = [];
  const total = config.sizes.length * config.suites.length * config.n * config.methods.length;
  const max = config.maxCostUsd ?? Number.POSITIVE_INFINITY;
  let spent = 0;
  let stopped: BenchReport['stopped'] = null;
  const progress = (label: string, result?: BenchResult) =>
    config.onProgress?.({
      done: results.length,
      total,
      label,
      spentUsd: spent,
      ...(result ? { result } : {}),
    });

  for (const size of config.sizes) {
    for (const suite of config.suites) {
      for (let index = 0; index < config.n; index++) {
        const id = `${suite}-${sizeLabel(size)}-${index}`;
        if (stopped === null && config.signal?.aborted) stopped = 'aborted';
        if (stopped !== null) {
          for (const m of config.methods) results.push(skippedResult(suite, id, m, size, '', 0));
          continue;
        }
        const task: BenchTask = generateTask(suite, { size, seed: config.seed, index }, config.generators);
        const expected = goldText(task.gold);
        for (const method of config.methods) {
          if (stopped === null && config.signal?.aborted) stopped = 'aborted';
          if (stopped !== null) {
            results.push(skippedResult(suite, task.id, method, size, expected, task.contextTokens));
            continue;
          }
          progress(`${task.id} ${method}`);
          const env: MethodEnv = {
            model: config.model,
            modelFactory: config.modelFactory,
            env: config.env ?? {},
            ...(config.sandboxFactory ? { sandboxFactory: config.sandboxFactory } : {}),
            ...(config.rlmOptions ? { rlmOptions: config.rlmOptions } : {}),
            ...(config.windowTokens !== undefined ? { windowTokens: config.windowTokens } : {}),
            ...(config.bm25K !== undefined ? { bm25K: config.bm25K } : {}),
            ...(config.bm25ChunkTokens !== undefined ? { bm25ChunkTokens: config.bm25ChunkTokens } : {}),
            ...(config.prices ? { prices: config.prices } : {}),
            ...(Number.isFinite(max) ? { maxCostUsd: Math.max(0, max - spent) } : {}),
            ...(config.signal ? { signal: config.signal } : {}),
          };
          const t0 = performance.now();
          const out = await runMethod(method, task, env);
          const elapsedMs = Math.round(performance.now() - t0);
          const score = out.status === 'error' && out.answer === '' ? 0 : scoreAnswer(out.answer, task.gold);
          const result: BenchResult = {
            suite,
            task: task.id,
            method,
            size,
            score: Math.round(score * 1e4) / 1e4,
            correct: isCorrect(score),
            iterations: out.iterations,
            subCalls: out.subCalls,
            inputTokens: out.inputTokens,
            outputTokens: out.outputTokens,
            costUsd: out.costUsd,
            elapsedMs,
            status: out.status,
            answer:
              out.answer.length > MAX_ANSWER_CHARS ? `${out.answer.slice(0, MAX_ANSWER_CHARS)}…` : out.answer,
            expected,
            contextTokens: task.contextTokens,
            ...(out.error ? { error: out.error } : {}),
          };
          results.push(result);
          spent += out.costUsd;
          if (spent >= max) stopped = 'max_cost';
          progress(`${task.id} ${method}`, result);
        }
      }
    }
  }
  return {
    suites: [...config.suites],
    model: config.model,
    results,
    summary: summarize(results),
    methods: [...config.methods],
    sizes: [...config.sizes],
    n: config.n,
    seed: config.seed,
    spentUsd: Math.round(spent * 1e6) / 1e6,
    stopped,
    startedAt,
    elapsedMs: Math.round(performance.now() - started),
  };
}
