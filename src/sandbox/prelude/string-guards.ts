/*
 * Strings: V8's global replace/split/match on a string of hundreds of megabytes run as one C++ call the
 * CPU limit cannot cut short. Such strings can only come from the model's own repeat/concat, so regex
 * and case operations on strings over 64 Mi characters (larger than any loaded context) are refused,
 * and so are `repeat`/`padStart`/`padEnd` results beyond that size.
 *
 * The rule every guard here follows (coerce.ts says how): a guard checks the values the native will
 * use, because it hands the native nothing else. It converts the receiver and each argument to a
 * primitive exactly once (ToString or ToNumber, as the native would), checks those primitives, and calls
 * the native with them; the native then has no object left to convert again, so no `valueOf`, `toString`
 * or getter can answer the check one thing and the native another. A protocol method
 * (`Symbol.match`, `Symbol.matchAll`, `Symbol.replace`, `Symbol.search`, `Symbol.split`) is read once,
 * and when the argument has one the guard calls it itself, with the checked receiver string, as the
 * native would have. Arguments no check depends on and that the native reads as objects
 * (`localeCompare`'s locales and options) pass through unchanged.
 *
 * `STRING_GUARDS` is the one list of guarded methods and of how each converts its arguments; the tests
 * generate their payloads from it (test/sandbox/prelude/coercion.test.ts).
 */

import {
  isObjectLike,
  PROTOCOL_SYMBOLS,
  type Protocol,
  protocolMethod,
  STRING_CAP,
  toNumber,
  tooLongString,
  toStringOnce,
} from './coerce.ts';
import {
  $Intl,
  $TypeError,
  $WeakMap,
  brand,
  defineProperty,
  descriptor,
  getOwnPropertyDescriptor,
  ReflectApply,
  RegExpSource,
  StringIndexOf,
  StringPrototype,
  WeakMapGet,
  WeakMapSet,
} from './intrinsics.ts';
import { checkedPattern } from './regex-guards.ts';
import { type AnyMethod, replaceMethod } from './replace.ts';

/**
 * How a guard converts one argument before the native sees it:
 * - `pattern`: a regex or a search string. An object with the method's protocol is dispatched to
 *   (read once); anything else becomes a string (bounded as a regex source when the method compiles it).
 * - `replacement`: a function stays a function (called per match, under the CPU limit); anything
 *   else becomes a string.
 * - `string`: a string, capped like the receiver (`localeCompare`'s other string).
 * - `optional-string`: a string unless undefined (`normalize`'s form, the padding).
 * - `number`: a number (`repeat`'s count, the padded length, `split`'s limit) unless undefined.
 * - `object`: passed through; the native reads it as an object (ICU options) and no check uses it.
 */
export type ArgKind = 'pattern' | 'replacement' | 'string' | 'optional-string' | 'number' | 'object';

export interface StringGuard {
  name: string;
  args: readonly ArgKind[];
  /** The protocol the `pattern` argument may implement. */
  protocol?: Protocol;
  /** The native compiles a string pattern into a regex: its source is bounded. */
  compiles?: boolean;
  /** A regex pattern must have the g flag (replaceAll, matchAll), as the native checks before dispatch. */
  globalOnly?: boolean;
  /** Size of the string the native would build, checked before it is built. */
  builds?: 'repeat' | 'pad';
}

export const STRING_GUARDS: readonly StringGuard[] = [
  { name: 'replace', args: ['pattern', 'replacement'], protocol: 'replace' },
  { name: 'replaceAll', args: ['pattern', 'replacement'], protocol: 'replace', globalOnly: true },
  { name: 'split', args: ['pattern', 'number'], protocol: 'split' },
  { name: 'match', args: ['pattern'], protocol: 'match', compiles: true },
  { name: 'matchAll', args: ['pattern'], protocol: 'matchAll', compiles: true, globalOnly: true },
  { name: 'search', args: ['pattern'], protocol: 'search', compiles: true },
  { name: 'normalize', args: ['optional-string'] },
  { name: 'toLowerCase', args: [] },
  { name: 'toUpperCase', args: [] },
  { name: 'toLocaleLowerCase', args: ['object'] },
  { name: 'toLocaleUpperCase', args: ['object'] },
  { name: 'localeCompare', args: ['string', 'object', 'object'] },
  { name: 'repeat', args: ['number'], builds: 'repeat' },
  { name: 'padStart', args: ['number', 'optional-string'], builds: 'pad' },
  { name: 'padEnd', args: ['number', 'optional-string'], builds: 'pad' },
];

