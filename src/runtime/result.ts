/**
 * The result of `RLM.answer`, which is also the `rlm answer --json` object and the MCP tool's structured
 * output (DESIGN.md). The first fields are the contract; the rest are additions.
 */
import type { ModelUsage } from './budget.ts';
import type { Trajectory } from './trajectory.ts';

/** How a run ended. */
export type RunStatus = 'final' | 'max_iterations' | 'budget' | 'aborted' | 'error';

export interface RlmResult {
  /** The final answer, or the best partial answer when the run ended otherwise. */
  answer: string;
  status: RunStatus;
  /** Root turns taken (the extra last call after max iterations not counted). */
  iterations: number;
  /** Sub-calls made over the whole tree (cache hits not counted). */
  subCalls: number;
  /** Deepest depth any model call ran at (0 = only the root). */
  maxDepthReached: number;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  elapsedMs: number;
  /** Why the run did not end with `final` (budget, abort, provider or code errors). */
  error?: { code: string; message: string };
  /** Usage per model spec. */
  usageByModel?: Record<string, ModelUsage>;
  /** Sub-calls answered from the run's cache. */
  cacheHits?: number;
  /** Id of the run in the trace. */
  runId?: string;
  /** The run's recursion tree, when asked for with the `trajectory` option (the trace level applies). */
  trajectory?: Trajectory;
}
