/**
 * The host side of the sub-calls for a session at a given depth. A call from depth d runs at d + 1:
 * `llm_query` is always one plain completion; `rlm_query` is a sub-RLM with its own sandbox while
 * d + 1 < maxDepth and a plain completion at maxDepth; nothing runs beyond. Failures come back to model
 * code as strings starting with "Error:" so one bad call never sinks a batch; only the run's budget can
 * stop everything, and it does so by aborting the run, not by throwing.
 *
 * Batches are built for "classify every line" over tens of thousands of items: the sub-call budget is
 * claimed before fanning out (the excess is refused at once), a fixed pool of workers pulls items (so
 * abort listeners and semaphore waiters stay bounded by the concurrency, not the batch size), and the
 * pool yields to the event loop as it goes so timers, pings and the block's wall limit keep running.
 */

import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import { buildLeafPrompt } from '../prompts/build.ts';
import { LEAF_CONTEXT_HEADER } from '../prompts/leaf.ts';
import type { SandboxHost, SubCallItem, SubCallKind, SubCallOptions } from '../sandbox/host.ts';
import { abortError, linkedController } from './abort.ts';
import type { ChatMessage, Model } from './model.ts';
import type { RunStatus } from './result.ts';
import type { RunState } from './run-state.ts';
import {
  askStructured,
  type CheckedSchema,
  checkSchema,
  parseStructured,
  structuredPrompt,
} from './structured.ts';

/** A sub-RLM run requested by a sub-call. */
interface ChildRequest {
  depth: number;
  span: string;
  question: string;
  context: string | undefined;
  signal: AbortSignal;
  /** The model the sub-RLM's own turns use (its sub-calls use the run's sub-model). */
  model: Model;
  /** The shape its FINAL answer must have, when the caller asked for structured output. */
  schema?: CheckedSchema;
}

/** How a sub-RLM ended. */
export interface ChildOutcome {
  answer: string;
  status: RunStatus;
  error?: { code: string; message: string };
}

/** Runs a sub-RLM; injected by the loop so this module does not import it. */
export type ChildRunner = (req: ChildRequest) => Promise<ChildOutcome>;

type SubCallHost = Required<Pick<SandboxHost, 'llmQuery' | 'llmQueryBatched'>>;

const PREVIEW = 2000;
const preview = (s: string): string => (s.length > PREVIEW ? `${s.slice(0, PREVIEW)}…` : s);
/** Items a batch worker handles between two turns of the event loop (all workers together: × concurrency). */
const ITEMS_PER_YIELD = 16;
/** Items checked before fanning out between two turns of the event loop. */
const CHECKS_PER_YIELD = 1024;

/** `{[key]: blobId}` when the trace is full and `text` is longer than its preview, else nothing. */
function fullText<K extends string>(
  state: RunState,
  span: string,
  depth: number,
  key: K,
  text: string,
): { [k in K]?: string } {
  if (text.length <= PREVIEW || !state.tracer.full) return {};
  return { [key]: state.tracer.blob(span, depth, text) } as { [k in K]?: string };
}

/**
 * The answer model code receives for a failed sub-call, `Error: CODE: message`, passed through
 * `forSandbox` (no host path in it). A run's and `rlm exec`'s sub-calls answer so alike.
 */
export function errorAnswer(err: unknown, forSandbox: (text: string) => string): string {
  const rlm = (err as { rlm?: { code: string; message: string } })?.rlm;
  if (rlm !== undefined) return forSandbox(`Error: ${rlm.code}: ${rlm.message}`);
  if (isRlmError(err)) return forSandbox(`Error: ${err.code}: ${err.message}`);
  return forSandbox(`Error: RUNTIME: ${(err as Error)?.message ?? String(err)}`);
}

/** {@link errorAnswer} as a run shows it (RunState.forSandbox). */
function subCallError(state: RunState, err: unknown): string {
  return errorAnswer(err, (text) => state.forSandbox(text));
}

function cacheKey(job: Job): string {
  return createHash('sha256')
    .update(
      JSON.stringify([job.model.spec, job.kind, job.prompt, job.context ?? null, job.schema?.json ?? null]),
    )
    .digest('base64url');
}

/** The request a sub-model reads: the prompt, what shape to answer in, then the text. */
function requestText(job: Job): string {
  const asked = job.schema === undefined ? job.prompt : structuredPrompt(job.prompt, job.schema);
  return job.context === undefined ? asked : asked + LEAF_CONTEXT_HEADER + job.context;
}

/** A checked sub-call, ready to run. */
interface Job {
  prompt: string;
  context: string | undefined;
  kind: 'rlm' | 'leaf';
  model: Model;
  schema?: CheckedSchema;
}

