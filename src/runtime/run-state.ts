/**
 * What one run shares across its whole recursion tree: resolved options, the two models, the budget, the
 * tracer, the run-level abort signal, the sub-call cache and the per-depth concurrency bounds. Model calls
 * go through {@link RunState.callModel} so usage, cost, depth and tracing are accounted in one place.
 */
import { RlmError } from '../../core/errors.ts';
import { withoutHostPaths } from '../../core/host-paths.ts';
import { abortError, raceAbort, throwIfAborted } from './abort.ts';
import { Budget } from './budget.ts';
import type { CallSite } from './call-site.ts';
import type { ChatMessage, Model, ModelResponse } from './model.ts';
import { modelAliases, modelName } from './model-name.ts';
import type { ResolvedOptions, SandboxFactory } from './options.ts';
import { costOf } from './pricing.ts';
import { Semaphore } from './semaphore.ts';
import type { Tracer } from './trace.ts';
import { RequestRecorder } from './trace-requests.ts';

export class RunState {
  readonly opts: ResolvedOptions;
  readonly rootModel: Model;
  readonly subModel: Model;
  /** Every model a sub-call may pick by spec: root, sub-model and the `models` option. */
  readonly models: ReadonlyMap<string, Model>;
  readonly budget: Budget;
  readonly tracer: Tracer;
  /** Records each model request in the trace (level `full`). */
  readonly requests: RequestRecorder;
  readonly sandboxFactory: SandboxFactory;
  /** Aborts on the caller's signal or when the budget trips. */
  readonly signal: AbortSignal;
  /** In-flight and settled sub-call answers by cache key. */
  readonly cache = new Map<string, Promise<string>>();
  cacheHits = 0;
  maxDepthReached = 0;
  readonly #controller: AbortController;
  readonly #semaphores = new Map<number, Semaphore>();
  readonly #byName = new Map<string, Model>();
  readonly #names = new Map<Model, string>();
  readonly #aliases: Array<[string, string]> = [];
  #spans = 0;

  constructor(init: {
    opts: ResolvedOptions;
    rootModel: Model;
    subModel: Model;
    /** Further models sub-calls may pick by spec. */
    extraModels?: Model[];
    tracer: Tracer;
    sandboxFactory: SandboxFactory;
    controller: AbortController;
  }) {
    this.opts = init.opts;
    this.rootModel = init.rootModel;
    this.subModel = init.subModel;
    const models = new Map<string, Model>();
    for (const m of [init.rootModel, init.subModel, ...(init.extraModels ?? [])]) {
      if (!models.has(m.spec)) models.set(m.spec, m);
    }
    this.models = models;
    for (const [spec, m] of models) {
      // Two rules files of the same name in different folders get told apart by a number.
      let name = modelName(spec);
      for (let n = 2; this.#byName.has(name); n++) name = `${modelName(spec)}#${n}`;
      this.#byName.set(name, m);
      this.#names.set(m, name);
      this.#aliases.push(...modelAliases(spec, name));
    }
    this.tracer = init.tracer;
    this.requests = new RequestRecorder(init.tracer);
    this.sandboxFactory = init.sandboxFactory;
    this.#controller = init.controller;
    this.signal = init.controller.signal;
    const o = init.opts;
    this.budget = new Budget(
      {
        maxSubCalls: o.maxSubCalls,
        maxTokens: o.maxTokens,
        maxCostUsd: o.maxCostUsd,
        maxWallMs: o.maxWallMs,
      },
      (err) => this.#controller.abort(err),
    );
  }

  /** The model that serves calls at `depth`. */
  modelFor(depth: number): Model {
    return depth === 0 ? this.rootModel : this.subModel;
  }

  /** A configured model by its spec or its name (model-name.ts), or undefined. */
  modelBySpec(specOrName: string): Model | undefined {
    const key = String(specOrName).trim();
    return this.models.get(key) ?? this.#byName.get(key);
  }

  /** The name model code and the prompt know `model` by. */
  modelName(model: Model): string {
    return this.#names.get(model) ?? modelName(model.spec);
  }

  /** The names a sub-call may give, the sub-model's first. */
  modelNames(): string[] {
    const sub = this.modelName(this.subModel);
    return [sub, ...[...this.#byName.keys()].filter((n) => n !== sub)];
  }

  /** Host-composed text on its way to model code: models by name, no host path (core/host-paths.ts). */
  forSandbox(text: string): string {
    return withoutHostPaths(text, this.#aliases);
  }

  /** A new span id for a sub-call. */
  nextSpan(): string {
    return `s${++this.#spans}`;
  }

  /** The concurrency bound of sub-calls running at `depth`. */
  semaphore(depth: number): Semaphore {
    let s = this.#semaphores.get(depth);
    if (s === undefined) {
      s = new Semaphore(this.opts.subCallConcurrency);
      this.#semaphores.set(depth, s);
    }
    return s;
  }

  /**
   * One model call with accounting: races `signal` (the run's by default; a sub-call passes one linked to
   * its block), records usage and cost (which may trip the budget), tracks the deepest depth and emits
   * `model_call`. Provider failures become PROVIDER errors unless they already carry an rlm code.
   */
  async callModel(
    site: CallSite,
    system: string,
    messages: ChatMessage[],
    signal: AbortSignal = this.signal,
  ): Promise<ModelResponse> {
    throwIfAborted(signal);
    this.budget.assertOpen();
    const model = site.model ?? this.modelFor(site.depth);
    const started = performance.now();
    if (site.depth > this.maxDepthReached) this.maxDepthReached = site.depth;
    this.requests.request(site, system, messages);
    let res: ModelResponse;
    try {
      res = await raceAbort(
        model.complete({
          system,
          messages,
          depth: site.depth,
          span: site.span,
          signal,
          ...(this.opts.maxOutputTokens === undefined ? {} : { maxOutputTokens: this.opts.maxOutputTokens }),
        }),
        signal,
      );
    } catch (err) {
      if (signal.aborted) throw abortError(signal);
      if (err instanceof RlmError) throw err;
      throw new RlmError(
        'PROVIDER',
        `${model.spec}: ${(err as Error)?.message ?? String(err)}`,
        {},
        { cause: err },
      );
    }
    const cost = costOf(model.spec, res.usage, this.opts.prices);
    this.tracer.emit(site.span, site.depth, {
      type: 'model_call',
      iteration: site.iteration,
      kind: site.kind,
      model: model.spec,
      usage: res.usage,
      costUsd: cost.usd,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      reply: res.text,
    });
    this.requests.replied(site, res.text);
    this.budget.recordCall(model.spec, res.usage, cost.usd, cost.known);
    return res;
  }
}
