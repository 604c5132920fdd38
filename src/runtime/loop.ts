/**
 * One RLM run at a given depth: ask the model, run every ```repl block of its reply in the session, feed
 * the (truncated) outputs back, and repeat until FINAL, the turn limit, a budget, an abort or too many
 * failing blocks in a row. The root and every sub-RLM run through here with their own sandbox.
 */

import { isRlmError } from '../../core/errors.ts';
import { buildSystemPrompt, type PromptRole } from '../prompts/build.ts';
import {
  answerTooLongMessage,
  type BlockFeedback,
  firstMessage,
  ignoredFenceNote,
  LAST_CALL_MESSAGE,
  missingVariableMessage,
  NO_ACTION_NOTE,
  replyTruncatedNote,
  turnFeedback,
} from '../prompts/messages.ts';
import type { ContextShape, PromptLimits } from '../prompts/shape.ts';
import type { DocumentEntry, SandboxHost, StoreSource } from '../sandbox/host.ts';
import type { Sandbox, SandboxLimits } from '../sandbox/types.ts';
import { abortError, raceAbort, throwIfAborted } from './abort.ts';
import { DEFAULT_MAX_CONTEXT_CHARS, textShape } from './input.ts';
import type { ChatMessage, Model } from './model.ts';
import { type FinalCall, MAX_REPLY_CHARS, type ParsedReply, parseReply } from './parse.ts';
import type { RunStatus } from './result.ts';
import type { RunState } from './run-state.ts';
import { type ChildOutcome, type ChildRunner, createSubCalls } from './subcalls.ts';
import { answerPreview, type FinalEvent } from './trace.ts';

/** One loop to run. */
export interface LoopParams {
  depth: number;
  span: string;
  role: PromptRole;
  question: string;
  context?: string | string[];
  /** A store, or the function that builds the index of the run's --context files on first use. */
  store?: StoreSource;
  /** What `list_documents()` returns (root over a store). */
  documents?: DocumentEntry[];
  shape: ContextShape;
  maxIterations: number;
  /** The run's signal, or one linked to the calling block for a sub-RLM. */
  signal: AbortSignal;
  /** Short context shown in the first message (sub-RLMs), so an answer can come at once. */
  inlineContext?: string;
  /** The model of this loop's own turns, when a sub-call picked one; default the depth's model. */
  model?: Model;
}

/** How the loop ended. */
export interface LoopResult extends ChildOutcome {
  iterations: number;
}

/** Per-session sandbox limits: outputs sized to what the model is shown, and room for slow sub-calls. */
function sessionLimits(state: RunState): SandboxLimits {
  const o = state.opts;
  return {
    ...o.sandbox,
    // The sandbox is the one place output is cut (with a true omitted count), to what the model is shown.
    maxOutputChars: Math.min(o.sandbox.maxOutputChars ?? o.maxOutputCharsPerBlock, o.maxOutputCharsPerBlock),
    // A block that awaits a sub-RLM can legitimately take minutes; the run's wall budget still applies.
    wallMs: o.sandbox.wallMs ?? Math.min(o.maxWallMs, 15 * 60_000),
  };
}

