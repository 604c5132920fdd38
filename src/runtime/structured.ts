/**
 * Structured sub-call output: model code passes a JSON Schema with a sub-call, the host tells the
 * sub-model to reply with JSON that matches it, parses and checks the reply, and asks once more when it
 * does not fit. The schema is model-written input running on the host, so only a plain subset of JSON
 * Schema is accepted (no `pattern`: a regex from the model must not run on the host's main thread; no
 * `$ref`), and it is bounded in size and depth. An unknown keyword is refused, not ignored: a misspelt
 * `requried` must not silently check nothing.
 */
import type * as z from 'zod';
import { RlmError } from '../../core/errors.ts';
import { SCHEMA_INSTRUCTION, schemaRetry } from '../prompts/leaf.ts';
import { zod } from './lazy-zod.ts';
import type { ChatMessage } from './model.ts';

/** A schema that passed {@link checkSchema}: the JSON to show the sub-model, and its validator. */
export interface CheckedSchema {
  /** The schema as compact JSON, for the request and the cache key. */
  json: string;
  validator: z.ZodType;
}

/** Keywords a schema may use: structure, types, sizes, and notes for the model. */
const KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'prefixItems',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'description',
  'title',
]);
/** Keywords whose value is a map of property names to schemas. */
const SCHEMA_MAPS = new Set(['properties']);
/** Keywords whose value is a schema. */
const SCHEMAS = new Set(['items', 'additionalProperties']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'prefixItems']);

const MAX_SCHEMA_CHARS = 16_384;
const MAX_DEPTH = 16;
/** Problems listed in a message, at most. */
const MAX_PROBLEMS = 5;

function walk(node: unknown, at: string, depth: number): void {
  if (depth > MAX_DEPTH)
    throw new RlmError('BAD_INPUT', `schema: nested deeper than ${MAX_DEPTH} levels at ${at}`);
  if (typeof node === 'boolean') return;
  if (node === null || typeof node !== 'object' || Array.isArray(node))
    throw new RlmError('BAD_INPUT', `schema: ${at} must be a schema object, like {type: 'string'}`);
  for (const [key, value] of Object.entries(node)) {
    if (!KEYWORDS.has(key)) {
      throw new RlmError(
        'BAD_INPUT',
        `schema: unknown keyword ${JSON.stringify(key)} at ${at}; a JSON Schema uses ${[...KEYWORDS].slice(0, 10).join(', ')}... ` +
          "(e.g. {type: 'object', properties: {name: {type: 'string'}}, required: ['name']})",
      );
    }
    if (SCHEMA_MAPS.has(key)) {
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new RlmError('BAD_INPUT', `schema: ${at}.${key} must map names to schemas`);
      for (const [name, sub] of Object.entries(value)) walk(sub, `${at}.${key}.${name}`, depth + 1);
    } else if (SCHEMAS.has(key)) {
      walk(value, `${at}.${key}`, depth + 1);
    } else if (SCHEMA_LISTS.has(key)) {
      if (!Array.isArray(value))
        throw new RlmError('BAD_INPUT', `schema: ${at}.${key} must be a list of schemas`);
      for (const [i, sub] of value.entries()) walk(sub, `${at}.${key}[${i}]`, depth + 1);
    }
  }
}

/**
 * Checks a schema from model code and builds its validator.
 * @throws RlmError BAD_INPUT saying what is wrong with it.
 */
export function checkSchema(schema: unknown): CheckedSchema {
  let json: string;
  try {
    json = JSON.stringify(schema);
  } catch {
    throw new RlmError('BAD_INPUT', 'schema: must be plain JSON');
  }
  if (json === undefined) throw new RlmError('BAD_INPUT', 'schema: must be a JSON Schema object');
  if (json.length > MAX_SCHEMA_CHARS)
    throw new RlmError('BAD_INPUT', `schema: ${json.length} characters; at most ${MAX_SCHEMA_CHARS}`);
  walk(schema, '$', 0);
  let validator: z.ZodType;
  try {
    validator = zod().fromJSONSchema(JSON.parse(json) as boolean | Record<string, unknown>);
  } catch (err) {
    throw new RlmError('BAD_INPUT', `schema: ${(err as Error).message}`);
  }
  return { json, validator };
}

/** Where a problem is, as `$[3].label`. */
function pathText(path: readonly PropertyKey[]): string {
  return `$${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}`;
}

/** The JSON in a reply: the reply itself, or the inside of the one code fence a model wrapped it in. */
function jsonText(reply: string): string {
  const t = reply.trim();
  const fenced = /^```[\w-]*\s*\n([\s\S]*?)\n?```$/.exec(t);
  return fenced ? (fenced[1] ?? '') : t;
}

/** A request that asks for structured output: the prompt, then the schema to answer in. */
export function structuredPrompt(prompt: string, schema: CheckedSchema): string {
  return `${prompt}\n\n${SCHEMA_INSTRUCTION}${schema.json}`;
}

/**
 * Asks for a structured answer: `ask` sends a conversation to the model and returns its reply. A reply
 * that does not parse or match gets one more request saying what was wrong. Returns the value's JSON.
 * @throws RlmError BAD_OUTPUT when the second reply does not match either.
 */
export async function askStructured(
  ask: (messages: ChatMessage[], attempt: number) => Promise<string>,
  request: string,
  schema: CheckedSchema,
): Promise<string> {
  const messages: ChatMessage[] = [{ role: 'user', content: request }];
  const first = await ask(messages.slice(), 0);
  const checked = parseStructured(first, schema);
  if (checked.ok) return JSON.stringify(checked.value);
  messages.push(
    { role: 'assistant', content: first },
    { role: 'user', content: schemaRetry(checked.problems) },
  );
  const again = parseStructured(await ask(messages.slice(), 1), schema);
  if (again.ok) return JSON.stringify(again.value);
  throw new RlmError(
    'BAD_OUTPUT',
    `the sub-model's reply did not match the schema, twice: ${again.problems}`,
  );
}

/** A reply checked against a schema: its value, or what is wrong with it (one line). */
export function parseStructured(
  reply: string,
  schema: CheckedSchema,
): { ok: true; value: unknown } | { ok: false; problems: string } {
  let value: unknown;
  try {
    value = JSON.parse(jsonText(reply));
  } catch (err) {
    return { ok: false, problems: `it is not JSON (${(err as Error).message})` };
  }
  const checked = schema.validator.safeParse(value);
  if (checked.success) return { ok: true, value };
  const issues = checked.error.issues;
  const listed = issues.slice(0, MAX_PROBLEMS).map((i) => `${pathText(i.path)}: ${i.message}`);
  if (issues.length > MAX_PROBLEMS) listed.push(`and ${issues.length - MAX_PROBLEMS} more`);
  return { ok: false, problems: listed.join('; ') };
}
