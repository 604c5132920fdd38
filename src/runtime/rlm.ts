/**
 * The library entry point: `new RLM(options).answer({ question, context | paths | store })`. It loads the
 * input, builds the run's shared state (models, budget, trace, cache), runs the root loop and shapes the
 * result. Caller mistakes (no model, bad input, missing store) throw; everything that goes wrong during the
 * run itself comes back as a status in the result.
 */
import { randomUUID } from 'node:crypto';
import type { Env } from '../../core/env.ts';
import { RlmError } from '../../core/errors.ts';
import type { SandboxHost } from '../sandbox/host.ts';
import type { Sandbox, SandboxLimits } from '../sandbox/types.ts';
import { linkedController } from './abort.ts';
import { type AnswerInput, DEFAULT_MAX_CONTEXT_CHARS, type LoadedInput, loadInput } from './input.ts';
import { runLoop } from './loop.ts';
import type { Model } from './model.ts';
import { type ModelFactory, type ResolvedOptions, type RlmOptions, resolveOptions } from './options.ts';
import type { RlmResult } from './result.ts';
import { RunState } from './run-state.ts';
import { answerPreview, JsonlTraceFile, type TraceEvent, Tracer, type TraceSink } from './trace.ts';
import { buildTrajectory } from './trajectory.ts';

/** Loads the isolated-vm sandbox on first use, so importing the library does not load the native addon. */
export async function defaultSandboxFactory(host: SandboxHost, limits?: SandboxLimits): Promise<Sandbox> {
  const { createSandbox } = await import('../sandbox/session.ts');
  return createSandbox(host, limits);
}

async function defaultModelFactory(spec: string, env: Env, concurrency: number): Promise<Model> {
  const { createModel } = await import('./providers/index.ts');
  // A provider with its own process limit (claude-code) runs as many calls as the prompt promises.
  return createModel(spec, { env, concurrency });
}

/** A Recursive Language Model runner. One instance can answer many questions, one after another or at once. */
export class RLM {
  readonly #opts: ResolvedOptions;

  /** Resolves options and env fallbacks now, so a bad configuration fails before any work. */
  constructor(options: RlmOptions = {}) {
    this.#opts = resolveOptions(options);
  }

  /** The options in effect, defaults applied. */
  get options(): Readonly<ResolvedOptions> {
    return this.#opts;
  }

  /** Answers one question over the given context, paths or store. */
  async answer(input: AnswerInput): Promise<RlmResult> {
    const o = this.#opts;
    const started = performance.now();
    const maxContext = o.sandbox.maxContextChars ?? DEFAULT_MAX_CONTEXT_CHARS;
    const [rootModel, subModel, extraModels] = await this.#models();
    // A run over a context nearly always runs code: its isolate process boots while the input is read and
    // the first reply is awaited (the default sandbox only; a custom factory makes its own).
    if (
      o.sandboxFactory === undefined &&
      (input.paths?.length ?? 0) + (input.context === undefined ? 0 : 1) > 0
    )
      void import('../sandbox/process/pool.ts').then((m) => m.prestartProcess()).catch(() => undefined);
    const loaded: LoadedInput = await loadInput(input, maxContext);
    // Created after the fallible setup so a failed call leaves no listener on a long-lived signal.
    const controller = linkedController(o.signal, input.signal);
    const sinks: TraceSink[] = [];
    let tracer: Tracer | undefined;
    try {
      if (o.trace !== undefined) sinks.push(new JsonlTraceFile(o.trace));
      const kept: TraceEvent[] = [];
      if (o.trajectory) sinks.push({ write: (e) => kept.push(e), close: () => {} });
      tracer = new Tracer(randomUUID(), sinks, o.onEvent, performance.now(), o.traceLevel);
      const state = new RunState({
        opts: o,
        rootModel,
        subModel,
        extraModels,
        tracer,
        sandboxFactory: o.sandboxFactory ?? defaultSandboxFactory,
        controller,
      });
      tracer.emit('root', 0, {
        type: 'run_start',
        time: new Date().toISOString(),
        question: input.question,
        model: rootModel.spec,
        subModel: subModel.spec,
        maxDepth: o.maxDepth,
        maxIterations: o.maxIterations,
        context: loaded.shape,
      });
      state.budget.startClock();
      const out = await runLoop(state, {
        depth: 0,
        span: 'root',
        role: 'root',
        question: input.question,
        ...(loaded.context === undefined ? {} : { context: loaded.context }),
        ...(loaded.store === undefined ? {} : { store: loaded.store }),
        ...(loaded.documents === undefined ? {} : { documents: loaded.documents }),
        ...(loaded.contextFiles === undefined ? {} : { contextFiles: loaded.contextFiles }),
        shape: loaded.shape,
        maxIterations: o.maxIterations,
        signal: state.signal,
      });
      state.budget.stopClock();
      const b = state.budget;
      const result: RlmResult = {
        answer: out.answer,
        status: out.status,
        iterations: out.iterations,
        subCalls: b.subCalls,
        maxDepthReached: state.maxDepthReached,
        usage: { inputTokens: b.inputTokens, outputTokens: b.outputTokens, costUsd: roundUsd(b.costUsd) },
        elapsedMs: Math.round(performance.now() - started),
        ...(out.error === undefined ? {} : { error: out.error }),
        usageByModel: Object.fromEntries(b.byModel),
        cacheHits: state.cacheHits,
        runId: tracer.run,
      };
      tracer.emit('root', 0, {
        type: 'run_end',
        result: { ...result, answer: answerPreview(result.answer) },
      });
      // Built after run_end (whose copy of the result it includes) and kept out of the trace itself.
      return o.trajectory ? { ...result, trajectory: buildTrajectory(kept) } : result;
    } finally {
      tracer?.close();
      if (tracer === undefined) for (const s of sinks) s.close();
      // Detaches the listeners on the caller's signals and stops any straggling sub-call.
      controller.abort(new RlmError('ABORTED', 'the run has ended'));
      await loaded.close();
    }
  }

  async #models(): Promise<[Model, Model, Model[]]> {
    const o = this.#opts;
    const make: ModelFactory =
      o.modelFactory ?? ((spec, env) => defaultModelFactory(spec, env, o.subCallConcurrency));
    const root = typeof o.model === 'string' ? await make(o.model, o.env) : o.model;
    const sub =
      o.subModel === o.model
        ? root
        : typeof o.subModel === 'string'
          ? await make(o.subModel, o.env)
          : o.subModel;
    const extra: Model[] = [];
    for (const m of o.models) extra.push(typeof m === 'string' ? await make(m, o.env) : m);
    return [root, sub, extra];
  }
}

/** Costs are reported to a millionth of a dollar; float noise beyond that only confuses readers. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
