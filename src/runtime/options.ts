/**
 * The one options type of the library, its defaults, and `resolveOptions`: the only place the environment's
 * values (`core/env.ts` reads them) fill in options. Explicit options always win over the environment.
 */
import { parseDecimal } from '../../core/decimal.ts';
import { type Env, LIMIT_VARIABLES, processEnv, readEnv } from '../../core/env.ts';
import { RlmError } from '../../core/errors.ts';
import type { SandboxHost } from '../sandbox/host.ts';
import type { Sandbox, SandboxLimits } from '../sandbox/types.ts';
import type { Model } from './model.ts';
import { checkLimit, DEFAULTS, isOutputTokens, LIMIT_NAMES, type LimitName } from './option-schema.ts';
import type { PriceTable } from './pricing.ts';
import { TRACE_LEVELS, type TraceEvent, type TraceLevel } from './trace.ts';

/** Creates a sandbox session; the default loads src/sandbox/session.ts on first use. */
export type SandboxFactory = (host: SandboxHost, limits?: SandboxLimits) => Promise<Sandbox>;

/** Turns a model spec into a {@link Model}; the default is `createModel` of the providers module. */
export type ModelFactory = (spec: string, env: Env) => Promise<Model>;

/** Options of {@link RLM}. Every field is optional; defaults are in the TSDoc and in {@link DEFAULTS}. */
export interface RlmOptions {
  /** Root model: a spec (`anthropic:claude-sonnet-4-6`, `openai:gpt-5-mini`, `scripted:FILE`) or a Model. Env: RLM_MODEL. Required one way or the other. */
  model?: string | Model;
  /** Model for every sub-call (depth ≥ 1). Default: `model`. Env: RLM_SUB_MODEL. */
  subModel?: string | Model;
  /**
   * Further models model code may pick per sub-call (`llm_query(p, c, {model: 'openai:small'})`); `model`
   * and `subModel` are always available. Default none. Env: RLM_MODELS (comma-separated specs).
   */
  models?: (string | Model)[];
  /** Deepest call depth: depth < maxDepth runs an RLM with a REPL, depth = maxDepth a plain completion. Default 2. Env: RLM_MAX_DEPTH. */
  maxDepth?: number;
  /** Root turns before the last "answer now" request. Default 20. Env: RLM_MAX_ITERATIONS. */
  maxIterations?: number;
  /** Turns of each sub-RLM. Default 8. Env: RLM_MAX_SUB_ITERATIONS. */
  maxSubIterations?: number;
  /** Sub-calls over the whole run. Default 500. Env: RLM_MAX_SUB_CALLS. */
  maxSubCalls?: number;
  /** Input + output tokens over the whole run. Default unlimited. Env: RLM_MAX_TOKENS. */
  maxTokens?: number;
  /** USD over the whole run (from the price table). Default unlimited. Env: RLM_MAX_COST_USD. */
  maxCostUsd?: number;
  /** Wall time of the whole run, ms. Default 30 minutes. Env: RLM_MAX_WALL_MS. */
  maxWallMs?: number;
  /** Code blocks failing in a row before a run gives up with status `error`. Default 5. */
  maxConsecutiveErrors?: number;
  /** Characters of each block's output fed back to the model (head and tail kept). Default 10000. */
  maxOutputCharsPerBlock?: number;
  /** Characters one sub-call may receive (prompt, plus context for a plain completion). Default 200000. */
  maxSubCallChars?: number;
  /** A sub-RLM whose context is at most this long also sees it inline in its first message, so it can answer in one turn. Default 16000. */
  inlineContextChars?: number;
  /** Sub-calls in flight at once, per depth. Default 8. Env: RLM_SUB_CALL_CONCURRENCY. */
  subCallConcurrency?: number;
  /** Answer identical sub-calls (model, prompt, context) from a per-run cache. Default true. */
  cache?: boolean;
  /** Output token cap per model reply, sent to every provider. Default: the provider's. Env: RLM_MAX_OUTPUT_TOKENS. */
  maxOutputTokens?: number;
  /**
   * Longest answer FINAL / FINAL_VAR may give, in characters. A longer one is refused and the model is told
   * to shorten it (the system prompt states the bound); after the last turn it is cut. Default 200000.
   * Env: RLM_MAX_ANSWER_CHARS.
   */
  maxAnswerChars?: number;
  /** Sandbox limits for every session (CPU, wall, memory per block...). Default: the sandbox's. */
  sandbox?: SandboxLimits;
  /** Price rows (USD per million tokens) replacing or extending the built-in table. */
  prices?: PriceTable;
  /** JSONL trace file to append to, in a folder that exists (BAD_INPUT otherwise). Env: RLM_TRACE. */
  trace?: string;
  /**
   * What the trace (file, `onEvent`, trajectory) records: `full` adds every model request and whole
   * sub-call prompts and answers; `summary` keeps replies, blocks, outputs and previews. Default `full`.
   * Env: RLM_TRACE_LEVEL.
   */
  traceLevel?: TraceLevel;
  /** Called with every trace event, synchronously. */
  onEvent?: (event: TraceEvent) => void;
  /** Put the run's recursion tree on the result (`RlmResult.trajectory`). Default false. */
  trajectory?: boolean;
  /** Cancels every run of this instance. */
  signal?: AbortSignal;
  /** The environment that env fallbacks and provider keys come from (see `core/env.ts`). Default `process.env`. */
  env?: Env;
  /** Seam for tests and embedders: how sandboxes are created. */
  sandboxFactory?: SandboxFactory;
  /** Seam: how model specs become models. */
  modelFactory?: ModelFactory;
}

