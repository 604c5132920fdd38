/**
 * The run limits of `RlmOptions` (options.ts) — the part of the options that arrives as JSON or text (MCP
 * `rlm_answer` arguments, CLI flags, `RLM_*` variables) — with their defaults and bounds. The library
 * (`resolveOptions`) and the CLI (`rlm answer --max-depth ...`) check values with {@link checkLimit}; the
 * MCP server's schemas (`max_depth`, `max_iterations`: limit-schemas.ts) are built from the same bounds,
 * so a value one surface accepts no other rejects. No zod here: every run loads this module, and zod
 * costs more to load (~150 ms of CPU) than the rest of a run's code before its first request.
 */
import { parseDecimal } from '../../core/decimal.ts';
import { RlmError } from '../../core/errors.ts';

export interface LimitSpec {
  default: number;
  /** Smallest accepted value. */
  min: number;
  /** A fraction is fine (USD); otherwise an integer. */
  fractional?: boolean;
  /** `Infinity` means "no limit". */
  unbounded?: boolean;
}

/** Every numeric limit: default and bounds (the variables that set some of them: `core/env.ts`). */
export const LIMITS = {
  maxDepth: { default: 2, min: 0 },
  maxIterations: { default: 20, min: 1 },
  maxSubIterations: { default: 8, min: 1 },
  maxSubCalls: { default: 500, min: 0, unbounded: true },
  maxTokens: { default: Number.POSITIVE_INFINITY, min: 1, unbounded: true },
  maxCostUsd: {
    default: Number.POSITIVE_INFINITY,
    min: 0,
    fractional: true,
    unbounded: true,
  },
  maxWallMs: { default: 30 * 60_000, min: 1, unbounded: true },
  maxConsecutiveErrors: { default: 5, min: 1 },
  maxOutputCharsPerBlock: { default: 10_000, min: 100 },
  maxSubCallChars: { default: 200_000, min: 100 },
  inlineContextChars: { default: 16_000, min: 0 },
  subCallConcurrency: { default: 8, min: 1 },
  maxAnswerChars: { default: 200_000, min: 100 },
} as const satisfies Record<string, LimitSpec>;

/**
 * The name of a numeric limit of `RlmOptions` (options.ts reads `opts[name]` for each, so a limit that is
 * not an option fails to compile there).
 */
export type LimitName = keyof typeof LIMITS;

/** The names of the numeric limits, in declaration order. */
export const LIMIT_NAMES = Object.keys(LIMITS) as LimitName[];

/** Default values of the numeric limits. */
export const DEFAULTS = Object.fromEntries(LIMIT_NAMES.map((n) => [n, LIMITS[n].default])) as {
  readonly [K in LimitName]: (typeof LIMITS)[K]['default'];
};

/**
 * `value` checked against the bounds of limit `name`; a string (an env variable or a CLI flag) is read as
 * a number first. `from` names the source in the error (`maxDepth`, `RLM_MAX_DEPTH`, `--max-depth`).
 */
export function checkLimit(
  name: LimitName,
  value: unknown,
  from: string,
  code: 'VALIDATION' | 'BAD_INPUT' = 'VALIDATION',
): number {
  const spec: LimitSpec = LIMITS[name];
  const n = typeof value === 'string' ? limitText(spec, value.trim()) : value;
  if (withinLimit(spec, n)) return n;
  const kind = spec.fractional ? 'a number' : 'an integer';
  throw new RlmError(code, `${from} must be ${kind} >= ${spec.min}, got ${JSON.stringify(value)}`, {
    option: name,
  });
}

/** A limit typed as text: a plain decimal, or `Infinity` where it means "no limit". */
function limitText(spec: LimitSpec, text: string): number {
  return text === 'Infinity' ? Number.POSITIVE_INFINITY : parseDecimal(text, spec.fractional === true);
}

/** Whether `n` is a value of a limit with `spec`: what limit-schemas.ts's schemas accept, too. */
function withinLimit(spec: LimitSpec, n: unknown): n is number {
  if (typeof n !== 'number' || Number.isNaN(n)) return false;
  if (n === Number.POSITIVE_INFINITY) return spec.unbounded === true;
  return n >= spec.min && (spec.fractional === true ? Number.isFinite(n) : Number.isSafeInteger(n));
}

/** Whether `n` is a `maxOutputTokens` (a positive integer; it has no default: the provider's applies). */
export function isOutputTokens(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1;
}
