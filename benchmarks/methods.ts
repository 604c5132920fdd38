/**
 * The methods a benchmark compares, all driving the same model:
 * - `rlm`: the runtime (root REPL, sub-calls to depth 2 by default);
 * - `rlm-no-sub`: the paper's ablation, a REPL without sub-calls (maxDepth 0: `llm_query` reports it is unavailable);
 * - `direct`: the base model with the context in its prompt, cut to a window of `windowTokens`. The cut
 *   keeps the beginning and drops the rest (what a model API does with an over-long prompt that is trimmed
 *   from the end), and the prompt says so;
 * - `bm25`: the top-k chunks of the context from the chunk graph's BM25 index, then one model call.
 */
import type { Env } from '../core/env.ts';
import { MemoryChunkStore } from '../memory/in-memory/store.ts';
import { TokenScanner } from '../memory/ingest/tokens.ts';
import type { Model } from '../src/runtime/model.ts';
import type { ModelFactory, RlmOptions, SandboxFactory } from '../src/runtime/options.ts';
import { costOf, type PriceTable } from '../src/runtime/pricing.ts';
import { RLM } from '../src/runtime/rlm.ts';
import type { BenchTask } from './tasks/types.ts';

export type MethodName = 'rlm' | 'rlm-no-sub' | 'direct' | 'bm25';
export const METHODS: readonly MethodName[] = ['rlm', 'rlm-no-sub', 'direct', 'bm25'];

/** How one method did on one task (the harness adds score and time). */
export interface MethodOutcome {
  answer: string;
  /** The RLM status, `final` for a baseline that got a reply, `error` otherwise. */
  status: string;
  iterations: number;
  subCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  error?: { code: string; message: string };
}

/** Everything a method needs besides the task. */
export interface MethodEnv {
  /** Model spec for every method. */
  model: string;
  /** Turns the spec into a model (also used by the RLM for root and sub-calls). */
  modelFactory: ModelFactory;
  env: Env;
  /** Sandbox seam for the RLM methods (tests); default isolated-vm. */
  sandboxFactory?: SandboxFactory;
  /** Extra RLM options (maxIterations, maxDepth for `rlm`...). */
  rlmOptions?: Partial<RlmOptions>;
  /** `direct`'s window in tokens (default 100,000). */
  windowTokens?: number;
  /** `bm25`'s passages (default 8) and chunk size in tokens (default 500). */
  bm25K?: number;
  bm25ChunkTokens?: number;
  prices?: PriceTable;
  /** Most a single run may spend (the harness's remaining budget). */
  maxCostUsd?: number;
  signal?: AbortSignal;
}

export const DEFAULT_WINDOW_TOKENS = 100_000;
export const DEFAULT_BM25_K = 8;
export const DEFAULT_BM25_CHUNK_TOKENS = 500;

/** System prompt of both baselines: answer-only, like the paper's base-model calls. */
const BASELINE_SYSTEM =
  'You answer a question about the context given in the message. Reply with the final answer only, in the ' +
  'format the question asks for, with no explanation.';

const asText = (c: string | string[]): string => (typeof c === 'string' ? c : c.join('\n\n'));

/** The first `maxTokens` tokens of `text`, and whether anything was cut. */
export function headTokens(text: string, maxTokens: number): { text: string; truncated: boolean } {
  const scan = new TokenScanner(text);
  let tokens = 0;
  while (scan.next()) {
    tokens += scan.tokens;
    if (tokens > maxTokens) return { text: text.slice(0, scan.start), truncated: true };
  }
  return { text, truncated: false };
}

/** The `direct` prompt: the (cut) context, then the question. */
export function directPrompt(task: BenchTask, windowTokens: number): string {
  const { text, truncated } = headTokens(asText(task.context), windowTokens);
  const note = truncated
    ? `\n[The context was cut here: only its first ${windowTokens} tokens fit the window.]`
    : '';
  return `Context:\n${text}${note}\n\nQuestion: ${task.question}\nAnswer:`;
}

