/*
 * The model's helpers over the context and the chunk store: `peek`, `grep`, `search_chunks`,
 * `get_chunk`, `neighbors` and `list_documents`. A context loaded in the isolate without a store is
 * served here (context-text.ts); everything else is a host call.
 */
import { intArg, stringArg } from './args.ts';
import { documentIdsHint, grepLocal, grepPlan, PEEK_DEFAULT, peekLocal } from './context-text.ts';
import { hostCall } from './host-call.ts';
import { $Error, $TypeError, defineProperty, descriptor, isArray, objectKeys } from './intrinsics.ts';
import { write } from './output.ts';
import { sessionConfig } from './session-state.ts';

type OptionValue = string | number | boolean;

/** The options as plain data for the host: strings, numbers, booleans and lists of them; the rest dropped. */
function plainOptions(opts: unknown, fn: string): Record<string, OptionValue | OptionValue[]> {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object') throw new $TypeError(fn + ': options must be an object');
  const out: Record<string, OptionValue | OptionValue[]> = {};
  const source = opts as Record<string, unknown>;
  const keys = objectKeys(source);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = source[key];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      out[key] = v;
    } else if (isArray(v)) {
      const list: OptionValue[] = [];
      for (let k = 0; k < v.length; k++) {
        const x: unknown = v[k];
        if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') list[list.length] = x;
      }
      out[key] = list;
    }
  }
  return out;
}

function noStore(fn: string): Error {
  return new $Error(
    fn + ' needs a chunk store, and none is loaded; use grep(pattern) and peek(start, end) on the context',
  );
}

export function list_documents(): unknown {
  return hostCall('list_documents', {});
}

export function peek(a: unknown, b?: unknown, c?: unknown): unknown {
  const config = sessionConfig();
  if (typeof a === 'number') {
    if (config.context === 'loaded') return peekLocal(a, b, c);
    if (config.context === 'none')
      throw new $Error(
        'peek(start, end): no context is loaded; use peek(chunkId) with ids from search_chunks or grep',
      );
    return hostCall('peek', {
      start: intArg(a, 0, 'start', 'peek'),
      end: intArg(b, a + PEEK_DEFAULT, 'end', 'peek'),
    });
  }
  const id = stringArg(a, 'peek(id): id');
  if (config.context === 'loaded') {
    // A loaded document is read here; with a store, any other id is a chunk or a store document.
    const text = peekLocal(id, b, c);
    if (text !== undefined) return text;
    if (!config.store) throw new $Error('peek: no document ' + id + '; ' + documentIdsHint());
  }
  const payload: { id: string; start?: number; end?: number } = { id: id };
  if (b !== undefined && b !== null) payload.start = intArg(b, 0, 'start', 'peek');
  if (c !== undefined && c !== null) payload.end = intArg(c, 0, 'end', 'peek');
  return hostCall('peek', payload);
}

/** One "more matches" notice per block at most: a loop of greps must not flood the output. */
let grepNoticed = false;

/** A new block may give the notice again. */
export function resetGrepNotice(): void {
  grepNoticed = false;
}

function grepResult<T extends object>(matches: T, truncated: unknown, opts: unknown): T {
  // A null-prototype descriptor: a literal would read get/set from a prototype model code may have poisoned.
  defineProperty(matches, 'truncated', descriptor(truncated === true, true, false, true));
  let limited = false;
  try {
    limited = opts !== null && typeof opts === 'object' && (opts as { limit?: unknown }).limit !== undefined;
  } catch {}
  if (truncated && !limited && !grepNoticed) {
    grepNoticed = true;
    write(
      '[grep: showing the first ' +
        (matches as { length?: unknown }).length +
        ' matches; the result has truncated = true. Pass {limit: N} for more]\n',
    );
  }
  return matches;
}

export function grep(pattern: unknown, opts?: unknown): unknown {
  const config = sessionConfig();
  // The loaded context is searched here: without a store, or when it is the store's documents (files).
  if (config.context === 'loaded' && (!config.store || config.documents !== null)) {
    const r = grepLocal(pattern, opts);
    return isArray(r) ? grepResult(r[0], r[1], opts) : r;
  }
  if (!config.store && config.context === 'none') throw noStore('grep');
  const plan = grepPlan(pattern, opts);
  const payload = { pattern: plan.source, opts: plainOptions(opts, 'grep') };
  payload.opts.literal = plan.literal;
  payload.opts.ignoreCase = plan.ignoreCase;
  const r = hostCall('grep', payload) as { matches: object; truncated: unknown; counts?: unknown };
  if (r.counts !== undefined) return r.counts;
  return grepResult(r.matches, r.truncated, opts);
}

export function search_chunks(query: unknown, opts?: unknown): unknown {
  if (!sessionConfig().store) throw noStore('search_chunks');
  return hostCall('search', {
    query: stringArg(query, 'search_chunks(query): query'),
    opts: plainOptions(opts, 'search_chunks'),
  });
}

export function get_chunk(id: unknown): unknown {
  if (!sessionConfig().store) throw noStore('get_chunk');
  return hostCall('get_chunk', { id: stringArg(id, 'get_chunk(id): id') });
}

export function neighbors(id: unknown, type?: unknown): unknown {
  if (!sessionConfig().store) throw noStore('neighbors');
  const payload: { id: string; type?: string } = { id: stringArg(id, 'neighbors(id): id') };
  if (type !== undefined && type !== null) payload.type = stringArg(type, 'neighbors(id, type): type');
  return hostCall('neighbors', payload);
}