/** Options with every default applied. */
export interface ResolvedOptions {
  model: string | Model;
  subModel: string | Model;
  models: (string | Model)[];
  maxDepth: number;
  maxIterations: number;
  maxSubIterations: number;
  maxSubCalls: number;
  maxTokens: number;
  maxCostUsd: number;
  maxWallMs: number;
  maxConsecutiveErrors: number;
  maxOutputCharsPerBlock: number;
  maxSubCallChars: number;
  inlineContextChars: number;
  subCallConcurrency: number;
  maxAnswerChars: number;
  cache: boolean;
  maxOutputTokens: number | undefined;
  sandbox: SandboxLimits;
  prices: PriceTable | undefined;
  trace: string | undefined;
  traceLevel: TraceLevel;
  onEvent: ((event: TraceEvent) => void) | undefined;
  trajectory: boolean;
  signal: AbortSignal | undefined;
  env: Env;
  sandboxFactory: SandboxFactory | undefined;
  modelFactory: ModelFactory | undefined;
}

export { DEFAULTS } from './option-schema.ts';

/**
 * Applies env fallbacks and defaults, and validates. Throws VALIDATION for a bad value and BAD_INPUT when
 * no model is given either way.
 */
export function resolveOptions(opts: RlmOptions = {}, env?: Env): ResolvedOptions {
  const source = env ?? opts.env ?? processEnv();
  const fromEnv = readEnv(source);
  const num = {} as Record<LimitName, number>;
  for (const key of LIMIT_NAMES) {
    const given = opts[key];
    const text = (fromEnv.limits as Partial<Record<LimitName, string>>)[key];
    if (given !== undefined) num[key] = checkLimit(key, given, key);
    else if (text !== undefined) num[key] = checkLimit(key, text, variableOf(key));
    else num[key] = DEFAULTS[key];
  }
  const model = opts.model ?? fromEnv.model;
  if (model === undefined) {
    throw new RlmError(
      'BAD_INPUT',
      'no model given: pass `model` (e.g. anthropic:claude-sonnet-4-6) or set RLM_MODEL',
    );
  }
  const subModel = opts.subModel ?? fromEnv.subModel ?? model;
  const envOutput = fromEnv.maxOutputTokens;
  const maxOutputTokens =
    opts.maxOutputTokens ?? (envOutput === undefined ? undefined : parseDecimal(envOutput.trim()));
  if (maxOutputTokens !== undefined && !isOutputTokens(maxOutputTokens)) {
    const from = opts.maxOutputTokens !== undefined ? 'maxOutputTokens' : 'RLM_MAX_OUTPUT_TOKENS';
    throw new RlmError(
      'VALIDATION',
      `${from} must be a positive integer, got ${JSON.stringify(opts.maxOutputTokens ?? envOutput)}`,
      { option: 'maxOutputTokens' },
    );
  }
  return {
    ...num,
    model,
    subModel,
    models: opts.models ?? [...fromEnv.models],
    cache: opts.cache ?? true,
    maxOutputTokens,
    sandbox: { ...opts.sandbox },
    prices: opts.prices,
    trace: opts.trace ?? fromEnv.trace,
    traceLevel: traceLevel(opts.traceLevel, fromEnv.traceLevel),
    onEvent: opts.onEvent,
    trajectory: opts.trajectory === true,
    signal: opts.signal,
    env: source,
    sandboxFactory: opts.sandboxFactory,
    modelFactory: opts.modelFactory,
  };
}

function traceLevel(given: unknown, fromEnv: string | undefined): TraceLevel {
  const v = given ?? fromEnv ?? 'full';
  if (!TRACE_LEVELS.includes(v as TraceLevel)) {
    const from = given === undefined ? 'RLM_TRACE_LEVEL' : 'traceLevel';
    throw new RlmError(
      'VALIDATION',
      `${from} must be one of ${TRACE_LEVELS.join(', ')}, got ${JSON.stringify(v)}`,
      {
        option: 'traceLevel',
      },
    );
  }
  return v as TraceLevel;
}

/** The variable that sets limit `key`, named in errors about its value. */
function variableOf(key: LimitName): string {
  return (LIMIT_VARIABLES as Partial<Record<LimitName, string>>)[key] ?? key;
}