/** The `bm25` prompt: the retrieved passages in rank order, then the question. */
export function bm25Prompt(task: BenchTask, passages: string[]): string {
  const body = passages.map((p, i) => `[${i + 1}]\n${p}`).join('\n\n');
  return `Context (the ${passages.length} passages most relevant to the question, by BM25):\n${body}\n\nQuestion: ${task.question}\nAnswer:`;
}

/** The top-k chunk texts for the task's question from an in-memory chunk graph of its context. */
export async function retrieve(
  task: BenchTask,
  k: number,
  chunkTokens: number,
  signal?: AbortSignal,
): Promise<string[]> {
  const store = new MemoryChunkStore();
  try {
    const docs = typeof task.context === 'string' ? [task.context] : task.context;
    const opts = {
      chunker: 'size' as const,
      chunkTokens,
      overlapTokens: Math.floor(chunkTokens / 10),
      ...(signal ? { signal } : {}),
    };
    for (const [i, d] of docs.entries()) await store.ingestText(`doc-${i + 1}`, d, opts);
    const hits = await store.search(task.question, { k });
    return Promise.all(hits.map(async (h) => (await store.getChunk(h.id))?.text ?? h.preview));
  } finally {
    await store.close();
  }
}

async function completeOnce(env: MethodEnv, prompt: string): Promise<MethodOutcome> {
  const model: Model = await env.modelFactory(env.model, env.env);
  const res = await model.complete({
    system: BASELINE_SYSTEM,
    messages: [{ role: 'user', content: prompt }],
    depth: 0,
    ...(env.rlmOptions?.maxOutputTokens ? { maxOutputTokens: env.rlmOptions.maxOutputTokens } : {}),
    ...(env.signal ? { signal: env.signal } : {}),
  });
  return {
    answer: res.text.trim(),
    status: 'final',
    iterations: 1,
    subCalls: 0,
    inputTokens: res.usage.inputTokens,
    outputTokens: res.usage.outputTokens,
    costUsd: costOf(model.spec, res.usage, env.prices).usd,
  };
}

async function runRlm(task: BenchTask, env: MethodEnv, noSub: boolean): Promise<MethodOutcome> {
  const rlm = new RLM({
    ...env.rlmOptions,
    model: env.model,
    modelFactory: env.modelFactory,
    env: env.env,
    ...(noSub ? { maxDepth: 0 } : {}),
    ...(env.sandboxFactory ? { sandboxFactory: env.sandboxFactory } : {}),
    ...(env.prices ? { prices: env.prices } : {}),
    ...(env.maxCostUsd !== undefined && Number.isFinite(env.maxCostUsd)
      ? { maxCostUsd: env.maxCostUsd }
      : {}),
  });
  const r = await rlm.answer({
    question: task.question,
    context: task.context,
    ...(env.signal ? { signal: env.signal } : {}),
  });
  return {
    answer: r.answer,
    status: r.status,
    iterations: r.iterations,
    subCalls: r.subCalls,
    inputTokens: r.usage.inputTokens,
    outputTokens: r.usage.outputTokens,
    costUsd: r.usage.costUsd,
    ...(r.error ? { error: r.error } : {}),
  };
}

/** Runs one method on one task. Never throws: a failure is an outcome with status `error`. */
export async function runMethod(method: MethodName, task: BenchTask, env: MethodEnv): Promise<MethodOutcome> {
  try {
    switch (method) {
      case 'rlm':
        return await runRlm(task, env, false);
      case 'rlm-no-sub':
        return await runRlm(task, env, true);
      case 'direct':
        return await completeOnce(env, directPrompt(task, env.windowTokens ?? DEFAULT_WINDOW_TOKENS));
      case 'bm25': {
        const k = env.bm25K ?? DEFAULT_BM25_K;
        const passages = await retrieve(
          task,
          k,
          env.bm25ChunkTokens ?? DEFAULT_BM25_CHUNK_TOKENS,
          env.signal,
        );
        return await completeOnce(env, bm25Prompt(task, passages));
      }
    }
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    return {
      answer: '',
      status: 'error',
      iterations: 0,
      subCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      error: { code: typeof e?.code === 'string' ? e.code : 'RUNTIME', message: String(e?.message ?? err) },
    };
  }
}
