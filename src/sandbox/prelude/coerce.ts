/*
 * Conversions a guard makes once, so that the native it calls gets primitives only (string-guards.ts
 * states the rule), and the protocol lookups it makes once.
 */
import {
  $RangeError,
  $TypeError,
  SymbolMatch,
  SymbolMatchAll,
  SymbolReplace,
  SymbolSearch,
  SymbolSplit,
} from './intrinsics.ts';

/**
 * Longest string a regex, case or normalisation operation may work on: 64 Mi characters, or the longest
 * context document, whichever is longer. V8 runs a global replace/split/match on a string of hundreds of
 * megabytes as one C++ call the CPU limit cannot cut short; such strings come from the model's own
 * repeat/concat, or are the context itself. init raises the cap to the context's length so that
 * `context.match(...)` works on any context the isolate holds; a call past the CPU limit on such a string
 * is stopped by the process watchdog (session.ts): the session resets, the host is unharmed.
 */
export let STRING_CAP = 67108864;

/** Lets strings as long as `length` through the guards (a context document that long is loaded). */
export function allowStringsOf(length: number): void {
  if (length > STRING_CAP) STRING_CAP = length;
}

/** `label` names the method: `String.prototype.split`, `RegExp.prototype[Symbol.split]`. */
export function tooLongString(label: string, len: number): RangeError {
  return new $RangeError(
    label +
      ': a string of ' +
      len +
      ' characters is over the sandbox limit of ' +
      STRING_CAP +
      '; work on slices',
  );
}

/** Whether a value is an object (or a function): what conversion or a property read can run model code on. */
export function isObjectLike(v: unknown): v is object {
  return (typeof v === 'object' && v !== null) || typeof v === 'function';
}

/** ToString, as the natives do it (a Symbol throws): an object's conversion runs here, once. */
export function toStringOnce(v: unknown): string {
  return typeof v === 'string' ? v : `${v}`;
}

/** ToNumber, as the natives do it: an object's conversion runs here, once. */
export function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : +(v as number);
}

export type Protocol = 'match' | 'matchAll' | 'replace' | 'search' | 'split';

export const PROTOCOL_SYMBOLS: Readonly<Record<Protocol, symbol>> = {
  match: SymbolMatch,
  matchAll: SymbolMatchAll,
  replace: SymbolReplace,
  search: SymbolSearch,
  split: SymbolSplit,
};

/** GetMethod(v, Symbol[protocol]), read once: the method, undefined when there is none, or a TypeError. */
export function protocolMethod(
  v: object,
  protocol: Protocol,
  label: string,
): ((...args: unknown[]) => unknown) | undefined {
  const method = (v as Record<symbol, unknown>)[PROTOCOL_SYMBOLS[protocol]];
  if (method === undefined || method === null) return undefined;
  if (typeof method !== 'function')
    throw new $TypeError(label + ': Symbol.' + protocol + ' is not a function');
  return method as (...args: unknown[]) => unknown;
}