/** Runs one RLM loop to its end. Never throws: failures become a status and an error. */
export async function runLoop(state: RunState, p: LoopParams): Promise<LoopResult> {
  const o = state.opts;
  const { depth, span, signal } = p;
  const limits: PromptLimits = {
    depth,
    maxDepth: o.maxDepth,
    maxIterations: p.maxIterations,
    maxOutputCharsPerBlock: o.maxOutputCharsPerBlock,
    maxSubCallChars: o.maxSubCallChars,
    subCallConcurrency: o.subCallConcurrency,
    maxAnswerChars: o.maxAnswerChars,
    models: state.modelNames(),
  };
  const system = buildSystemPrompt(p.role, p.shape, limits);
  const messages: ChatMessage[] = [
    { role: 'user', content: firstMessage(p.question, p.shape, p.inlineContext) },
  ];
  const session = new LazySandbox(state, p, signal, childRunner(state));
  let iterations = 0;
  let partial = '';
  let consecutiveErrors = 0;

  const finish = (answer: string, status: RunStatus, source: FinalEvent['source']): LoopResult => {
    state.tracer.emit(span, depth, { type: 'final', source, answer });
    return { answer, status, iterations };
  };

  try {
    for (let turn = 1; turn <= p.maxIterations; turn++) {
      iterations = turn;
      // A copy per call: a provider or test double may keep the request it was given.
      const site = {
        span,
        depth,
        iteration: turn,
        kind: 'turn' as const,
        ...(p.model ? { model: p.model } : {}),
      };
      const reply = await state.callModel(site, system, messages.slice(), signal);
      messages.push({ role: 'assistant', content: reply.text });
      const parsed = parseReply(reply.text);
      partial = partialFrom(parsed, partial);
      throwIfAborted(signal);

      const feedback: BlockFeedback[] = [];
      for (const [i, block] of parsed.blocks.entries()) {
        state.tracer.emit(span, depth, { type: 'block', iteration: turn, index: i + 1, code: block.code });
        const started = performance.now();
        const sandbox = await session.get();
        const r = await raceAbort(sandbox.run(block.code, signal), signal);
        state.tracer.emit(span, depth, {
          type: 'output',
          iteration: turn,
          index: i + 1,
          ok: r.ok,
          stdout: r.stdout,
          error: r.error,
          final: r.final === null ? null : answerPreview(r.final),
          reset: r.reset,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
        });
        throwIfAborted(signal);
        const tooLong = r.final !== null && r.final.length > o.maxAnswerChars;
        if (r.final !== null && !tooLong) return finish(r.final, 'final', 'code');
        feedback.push({
          index: i + 1,
          // The sandbox already cut the output to this size with a true omitted count; cutting again
          // here would replace that count with a wrong one.
          stdout: r.stdout,
          error: tooLong
            ? { code: 'BAD_INPUT', message: answerTooLongMessage(r.final?.length ?? 0, o.maxAnswerChars) }
            : r.error,
          reset: r.reset,
        });
        consecutiveErrors = r.ok && !tooLong ? 0 : consecutiveErrors + 1;
        if (consecutiveErrors >= o.maxConsecutiveErrors) {
          const last = r.error ?? { code: 'RUNTIME', message: 'block failed' };
          const error = {
            code: last.code,
            message: `${consecutiveErrors} code blocks failed in a row; last: ${last.message}`,
          };
          state.tracer.emit(span, depth, { type: 'error', ...error });
          return { answer: partial, status: 'error', iterations, error };
        }
      }

      const notes: string[] = [];
      if (parsed.truncated) notes.push(replyTruncatedNote(MAX_REPLY_CHARS));
      for (const f of parsed.ignored) notes.push(ignoredFenceNote(f.lang, f.line));
      if (parsed.final !== null) {
        const resolved = await resolveFinal(parsed.final, session, signal);
        if (resolved === undefined) {
          notes.push(missingVariableMessage((parsed.final as { name: string }).name));
        } else if (resolved.answer.length > o.maxAnswerChars) {
          notes.push(answerTooLongMessage(resolved.answer.length, o.maxAnswerChars));
        } else {
          return finish(resolved.answer, 'final', resolved.source);
        }
      } else if (parsed.blocks.length === 0 && parsed.ignored.length === 0) {
        notes.push(NO_ACTION_NOTE);
      }
      messages.push({ role: 'user', content: turnFeedback(feedback, notes, turn, p.maxIterations) });
    }

    // Out of turns: one last request, answered without running code.
    const last = messages[messages.length - 1] as ChatMessage;
    messages[messages.length - 1] = { role: 'user', content: `${last.content}\n\n${LAST_CALL_MESSAGE}` };
    const site = {
      span,
      depth,
      iteration: p.maxIterations + 1,
      kind: 'last_call' as const,
      ...(p.model ? { model: p.model } : {}),
    };
    const reply = await state.callModel(site, system, messages.slice(), signal);
    throwIfAborted(signal);
    const parsed = parseReply(reply.text);
    const resolved = parsed.final === null ? undefined : await resolveFinal(parsed.final, session, signal);
    // No turn is left to shorten it: the answer is cut to the bound instead.
    const answer = (resolved?.answer ?? partialFrom(parsed, partial)).slice(0, o.maxAnswerChars);
    return finish(answer, 'max_iterations', 'last_call');
  } catch (err) {
    const aborted = signal.aborted;
    const e = aborted ? abortError(signal) : err;
    const error = {
      code: isRlmError(e) ? e.code : 'RUNTIME',
      message: (e as Error)?.message ?? String(e),
    };
    const status: RunStatus = !aborted ? 'error' : error.code === 'BUDGET_EXCEEDED' ? 'budget' : 'aborted';
    state.tracer.emit(span, depth, { type: 'error', ...error });
    if (partial !== '') state.tracer.emit(span, depth, { type: 'final', source: 'partial', answer: partial });
    return { answer: partial, status, iterations, error };
  } finally {
    session.dispose();
    state.requests.end(span);
  }
}

