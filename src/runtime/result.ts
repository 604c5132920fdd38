/**
 * The result of `RLM.answer`, which is also the `rlm answer --json` object and the MCP tool's structured
 * output (CONTRACTS.md). The first fields are the contract; the rest are additions.
 */
import type { ContextShape } from '../prompts/shape.ts';
import type { ModelUsage } from './budget.ts';
import type { Usage } from './model.ts';

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

// The run's recursion tree (RlmResult.trajectory, built by trajectory.ts from trace events). It lives
// here because the two shapes hold each other: a Trajectory carries its run's result.

/** `turn` of an RLM, the `last_call` after max iterations, or a plain `leaf` completion. */
export type ModelCallKind = 'turn' | 'last_call' | 'leaf';

/** What one block did, as the model was shown it. */
export interface BlockOutput {
  ok: boolean;
  stdout: string;
  error: { code: string; message: string; line?: number; column?: number } | null;
  /** The block's FINAL answer, cut to a preview in the trace: the `final` event holds it whole. */
  final: string | null;
  reset: boolean;
  durationMs: number;
}

/** Tokens, cost and model calls of a span and everything below it. */
export interface Totals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  modelCalls: number;
  /** Sub-calls below this span (cached ones included). */
  subCalls: number;
}

/** A message as sent to the model. */
interface RequestMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** One model call of a span. */
export interface TurnNode {
  /** 1-based turn; 0 for a leaf completion. */
  iteration: number;
  kind: ModelCallKind;
  model?: string;
  /** Milliseconds since the run started. */
  startMs: number;
  durationMs?: number;
  usage?: Usage;
  costUsd?: number;
  /** What this request added to the conversation (level `full`): messages from index `from` on. */
  request?: { from: number; messages: RequestMessage[] };
  /** Absent when the call never returned (abort, provider error). */
  reply?: string;
  blocks: BlockNode[];
}

/** One ```repl block and what it did. */
export interface BlockNode {
  index: number;
  code: string;
  startMs: number;
  output?: BlockOutput;
  subcalls: SpanNode[];
}

/** The root run or one sub-call. */
export interface SpanNode {
  /** `root` or the sub-call's span id (`s1`, `s2`...). */
  id: string;
  depth: number;
  kind: 'root' | 'rlm' | 'leaf';
  /** The question (root) or the sub-call's prompt, whole when the trace is `full`. */
  prompt: string;
  contextChars?: number;
  cached?: boolean;
  /** `final`, `max_iterations`... for RLM spans, `ok`/`error` for leaves, `unfinished` when it never ended. */
  status: string;
  answer?: string;
  error?: { code: string; message: string };
  startMs: number;
  endMs?: number;
  /** The system prompt (level `full`). */
  system?: string;
  turns: TurnNode[];
  final?: { source: string; answer: string };
  /** Errors reported in this span (failing blocks in a row, aborts, provider errors). */
  errors: { code: string; message: string }[];
  totals: Totals;
}

/** One run of a trace file as a tree. */
export interface Trajectory {
  run: string;
  /** ISO time the run started. */
  time?: string;
  question: string;
  model?: string;
  subModel?: string;
  maxDepth?: number;
  maxIterations?: number;
  context?: ContextShape;
  /** The run's result (absent when the run never ended). */
  result?: RlmResult;
  root: SpanNode;
}