/** Builds the sub-call functions for a session running at `callerDepth` in span `callerSpan`. */
export function createSubCalls(
  state: RunState,
  callerDepth: number,
  callerSpan: string,
  runChild: ChildRunner,
): SubCallHost {
  const depth = callerDepth + 1;
  const { maxDepth, maxSubCallChars } = state.opts;
  const fn = (kind: SubCallKind) => (kind === 'rlm' ? 'rlm_query' : 'llm_query');

  /** A job, or the "Error: ..." string refusing it; no model is called and nothing is counted. */
  const check = (item: SubCallItem, requested: SubCallKind): Job | string => {
    if (depth > maxDepth) {
      return `Error: DEPTH_EXCEEDED: ${fn(requested)} is not available at depth ${callerDepth} (max depth ${maxDepth})`;
    }
    const prompt = String(item.prompt);
    const context = item.context === undefined || item.context === null ? undefined : String(item.context);
    const kind = requested === 'rlm' && depth < maxDepth ? 'rlm' : 'leaf';
    const size = kind === 'leaf' ? prompt.length + (context?.length ?? 0) : prompt.length;
    if (size > maxSubCallChars) {
      const what = kind === 'leaf' ? 'prompt plus context' : 'prompt';
      return `Error: BAD_INPUT: the ${what} is ${size} characters; a plain completion takes at most ${maxSubCallChars}. Split it into smaller pieces.`;
    }
    const model = item.model === undefined ? state.modelFor(depth) : state.modelBySpec(item.model);
    if (model === undefined) {
      return state.forSandbox(
        `Error: BAD_INPUT: no model "${String(item.model).slice(0, 100)}" is configured; use one of ${state.modelNames().join(', ')}`,
      );
    }
    if (item.schema === undefined) return { prompt, context, kind, model };
    try {
      return { prompt, context, kind, model, schema: checkSchema(item.schema) };
    } catch (err) {
      return subCallError(state, err);
    }
  };

  /**
   * One plain completion; with a schema, its reply must parse and match, and a reply that does not gets
   * one more request saying what was wrong. Returns the answer (the checked value's JSON with a schema).
   * @throws RlmError BAD_OUTPUT when the second reply does not match either.
   */
  const complete = async (id: string, job: Job, signal: AbortSignal): Promise<string> => {
    const site = { span: id, depth, kind: 'leaf' as const, model: job.model };
    const ask = async (messages: ChatMessage[], iteration: number) =>
      (await state.callModel({ ...site, iteration }, buildLeafPrompt(), messages, signal)).text.trim();
    const request = requestText(job);
    if (job.schema === undefined) return ask([{ role: 'user', content: request }], 0);
    return askStructured(ask, request, job.schema);
  };

  /** Runs one job (the sub-call budget already counted when `reserved`). Throws an error with `rlm`. */
  const execute = async (id: string, job: Job, signal: AbortSignal, reserved: boolean) => {
    const started = performance.now();
    const release = await state.semaphore(depth).acquire(signal);
    try {
      if (!reserved) state.budget.reserveSubCall();
      state.tracer.emit(callerSpan, callerDepth, {
        type: 'subcall_start',
        id,
        calleeDepth: depth,
        kind: job.kind,
        prompt: preview(job.prompt),
        ...fullText(state, callerSpan, callerDepth, 'promptBlob', job.prompt),
        contextChars: job.context?.length ?? 0,
        cached: false,
      });
      let answer: string;
      let status: string | undefined;
      if (job.kind === 'leaf') {
        answer = await complete(id, job, signal);
      } else {
        const out = await runChild({
          depth,
          span: id,
          question: job.schema === undefined ? job.prompt : structuredPrompt(job.prompt, job.schema),
          context: job.context,
          signal,
          model: job.model,
          ...(job.schema === undefined ? {} : { schema: job.schema }),
        });
        if (out.status === 'error' || out.status === 'aborted' || out.status === 'budget') {
          throw Object.assign(new Error(out.error?.message ?? out.status), { rlm: out.error });
        }
        answer = out.answer;
        if (job.schema !== undefined) {
          // A run cut short by its turn limit answered without the loop's check.
          const checked = parseStructured(answer, job.schema);
          if (!checked.ok)
            throw new RlmError(
              'BAD_OUTPUT',
              `the sub-RLM's answer did not match the schema: ${checked.problems}`,
            );
          answer = JSON.stringify(checked.value);
        }
        status = out.status;
      }
      state.tracer.emit(callerSpan, callerDepth, {
        type: 'subcall_end',
        id,
        calleeDepth: depth,
        ok: true,
        answer: preview(answer),
        ...fullText(state, callerSpan, callerDepth, 'answerBlob', answer),
        cached: false,
        durationMs: Math.round(performance.now() - started),
        ...(status === undefined ? {} : { status }),
      });
      return answer;
    } catch (err) {
      const e = signal.aborted ? abortError(signal) : err;
      const rlm = (e as { rlm?: { code: string; message: string } }).rlm;
      const error = rlm ?? {
        code: isRlmError(e) ? e.code : 'RUNTIME',
        message: (e as Error)?.message ?? String(e),
      };
      state.tracer.emit(callerSpan, callerDepth, {
        type: 'subcall_end',
        id,
        calleeDepth: depth,
        ok: false,
        answer: '',
        cached: false,
        durationMs: Math.round(performance.now() - started),
        error,
      });
      throw Object.assign(new Error(error.message), { rlm: error });
    } finally {
      release();
    }
  };

  /** One checked job through the per-run cache. Never throws: failures become "Error:" strings. */
  const run = async (job: Job, signal: AbortSignal, reserved: boolean): Promise<string> => {
    const key = state.opts.cache ? cacheKey(job) : '';
    try {
      const hit = state.opts.cache ? state.cache.get(key) : undefined;
      if (hit !== undefined) {
        // A cached answer costs nothing: give back what the batch claimed for it.
        if (reserved) state.budget.refundSubCall();
        state.cacheHits++;
        const id = state.nextSpan();
        const base = { id, calleeDepth: depth, cached: true } as const;
        state.tracer.emit(callerSpan, callerDepth, {
          type: 'subcall_start',
          ...base,
          kind: job.kind,
          prompt: preview(job.prompt),
          ...fullText(state, callerSpan, callerDepth, 'promptBlob', job.prompt),
          contextChars: job.context?.length ?? 0,
        });
        const answer = await hit;
        state.tracer.emit(callerSpan, callerDepth, {
          type: 'subcall_end',
          ...base,
          ok: true,
          answer: preview(answer),
          ...fullText(state, callerSpan, callerDepth, 'answerBlob', answer),
          durationMs: 0,
        });
        return answer;
      }
      const work = execute(state.nextSpan(), job, signal, reserved);
      if (state.opts.cache) {
        state.cache.set(key, work);
        // Failures are not remembered: the next identical call tries again.
        work.catch(() => state.cache.delete(key));
      }
      return await work;
    } catch (err) {
      return subCallError(state, err);
    }
  };

  const llmQuery = async (
    prompt: string,
    context: string | undefined,
    blockSignal: AbortSignal,
    opts: SubCallOptions = {},
  ): Promise<string> => {
    const job = check(
      {
        prompt,
        ...(context === undefined ? {} : { context }),
        ...(opts.model === undefined ? {} : { model: opts.model }),
        ...(opts.schema === undefined ? {} : { schema: opts.schema }),
      },
      opts.kind ?? 'llm',
    );
    if (typeof job === 'string') return job;
    const ctl = linkedController(state.signal, blockSignal);
    try {
      return await run(job, ctl.signal, false);
    } finally {
      ctl.abort();
    }
  };

  const llmQueryBatched = async (
    items: SubCallItem[],
    blockSignal: AbortSignal,
    opts: SubCallOptions = {},
  ): Promise<string[]> => {
    const requested = opts.kind ?? 'llm';
    if (!Array.isArray(items)) return [`Error: BAD_INPUT: ${fn(requested)}_batched takes an array`];
    const answers: string[] = new Array(items.length);
    const jobs: { index: number; job: Job }[] = [];
    for (let i = 0; i < items.length; i++) {
      if (i > 0 && i % CHECKS_PER_YIELD === 0) await yieldToLoop();
      const item = items[i] as SubCallItem;
      const job = check(
        opts.model !== undefined && item.model === undefined ? { ...item, model: opts.model } : item,
        requested,
      );
      if (typeof job === 'string') answers[i] = job;
      else jobs.push({ index: i, job });
    }
    // The budget is claimed for the whole batch before anything starts; what does not fit is refused now.
    const granted = state.budget.claimSubCalls(jobs.length);
    if (granted < jobs.length) {
      const refusal =
        `Error: BUDGET_EXCEEDED: the run's sub-call budget (${state.budget.limits.maxSubCalls}) had room for ` +
        `${granted} of this batch's ${plural(jobs.length, 'call')}; this item was not run. Use fewer, larger pieces.`;
      for (let k = granted; k < jobs.length; k++) answers[(jobs[k] as { index: number }).index] = refusal;
    }
    const ctl = linkedController(state.signal, blockSignal);
    let next = 0;
    const worker = async (): Promise<void> => {
      let done = 0;
      while (next < granted && !ctl.signal.aborted) {
        const { index, job } = jobs[next++] as { index: number; job: Job };
        answers[index] = await run(job, ctl.signal, true);
        if (++done % ITEMS_PER_YIELD === 0) await yieldToLoop();
      }
    };
    try {
      const workers: Promise<void>[] = [];
      for (let w = 0; w < Math.min(state.opts.subCallConcurrency, granted); w++) workers.push(worker());
      await Promise.all(workers);
    } finally {
      if (next < granted) {
        // Claimed but never started (the batch was aborted): not spent.
        state.budget.refundSubCall(granted - next);
        const stopped = subCallError(
          state,
          ctl.signal.aborted ? abortError(ctl.signal) : new Error('not run'),
        );
        for (let k = next; k < granted; k++) answers[(jobs[k] as { index: number }).index] = stopped;
      }
      ctl.abort();
    }
    return answers;
  };

  return { llmQuery, llmQueryBatched };
}
