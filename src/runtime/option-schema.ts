/**
 * The schema of the run limits of `RlmOptions` (options.ts) — the part of the options that arrives as JSON or
 * text (MCP `rlm_answer` arguments, CLI flags, `RLM_*` variables) — with their defaults and bounds. The
 * library (`resolveOptions`), the CLI (`rlm answer --max-depth ...`) and the MCP server (`max_depth`,
 * `max_iterations`) all check values against these schemas, so a value one surface accepts no other rejects.
 */
import * as z from 'zod';
import { RlmError } from '../../core/errors.ts';

interface LimitSpec {
  default: number;
  /** Smallest accepted value. */
  min: number;
  /** A fraction is fine (USD); otherwise an integer. */
  fractional?: boolean;
  /** `Infinity` means "no limit". */
  unbounded?: boolean;
}

/** Every numeric limit: default and bounds (the variables that set some of them: `core/env.ts`). */
const LIMITS = {
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

function schemaOf(spec: LimitSpec): z.ZodType<number> {
  const finite = spec.fractional ? z.number().min(spec.min) : z.number().int().min(spec.min);
  return spec.unbounded ? z.union([finite, z.literal(Number.POSITIVE_INFINITY)]) : finite;
}

/** One zod schema per limit (finite values, plus `Infinity` where it means "no limit"). */
export const limitSchemas = Object.fromEntries(LIMIT_NAMES.map((name) => [name, schemaOf(LIMITS[name])])) as {
  [K in LimitName]: z.ZodType<number>;
};

/** The finite part of a limit's schema, with an upper bound: what a server lets its callers ask for. */
export function boundedLimit(name: LimitName, max: number): z.ZodNumber {
  const spec: LimitSpec = LIMITS[name];
  return (spec.fractional ? z.number() : z.number().int()).min(spec.min).max(max);
}

/** `maxOutputTokens`: a positive integer when given (it has no default: the provider's applies). */
export const outputTokensSchema = z.number().int().min(1);

/** The run limits as one object schema, every field optional. */
export const runLimitsSchema = z.object(limitSchemas).partial().strict();

/** Default values of the numeric limits. */
export const DEFAULTS = Object.fromEntries(LIMIT_NAMES.map((n) => [n, LIMITS[n].default])) as {
  readonly [K in LimitName]: (typeof LIMITS)[K]['default'];
};

/**
 * `value` checked against the schema of limit `name`; a string (an env variable or a CLI flag) is read as
 * a number first. `from` names the source in the error (`maxDepth`, `RLM_MAX_DEPTH`, `--max-depth`).
 */
export function checkLimit(
  name: LimitName,
  value: unknown,
  from: string,
  code: 'VALIDATION' | 'BAD_INPUT' = 'VALIDATION',
): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value.trim()) : value;
  const parsed = limitSchemas[name].safeParse(n);
  if (parsed.success) return parsed.data;
  const spec: LimitSpec = LIMITS[name];
  const kind = spec.fractional ? 'a number' : 'an integer';
  throw new RlmError(code, `${from} must be ${kind} >= ${spec.min}, got ${JSON.stringify(value)}`, {
    option: name,
  });
}
