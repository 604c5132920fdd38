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
  schemaMismatchMessage,
  turnFeedback,
  unknownFinalNameMessage,
} from '../prompts/messages.ts';
import type { ContextShape, PromptLimits } from '../prompts/shape.ts';
import type { ContextFileRef, DocumentList, SandboxHost, StoreSource } from '../sandbox/host.ts';
import type { Sandbox, SandboxLimits } from '../sandbox/types.ts';
import { abortError, raceAbort, throwIfAborted } from './abort.ts';
import { declaredNames, nearestName, seenWord } from './final-name.ts';
import { DEFAULT_MAX_CONTEXT_CHARS, textShape } from './input.ts';
import type { ChatMessage, Model } from './model.ts';
import { type FinalCall, MAX_REPLY_CHARS, type ParsedReply, parseReply } from './parse.ts';
import type { RunStatus } from './result.ts';
import type { RunState } from './run-state.ts';
import { type CheckedSchema, parseStructured } from './structured.ts';
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
  /** What `list_documents()` returns (root over a store or files). */
  documents?: DocumentList;
  /** The store documents the context's texts are (the run's --context files): see SandboxHost. */
  contextFiles?: readonly ContextFileRef[];
  shape: ContextShape;
  maxIterations: number;
  /** The run's signal, or one linked to the calling block for a sub-RLM. */
  signal: AbortSignal;
  /** Short context shown in the first message (sub-RLMs), so an answer can come at once. */
  inlineContext?: string;
  /** The model of this loop's own turns, when a sub-call picked one; default the depth's model. */
  model?: Model;
  /** The shape the FINAL answer must have (a sub-RLM asked for structured output). */
  schema?: CheckedSchema;
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
  // What the run has put before the model, and the names its code declared: a bare FINAL(name) that is
  // neither a variable nor a word seen here is taken for a typo (final-name.ts).
  const seen: string[] = [p.question, ...(p.shape.sample?.lines ?? [])];
  if (p.inlineContext !== undefined) seen.push(p.inlineContext);
  const declared = new Set<string>();
  let iterations = 0;
  let partial = '';
  let consecutiveErrors = 0;

  const finish = (answer: string, status: RunStatus, source: FinalEvent['source']): LoopResult => {
    state.tracer.emit(span, depth, { type: 'final', source, answer });
    return { answer, status, iterations };
  };
  // With a schema, a FINAL that does not match gets one more turn; a second one ends the run in error.
  let schemaMisses = 0;
  const checkAnswer = (answer: string): { answer: string } | { note: string } | { error: LoopResult } => {
    if (p.schema === undefined) return { answer };
    const checked = parseStructured(answer, p.schema);
    if (checked.ok) return { answer: JSON.stringify(checked.value) };
    if (schemaMisses++ === 0) return { note: schemaMismatchMessage(checked.problems) };
    const error = {
      code: 'BAD_OUTPUT',
      message: `the FINAL answer did not match the schema, twice: ${checked.problems}`,
    };
    state.tracer.emit(span, depth, { type: 'error', ...error });
    return { error: { answer, status: 'error', iterations, error } };
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
      seen.push(withoutFinal(parsed.prose));
      for (const block of parsed.blocks) for (const name of declaredNames(block.code)) declared.add(name);

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
        seen.push(r.stdout);
        const tooLong = r.final !== null && r.final.length > o.maxAnswerChars;
        let refused: string | null = tooLong
          ? answerTooLongMessage(r.final?.length ?? 0, o.maxAnswerChars)
          : null;
        if (r.final !== null && !tooLong) {
          const checked = checkAnswer(r.final);
          if ('answer' in checked) return finish(checked.answer, 'final', 'code');
          if ('error' in checked) return checked.error;
          refused = checked.note;
        }
        feedback.push({
          index: i + 1,
          // The sandbox already cut the output to this size with a true omitted count; cutting again
          // here would replace that count with a wrong one.
          stdout: r.stdout,
          error: refused === null ? r.error : { code: 'BAD_INPUT', message: refused },
          reset: r.reset,
        });
        consecutiveErrors = r.ok && refused === null ? 0 : consecutiveErrors + 1;
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
        const resolved = await resolveFinal(parsed.final, session, signal, seen);
        if (resolved === undefined) {
          notes.push(missingVariableMessage((parsed.final as { name: string }).name));
        } else if ('unknown' in resolved) {
          const near = nearestName(resolved.unknown, declared);
          const exists = near !== undefined && (await session.existing()?.readVariable(near)) !== undefined;
          notes.push(unknownFinalNameMessage(resolved.unknown, exists ? near : undefined));
        } else if (resolved.answer.length > o.maxAnswerChars) {
          notes.push(answerTooLongMessage(resolved.answer.length, o.maxAnswerChars));
        } else {
          const checked = checkAnswer(resolved.answer);
          if ('answer' in checked) return finish(checked.answer, 'final', resolved.source);
          if ('error' in checked) return checked.error;
          notes.push(checked.note);
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
    // No turn is left to ask again: a bare name that is no variable is taken as written.
    const resolved =
      parsed.final === null ? undefined : await resolveFinal(parsed.final, session, signal, null);
    const given = resolved === undefined || 'unknown' in resolved ? undefined : resolved.answer;
    // No turn is left to shorten it: the answer is cut to the bound instead.
    const answer = (given ?? partialFrom(parsed, partial)).slice(0, o.maxAnswerChars);
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

/** Prose without the FINAL(...) that ends it: the word in a FINAL must have been seen before it. */
function withoutFinal(prose: string): string {
  const at = prose.lastIndexOf('FINAL');
  return at === -1 ? prose : prose.slice(0, at);
}

/** The best answer so far: a FINAL written in the reply, else the reply's prose, else the previous one. */
function partialFrom(parsed: ParsedReply, previous: string): string {
  if (parsed.final?.kind === 'final') return parsed.final.answer;
  return parsed.prose !== '' ? parsed.prose : previous;
}

/**
 * The answer a FINAL / FINAL_VAR in reply text stands for; undefined when FINAL_VAR's variable is missing.
 * `FINAL(name)` with a bare identifier gives the variable's value when the session defines it (what the
 * model meant); else the name as literal text when it is a word in `seen` (null: always), and
 * `{unknown}` when it is not, for the model to be asked again.
 */
async function resolveFinal(
  call: FinalCall,
  session: LazySandbox,
  signal: AbortSignal,
  seen: readonly string[] | null,
): Promise<{ answer: string; source: FinalEvent['source'] } | { unknown: string } | undefined> {
  const sandbox = session.existing();
  if (call.kind === 'final') {
    if (call.identifier === undefined) return { answer: call.answer, source: 'text' };
    const value =
      sandbox === undefined ? undefined : await raceAbort(sandbox.readVariable(call.identifier), signal);
    if (value !== undefined) return { answer: value, source: 'variable' };
    if (seen === null || seenWord(call.identifier, seen)) return { answer: call.answer, source: 'text' };
    return { unknown: call.identifier };
  }
  if (sandbox === undefined) return undefined;
  const value = await raceAbort(sandbox.readVariable(call.name), signal);
  return value === undefined ? undefined : { answer: value, source: 'variable' };
}

function withoutSample(shape: ContextShape): ContextShape {
  const { sample: _sample, ...rest } = shape;
  return rest;
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
      // A context shown in full needs no sample of its first lines.
      shape: inline ? withoutSample(textShape(req.context, maxContext)) : textShape(req.context, maxContext),
      maxIterations: state.opts.maxSubIterations,
      signal: req.signal,
      model: req.model,
      ...(inline ? { inlineContext: ctx } : {}),
      ...(req.schema === undefined ? {} : { schema: req.schema }),
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
      ...(p.contextFiles === undefined ? {} : { contextFiles: p.contextFiles }),
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
