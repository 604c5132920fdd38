/*
 * `llm_query`, `rlm_query` and their batched forms: each builds plain requests from what the model
 * passed (prompts, contexts, model names, schemas) and sends them to the host in one call. Failures are
 * never silent: a batch's result lists them in `.errors`, and the block's output gets one line per
 * function that saw one.
 */

import { MAX_BATCH_ITEMS } from '../names.ts';
import { stringArg } from './args.ts';
import { answerText } from './final.ts';
import { hostCall } from './host-call.ts';
import {
  $Error,
  $RangeError,
  $TypeError,
  defineProperty,
  descriptor,
  isArray,
  jsonStringify,
  ObjectCreate,
  StringSlice,
} from './intrinsics.ts';
import { write } from './output.ts';
import { sessionConfig } from './session-state.ts';

/** One sub-call as the host receives it. */
interface SubCallItem {
  prompt: string;
  context?: string;
  model?: string;
  /** The JSON Schema as JSON text, encoded here: no getter of model code runs on the host. */
  schema?: string;
}

function schemaText(s: unknown, what: string): string {
  let json: string | undefined;
  try {
    json = typeof s === 'object' || typeof s === 'boolean' ? jsonStringify(s) : undefined;
  } catch {}
  if (typeof json !== 'string') throw new $TypeError(what + ' must be a JSON Schema object');
  return json;
}

/** Functions whose failures this block has reported: one line each, however many fail. */
let noticed: Record<string, boolean> = ObjectCreate(null) as Record<string, boolean>;

/** A new block reports failures again. */
export function resetSubCallNotices(): void {
  noticed = ObjectCreate(null) as Record<string, boolean>;
}

function notice(fn: string, text: string): void {
  if (noticed[fn] === true) return;
  noticed[fn] = true;
  write('[' + fn + ': ' + text + ']\n');
}

const unavailable = 'is unavailable: no model configured (pass --model)';

function subCallItem(x: unknown, fn: string, what: string): SubCallItem {
  if (typeof x === 'string') return { prompt: x };
  if (x === null || typeof x !== 'object')
    throw new $TypeError(fn + ': ' + what + ' must be a string or {prompt, context?, model?, schema?}');
  const request = x as Record<string, unknown>;
  const prompt = request.prompt;
  if (typeof prompt !== 'string') throw new $TypeError(fn + ': ' + what + '.prompt must be a string');
  const item: SubCallItem = { prompt: prompt };
  const c = request.context;
  if (c !== undefined && c !== null) item.context = typeof c === 'string' ? c : answerText(c);
  const m = request.model;
  if (m !== undefined && m !== null) item.model = stringArg(m, fn + ': ' + what + '.model');
  const s = request.schema;
  if (s !== undefined && s !== null) item.schema = schemaText(s, fn + ': ' + what + '.schema');
  return item;
}

function single(op: string, fn: string, prompt: unknown, context: unknown, opts: unknown): unknown {
  if (!sessionConfig().llm) throw new $Error(fn + ' ' + unavailable);
  let item: SubCallItem;
  if (prompt !== null && typeof prompt === 'object') item = subCallItem(prompt, fn, 'the request');
  else item = { prompt: stringArg(prompt, fn + '(prompt): prompt') };
  if (context !== undefined && context !== null)
    item.context = typeof context === 'string' ? context : answerText(context);
  if (opts !== undefined && opts !== null) {
    if (typeof opts !== 'object')
      throw new $TypeError(fn + '(prompt, context, {model, schema}): options must be an object');
    const m = (opts as Record<string, unknown>).model;
    if (m !== undefined && m !== null) item.model = stringArg(m, fn + ': model');
    const s = (opts as Record<string, unknown>).schema;
    if (s !== undefined && s !== null) item.schema = schemaText(s, fn + ': schema');
  }
  const answer = hostCall(op, item);
  if (typeof answer === 'string' && StringSlice(answer, 0, 6) === 'Error:') {
    const shown = answer.length > 200 ? StringSlice(answer, 0, 200) + '…' : answer;
    notice(fn, 'a call failed; its answer is the string ' + jsonStringify(shown));
  }
  return answer;
}

function batched(op: string, fn: string, items: unknown): unknown {
  if (!sessionConfig().llm) throw new $Error(fn + ' ' + unavailable);
  if (!isArray(items))
    throw new $TypeError(fn + ' takes an array of prompts or {prompt, context?, model?, schema?} objects');
  // The host answers every item, each past the sub-call budget with an error: a bound on that work.
  if (items.length > MAX_BATCH_ITEMS)
    throw new $RangeError(
      fn + ' takes at most ' + MAX_BATCH_ITEMS + ' items at once (got ' + items.length + '); send fewer',
    );
  const list: SubCallItem[] = [];
  for (let i = 0; i < items.length; i++) list[i] = subCallItem(items[i], fn, 'item ' + i);
  const r = hostCall(op, { items: list }) as { values: unknown[]; errors: unknown[] };
  const values = r.values;
  defineProperty(values, 'errors', descriptor(r.errors, true, false, true));
  if (r.errors.length > 0)
    notice(fn, r.errors.length + ' of ' + list.length + ' calls failed; .errors lists {index, error}');
  return values;
}

export function llm_query(prompt: unknown, context?: unknown, opts?: unknown): unknown {
  return single('llm', 'llm_query', prompt, context, opts);
}

export function rlm_query(prompt: unknown, context?: unknown, opts?: unknown): unknown {
  return single('rlm', 'rlm_query', prompt, context, opts);
}

export function llm_query_batched(items: unknown): unknown {
  return batched('llm_batched', 'llm_query_batched', items);
}

export function rlm_query_batched(items: unknown): unknown {
  return batched('rlm_batched', 'rlm_query_batched', items);
}