/** The IsRegExp test the natives make before a global-only dispatch: Symbol.match read once. */
function requireGlobal(name: string, pattern: object): void {
  const matcher = (pattern as Record<symbol, unknown>)[PROTOCOL_SYMBOLS.match];
  const isRegExp = matcher !== undefined ? !!matcher : brand(RegExpSource, pattern);
  if (!isRegExp) return;
  const flags = (pattern as { flags?: unknown }).flags;
  if (flags === undefined || flags === null)
    throw new $TypeError('String.prototype.' + name + ': the regex has no flags');
  if (StringIndexOf(toStringOnce(flags), 'g') === -1)
    throw new $TypeError('String.prototype.' + name + ' called with a non-global RegExp argument');
}

/** Converts one argument by its kind, once. */
function convert(guard: StringGuard, kind: ArgKind, v: unknown): unknown {
  switch (kind) {
    case 'pattern':
      if (v === undefined || v === null) return v;
      return guard.compiles ? checkedPattern(toStringOnce(v)) : isObjectLike(v) ? toStringOnce(v) : v;
    case 'replacement':
      return typeof v === 'function' || !isObjectLike(v) ? v : toStringOnce(v);
    case 'string': {
      const s = toStringOnce(v);
      if (s.length > STRING_CAP) throw tooLongString('String.prototype.' + guard.name, s.length);
      return s;
    }
    case 'optional-string':
      return v === undefined ? v : isObjectLike(v) ? toStringOnce(v) : v;
    case 'number':
      return v === undefined ? v : toNumber(v);
    case 'object':
      return v;
  }
}

function guardString(guard: StringGuard): void {
  const name = guard.name;
  const d = getOwnPropertyDescriptor(StringPrototype, name)!;
  const native = d.value as AnyMethod;
  const protocol = guard.protocol;
  const guarded = {
    [name]: function (this: unknown, ...args: unknown[]) {
      if (this === null || this === undefined)
        throw new $TypeError('String.prototype.' + name + ' called on null or undefined');
      const s = toStringOnce(this);
      if (s.length > STRING_CAP) throw tooLongString('String.prototype.' + name, s.length);
      const kinds = guard.args;
      const converted: unknown[] = [];
      let start = 0;
      if (protocol !== undefined) {
        const pattern = args[0];
        if (isObjectLike(pattern)) {
          if (guard.globalOnly) requireGlobal(name, pattern);
          const method = protocolMethod(pattern, protocol, 'String.prototype.' + name);
          if (method !== undefined) {
            converted[0] = s;
            for (let k = 1; k < kinds.length && k < args.length; k++)
              converted[k] = convert(guard, kinds[k]!, args[k]);
            return ReflectApply(method, pattern, converted);
          }
        }
        converted[0] = convert(guard, 'pattern', pattern);
        start = 1;
      }
      for (let k = start; k < kinds.length && k < args.length; k++)
        converted[k] = convert(guard, kinds[k]!, args[k]);
      if (guard.builds !== undefined) {
        const n = converted[0] === undefined ? 0 : (converted[0] as number);
        // Checked before building: the result itself is what must not exist.
        const size = guard.builds === 'repeat' ? s.length * n : n;
        if (size > STRING_CAP) throw tooLongString('String.prototype.' + name, size);
      }
      return ReflectApply(native, s, converted);
    },
  }[name]!;
  replaceMethod(StringPrototype, name, d, guarded);
}

/**
 * `Intl.Collator.prototype.compare` runs the same ICU collation as `localeCompare`: the function its
 * getter returns (one per collator, as the native's) converts both strings once and caps them.
 */
function guardCollator(): void {
  if (typeof $Intl !== 'object' || $Intl === null) return;
  const proto = ($Intl as { Collator?: { prototype?: object } }).Collator?.prototype;
  if (proto === undefined) return;
  const d = getOwnPropertyDescriptor(proto, 'compare');
  if (d === undefined || typeof d.get !== 'function') return;
  const nativeGet = d.get;
  const bound = new $WeakMap<object, (x: unknown, y: unknown) => number>();
  const getter = function (this: object) {
    const cached = WeakMapGet(bound, this);
    if (cached !== undefined) return cached;
    const native = ReflectApply(nativeGet, this, []) as (x: string, y: string) => number;
    const compare = (x: unknown, y: unknown): number => {
      const a = toStringOnce(x);
      const b = toStringOnce(y);
      if (a.length > STRING_CAP) throw tooLongString('Intl.Collator.prototype.compare', a.length);
      if (b.length > STRING_CAP) throw tooLongString('Intl.Collator.prototype.compare', b.length);
      return native(a, b);
    };
    WeakMapSet(bound, this, compare);
    return compare;
  };
  defineProperty(getter, 'name', descriptor('get compare', false, false, true));
  defineProperty(proto, 'compare', {
    get: getter,
    enumerable: d.enumerable === true,
    configurable: d.configurable === true,
  });
}

/** Guards the string methods of `STRING_GUARDS`, and the collator's compare. */
export function guardStrings(): void {
  for (let i = 0; i < STRING_GUARDS.length; i++) guardString(STRING_GUARDS[i]!);
  guardCollator();
}
