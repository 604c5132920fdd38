/**
 * The host side of `llm_query` and `llm_query_batched` for a session at a given depth. A call from depth d
 * runs at d + 1: a sub-RLM (own sandbox) below maxDepth, a plain leaf completion at maxDepth, and nothing
 * beyond. Failures come back to model code as strings starting with "Error:" so one bad call never sinks a
 * batch; only the run's budget can stop everything, and it does so by aborting the run, not by throwing.
 */
import { createHash } from 'node:crypto';
import { isRlmError } from '../errors.ts';
import { buildLeafPrompt } from '../prompts/build.ts';
import { LEAF_CONTEXT_HEADER } from '../prompts/leaf.ts';
import type { SandboxHost } from '../sandbox/host.ts';
import { abortError, linkedController } from './abort.ts';
import type { RunStatus } from './result.ts';
import type { RunState } from './run-state.ts';

/** A sub-RLM run requested by a sub-call. */
export interface ChildRequest {
  depth: number;
  span: string;
  question: string;
  context: string | undefined;
  signal: AbortSignal;
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

/** The error string model code receives for a failed sub-call. */
export function subCallError(err: unknown): string {
  if (isRlmError(err)) return `Error: ${err.code}: ${err.message}`;
  return `Error: RUNTIME: ${(err as Error)?.message ?? String(err)}`;
}

function cacheKey(spec: string, kind: string, prompt: string, context: string | undefined): string {
  return createHash('sha256')
    .update(JSON.stringify([spec, kind, prompt, context ?? null]))
    .digest('base64url');
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
  const kind: 'rlm' | 'leaf' = depth < maxDepth ? 'rlm' : 'leaf';

  const execute = async (id: string, prompt: string, context: string | undefined, signal: AbortSignal) => {
    const started = performance.now();
    const release = await state.semaphore(depth).acquire(signal);
    try {
      state.budget.reserveSubCall();
      state.tracer.emit(callerSpan, callerDepth, {
        type: 'subcall_start',
        id,
        calleeDepth: depth,
        kind,
        prompt: preview(prompt),
        ...fullText(state, callerSpan, callerDepth, 'promptBlob', prompt),
        contextChars: context?.length ?? 0,
        cached: false,
      });
      let answer: string;
      let status: string | undefined;
      if (kind === 'leaf') {
        const content = context === undefined ? prompt : prompt + LEAF_CONTEXT_HEADER + context;
        const site = { span: id, depth, iteration: 0, kind: 'leaf' as const };
        answer = (
          await state.callModel(site, buildLeafPrompt(), [{ role: 'user', content }], signal)
        ).text.trim();
      } else {
        const out = await runChild({ depth, span: id, question: prompt, context, signal });
        if (out.status === 'error' || out.status === 'aborted' || out.status === 'budget') {
          throw Object.assign(new Error(out.error?.message ?? out.status), { rlm: out.error });
        }
        answer = out.answer;
        status = out.status;
      }
      const ms = Math.round(performance.now() - started);
      state.tracer.emit(callerSpan, callerDepth, {
        type: 'subcall_end',
        id,
        calleeDepth: depth,
        ok: true,
        answer: preview(answer),
        ...fullText(state, callerSpan, callerDepth, 'answerBlob', answer),
        cached: false,
        durationMs: ms,
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

  const llmQuery = async (
    prompt: string,
    context: string | undefined,
    blockSignal: AbortSignal,
  ): Promise<string> => {
    const p = String(prompt);
    const c = context === undefined || context === null ? undefined : String(context);
    if (depth > maxDepth) {
      return `Error: DEPTH_EXCEEDED: llm_query is not available at depth ${callerDepth} (max depth ${maxDepth})`;
    }
    const size = kind === 'leaf' ? p.length + (c?.length ?? 0) : p.length;
    if (size > maxSubCallChars) {
      const what = kind === 'leaf' ? 'prompt plus context' : 'prompt';
      return `Error: BAD_INPUT: the ${what} is ${size} characters; a sub-call takes at most ${maxSubCallChars}. Split it.`;
    }
    const ctl = linkedController(state.signal, blockSignal);
    const key = state.opts.cache ? cacheKey(state.modelFor(depth).spec, kind, p, c) : '';
    try {
      const hit = state.opts.cache ? state.cache.get(key) : undefined;
      if (hit !== undefined) {
        state.cacheHits++;
        const id = state.nextSpan();
        const base = { id, calleeDepth: depth, cached: true } as const;
        state.tracer.emit(callerSpan, callerDepth, {
          type: 'subcall_start',
          ...base,
          kind,
          prompt: preview(p),
          ...fullText(state, callerSpan, callerDepth, 'promptBlob', p),
          contextChars: c?.length ?? 0,
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
      const work = execute(state.nextSpan(), p, c, ctl.signal);
      if (state.opts.cache) {
        state.cache.set(key, work);
        // Failures are not remembered: the next identical call tries again.
        work.catch(() => state.cache.delete(key));
      }
      return await work;
    } catch (err) {
      const rlm = (err as { rlm?: { code: string; message: string } }).rlm;
      return rlm === undefined ? subCallError(err) : `Error: ${rlm.code}: ${rlm.message}`;
    } finally {
      ctl.abort();
    }
  };

  const llmQueryBatched = (prompts: string[], signal: AbortSignal): Promise<string[]> => {
    if (!Array.isArray(prompts))
      return Promise.resolve(['Error: BAD_INPUT: llm_query_batched takes an array of prompts']);
    return Promise.all(prompts.map((p) => llmQuery(p, undefined, signal)));
  };

  return { llmQuery, llmQueryBatched };
}
