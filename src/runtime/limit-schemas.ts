/**
 * zod schemas of the run limits, for the surfaces that publish or check JSON with zod (the MCP server's
 * `rlm_answer`). Built from the bounds in option-schema.ts, which the library and the CLI check without
 * zod, so every surface gives a value the same verdict (test/runtime/option-schema.test.ts compares them).
 */
import * as z from 'zod';
import { LIMIT_NAMES, LIMITS, type LimitName, type LimitSpec } from './option-schema.ts';

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

/** The run limits as one object schema, every field optional. */
export const runLimitsSchema = z.object(limitSchemas).partial().strict();
