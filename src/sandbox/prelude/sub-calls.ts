/*
 * `llm_query`, `rlm_query` and their batched forms: each builds plain requests from what the model
 * passed (prompts, contexts, model names) and sends them to the host in one call.
 */
import { stringArg } from './args.ts';
import { answerText } from './final.ts';
import { hostCall } from './host-call.ts';
import { $Error, $TypeError, isArray } from './intrinsics.ts';
import { sessionConfig } from './session-state.ts';

/** One sub-call as the host receives it. */
interface SubCallItem {
  prompt: string;
  context?: string;
  model?: string;
}

const unavailable = 'is unavailable: no model configured (pass --model)';

function subCallItem(x: unknown, fn: string, what: string): SubCallItem {
  if (typeof x === 'string') return { prompt: x };
  if (x === null || typeof x !== 'object')
    throw new $TypeError(fn + ': ' + what + ' must be a string or {prompt, context?, model?}');
  const request = x as Record<string, unknown>;
  const prompt = request.prompt;
  if (typeof prompt !== 'string') throw new $TypeError(fn + ': ' + what + '.prompt must be a string');
  const item: SubCallItem = { prompt: prompt };
  const c = request.context;
  if (c !== undefined && c !== null) item.context = typeof c === 'string' ? c : answerText(c);
  const m = request.model;
  if (m !== undefined && m !== null) item.model = stringArg(m, fn + ': ' + what + '.model');
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
      throw new $TypeError(fn + '(prompt, context, {model}): options must be an object');
    const m = (opts as Record<string, unknown>).model;
    if (m !== undefined && m !== null) item.model = stringArg(m, fn + ': model');
  }
  return hostCall(op, item);
}

function batched(op: string, fn: string, items: unknown): unknown {
  if (!sessionConfig().llm) throw new $Error(fn + ' ' + unavailable);
  if (!isArray(items))
    throw new $TypeError(fn + ' takes an array of prompts or {prompt, context?, model?} objects');
  const list: SubCallItem[] = [];
  for (let i = 0; i < items.length; i++) list[i] = subCallItem(items[i], fn, 'item ' + i);
  return hostCall(op, { items: list });
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