/** The best answer so far: a FINAL written in the reply, else the reply's prose, else the previous one. */
function partialFrom(parsed: ParsedReply, previous: string): string {
  if (parsed.final?.kind === 'final') return parsed.final.answer;
  return parsed.prose !== '' ? parsed.prose : previous;
}

/**
 * The answer a FINAL / FINAL_VAR in reply text stands for; undefined when FINAL_VAR's variable is missing.
 * `FINAL(name)` with a bare identifier gives the variable's value when the session defines it (what the
 * model meant), else the name as literal text.
 */
async function resolveFinal(
  call: FinalCall,
  session: LazySandbox,
  signal: AbortSignal,
): Promise<{ answer: string; source: FinalEvent['source'] } | undefined> {
  const sandbox = session.existing();
  if (call.kind === 'final') {
    if (call.identifier === undefined || sandbox === undefined)
      return { answer: call.answer, source: 'text' };
    const value = await raceAbort(sandbox.readVariable(call.identifier), signal);
    return value === undefined
      ? { answer: call.answer, source: 'text' }
      : { answer: value, source: 'variable' };
  }
  if (sandbox === undefined) return undefined;
  const value = await raceAbort(sandbox.readVariable(call.name), signal);
  return value === undefined ? undefined : { answer: value, source: 'variable' };
}

/** Sub-RLMs run through the same loop with their own session and the sub-RLM prompt. */
function childRunner(state: RunState): ChildRunner {
  const maxContext = state.opts.sandbox.maxContextChars ?? DEFAULT_MAX_CONTEXT_CHARS;
  return (req) => {
    const ctx = req.context;
    const inline = ctx !== undefined && ctx.length <= state.opts.inlineContextChars;
    return runLoop(state, {
      depth: req.depth,
      span: req.span,
      role: 'sub',
      question: req.question,
      ...(req.context === undefined ? {} : { context: req.context }),
      shape: textShape(req.context, maxContext),
      maxIterations: state.opts.maxSubIterations,
      signal: req.signal,
      model: req.model,
      ...(inline ? { inlineContext: ctx } : {}),
    });
  };
}

/**
 * The loop's session, created on the first block: a run answered at once (common for sub-RLMs shown
 * their context inline) never pays for an isolate. A session that arrives after the loop ended is
 * disposed on arrival.
 */
class LazySandbox {
  readonly #state: RunState;
  readonly #host: SandboxHost;
  readonly #signal: AbortSignal;
  #sandbox: Sandbox | undefined;
  #pending: Promise<Sandbox> | undefined;
  #closed = false;

  constructor(state: RunState, p: LoopParams, signal: AbortSignal, runChild: ChildRunner) {
    this.#state = state;
    this.#signal = signal;
    // With neither context nor store, `context` is an empty string (as the prompt says), not undefined.
    const context = p.context ?? (p.store === undefined ? '' : undefined);
    this.#host = {
      ...(context === undefined ? {} : { context }),
      ...(p.store === undefined ? {} : { store: p.store }),
      ...(p.documents === undefined ? {} : { documents: p.documents }),
      ...createSubCalls(state, p.depth, p.span, runChild),
    };
  }

  existing(): Sandbox | undefined {
    return this.#sandbox;
  }

  get(): Promise<Sandbox> {
    if (this.#sandbox !== undefined) return Promise.resolve(this.#sandbox);
    if (this.#pending === undefined) {
      this.#pending = this.#state.sandboxFactory(this.#host, sessionLimits(this.#state));
      this.#pending.then(
        (sb) => {
          if (this.#closed) sb.dispose();
          else this.#sandbox = sb;
        },
        () => {},
      );
    }
    return raceAbort(this.#pending, this.#signal);
  }

  dispose(): void {
    this.#closed = true;
    this.#sandbox?.dispose();
    this.#sandbox = undefined;
  }
}
