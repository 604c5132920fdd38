/**
 * What to use instead: the working alternative named in a rejection or a "not defined" error, so the
 * model's next attempt works rather than guessing (issue 17, item 9).
 */

/** Globals the sandbox does not have, with what to write instead. */
const MISSING_GLOBALS: Record<string, string> = {
  URL: 'take the string apart with a regex, e.g. /^(\\w+):\\/\\/([^/?#]*)([^?#]*)(\\?[^#]*)?/.exec(s)',
  URLSearchParams:
    "split the query string: Object.fromEntries(q.split('&').map((p) => p.split('=').map(decodeURIComponent)))",
  setTimeout:
    'there are no timers: host calls such as llm_query return directly, so run the code directly (queueMicrotask exists)',
  setInterval: 'there are no timers: use a loop',
  setImmediate: 'there are no timers: run the code directly (queueMicrotask exists)',
  clearTimeout: 'there are no timers',
  clearInterval: 'there are no timers',
  fetch: 'there is no network: use the context, grep, search_chunks, and llm_query for sub-questions',
  XMLHttpRequest:
    'there is no network: use the context, grep, search_chunks, and llm_query for sub-questions',
  require: 'there are no modules: everything available is already a global (context, grep, llm_query, ...)',
  module: 'there are no modules: declare variables at the top level; they persist between blocks',
  exports: 'there are no modules: declare variables at the top level; they persist between blocks',
  process: 'there is no process: the input is in `context`, and print() writes output',
  Buffer: 'use TextEncoder/TextDecoder for bytes and btoa/atob for base64',
  document: 'there is no DOM: work on the strings in `context`',
  window: 'use globalThis',
  global: 'use globalThis',
  crypto: 'there is no crypto API: for a checksum write a small hash (e.g. FNV-1a) in JavaScript',
};

/** Advice for a ReferenceError's message ("X is not defined"), or '' when there is none. */
export function missingGlobalAdvice(message: string): string {
  const m = /^(\w+) is not defined$/.exec(message);
  const advice = m ? MISSING_GLOBALS[m[1]!] : undefined;
  return advice === undefined ? '' : ` (${m![1]} is not available in the sandbox: ${advice})`;
}

/** Advice for the forbidden globals (names.ts), by name. */
export const FORBIDDEN_ADVICE: Record<string, string> = {
  Reflect:
    'use Object.getOwnPropertyNames(o) or Object.keys(o) instead of Reflect.ownKeys, o[key] instead of Reflect.get, fn.apply(thisArg, args) instead of Reflect.apply',
  Proxy: 'wrap the object in a function or a plain object that does the checks',
  SharedArrayBuffer: 'use ArrayBuffer',
  Atomics: 'use plain reads and writes (a block runs on one thread)',
  BigInt: 'use Number (exact up to 2^53)',
  BigInt64Array: 'use Float64Array or Int32Array',
  BigUint64Array: 'use Float64Array or Uint32Array',
  WebAssembly: 'write the code in JavaScript',
  WeakRef: 'keep a plain reference (or a Map)',
  FinalizationRegistry: 'release things explicitly',
};

/** Advice for `X.prototype` by the constructor it is read on. */
export function prototypeAdvice(owner: string | null): string | null {
  if (owner === 'Object') {
    return 'to check a type use Array.isArray(x), typeof x or x instanceof Map; for own properties Object.hasOwn(obj, key), Object.keys(obj) or Object.getOwnPropertyNames(obj)';
  }
  if (owner !== null && /^[A-Z]\w*$/.test(owner)) {
    return `to check for a ${owner} use x instanceof ${owner}${owner === 'Array' ? ' or Array.isArray(x)' : ''}; call methods on the values themselves (arr.slice(), str.split(), map.get(k))`;
  }
  return null;
}

/** The rejection of a top-level `return`. */
export const TOP_LEVEL_RETURN =
  "'return' is not allowed at the top level of a block: end the block with an expression (its value is shown), or call FINAL(answer) to give the final answer";
