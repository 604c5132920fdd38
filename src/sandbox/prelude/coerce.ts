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

/** Longest string a regex, case or normalisation operation may work on: 64 Mi characters. */
export const STRING_CAP = 67108864;

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
