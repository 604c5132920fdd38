/** The per suite × method × size summary of a benchmark's results (the `summary` of `rlm bench --json`). */
import type { MethodName } from './methods.ts';
import { median } from './stats.ts';
import type { SuiteName } from './tasks/types.ts';

/** One task run by one method (the `results` rows of `rlm bench --json`; fields after `elapsedMs` are additions). */
export interface BenchResult {
  suite: SuiteName;
  task: string;
  method: MethodName;
  /** Target context size in tokens. */
  size: number;
  score: number;
  correct: boolean;
  iterations: number;
  subCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  elapsedMs: number;
  /** `final`, `max_iterations`, `budget`, `aborted`, `error`, or `skipped` when the run never started. */
  status: string;
  /** The method's answer (cut to 2,000 characters). */
  answer: string;
  /** The gold answer as text. */
  expected: string;
  /** Measured tokens of the task's context. */
  contextTokens: number;
  skipped?: boolean;
  error?: { code: string; message: string };
}

export interface SummaryRow {
  suite: SuiteName;
  method: MethodName;
  size: number;
  /** Share of tasks with full marks. */
  accuracy: number;
  meanScore: number;
  meanCostUsd: number;
  medianElapsedMs: number;
  /** Tasks that ran (skipped ones excluded from the figures above). */
  tasks: number;
  skipped: number;
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Groups results by suite, method and size, in first-seen order. Groups where every task was skipped keep zeros. */
export function summarize(results: readonly BenchResult[]): SummaryRow[] {
  const groups = new Map<string, BenchResult[]>();
  for (const r of results) {
    const key = `${r.suite}\u0000${r.method}\u0000${r.size}`;
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  return [...groups.values()].map((list) => {
    const first = list[0] as BenchResult;
    const ran = list.filter((r) => !r.skipped);
    const n = ran.length;
    const mean = (f: (r: BenchResult) => number) => (n === 0 ? 0 : ran.reduce((s, r) => s + f(r), 0) / n);
    return {
      suite: first.suite,
      method: first.method,
      size: first.size,
      accuracy: round(
        mean((r) => (r.correct ? 1 : 0)),
        4,
      ),
      meanScore: round(
        mean((r) => r.score),
        4,
      ),
      meanCostUsd: round(
        mean((r) => r.costUsd),
        6,
      ),
      medianElapsedMs: Math.round(median(ran.map((r) => r.elapsedMs))),
      tasks: n,
      skipped: list.length - n,
    };
  });
}
