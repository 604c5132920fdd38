/*
 * Bounds on the Array methods that V8 runs as uninterruptible C++ loops. On a sparse array of huge
 * length (`[].length = 1e9`) `fill`, `sort`, `reverse`, `indexOf`, `copyWithin` or `slice` can run for
 * minutes without ever checking the CPU timeout, and isolated-vm then gives up on the isolate. Lengths
 * above `ARRAY_CAP` are refused; a large `fill` runs as a plain (interruptible) loop.
 *
 * Sorting without a comparator is one uninterruptible C++ call too, and a slow one (numbers are compared
 * as strings: two million take over six seconds). Above `SORT_NATIVE_MAX` elements the same order is
 * produced through a comparator written here, so V8 calls back into JavaScript and the CPU limit can
 * stop it. Typed arrays get the same treatment (their numeric sort, and `join`, are C++ loops over up to
 * billions of elements), and `toLocaleString` (ICU, per element) is refused beyond `LOCALE_CAP` elements.
 *
 * The guards follow the rule of string-guards.ts: the arguments the native converts to numbers or
 * strings are converted here, once, before anything else; only then is the length read, and the native
 * gets the converted values. The length must be one no model code can change in between: an array's,
 * a typed array's, or a data property holding a primitive (found on the receiver or its prototypes).
 * A receiver whose `length` is a getter or an object is refused, as the native would read it again.
 */
import { isObjectLike, toNumber, toStringOnce } from './coerce.ts';
import {
  $Array,
  $RangeError,
  $String,
  $TypeError,
  ArrayFrom,
  ArrayPrototype,
  defineProperty,
  descriptor,
  getOwnPropertyDescriptor,
  getPrototypeOf,
  hasOwn,
  isArray,
  MathCeil,
  MathFloor,
  MathMax,
  MathMin,
  NumberIsNaN,
  ReflectApply,
  SymbolIterator,
  TypedArrayLength,
  TypedArrayLengthGetter,
  TypedArrayPrototype,
} from './intrinsics.ts';
import { type AnyMethod, replaceMethod } from './replace.ts';

const ARRAY_CAP = 16777216;
const FILL_NATIVE_MAX = 65536;
const SORT_NATIVE_MAX = 100000;
const LOCALE_CAP = 1000000;

type Order = (a: unknown, b: unknown) => number;

/**
 * How a guard converts a leading argument (the rest pass through): `number` (an index, a count, a
 * depth) unless undefined, `string` (join's separator) unless undefined, `any` passed through
 * (values, callbacks, items, ICU options).
 */
export type ArrayArgKind = 'number' | 'string' | 'any';

export interface ArrayGuard {
  name: string;
  args: readonly ArrayArgKind[];
}

export const ARRAY_GUARDS: readonly ArrayGuard[] = [
  { name: 'fill', args: ['any', 'number', 'number'] },
  { name: 'copyWithin', args: ['number', 'number', 'number'] },
  { name: 'sort', args: ['any'] },
  { name: 'reverse', args: [] },
  { name: 'indexOf', args: ['any', 'number'] },
  { name: 'lastIndexOf', args: ['any', 'number'] },
  { name: 'includes', args: ['any', 'number'] },
  { name: 'slice', args: ['number', 'number'] },
  { name: 'splice', args: ['number', 'number'] },
  { name: 'join', args: ['string'] },
  { name: 'toString', args: [] },
  { name: 'toLocaleString', args: ['any', 'any'] },
  { name: 'toSorted', args: ['any'] },
  { name: 'toReversed', args: [] },
  { name: 'toSpliced', args: ['number', 'number'] },
  { name: 'with', args: ['number', 'any'] },
  { name: 'flat', args: ['number'] },
  { name: 'flatMap', args: ['any', 'any'] },
  { name: 'concat', args: [] },
  { name: 'forEach', args: ['any', 'any'] },
  { name: 'map', args: ['any', 'any'] },
  { name: 'filter', args: ['any', 'any'] },
  { name: 'some', args: ['any', 'any'] },
  { name: 'every', args: ['any', 'any'] },
  { name: 'find', args: ['any', 'any'] },
  { name: 'findIndex', args: ['any', 'any'] },
  { name: 'findLast', args: ['any', 'any'] },
  { name: 'findLastIndex', args: ['any', 'any'] },
  { name: 'reduce', args: ['any', 'any'] },
  { name: 'reduceRight', args: ['any', 'any'] },
  { name: 'shift', args: [] },
  { name: 'unshift', args: [] },
];

export const TYPED_ARRAY_GUARDS: readonly ArrayGuard[] = [
  { name: 'sort', args: ['any'] },
  { name: 'toSorted', args: ['any'] },
  { name: 'join', args: ['string'] },
  { name: 'toLocaleString', args: ['any', 'any'] },
];

function toIndex(n: number | undefined, len: number, dflt: number): number {
  if (n === undefined) return dflt;
  let i = NumberIsNaN(n) ? 0 : n;
  i = i < 0 ? MathCeil(i) : MathFloor(i);
  return i < 0 ? MathMax(len + i, 0) : MathMin(i, len);
}

function toLength(v: unknown): number {
  const n = toNumber(v);
  return n > 0 ? n : 0;
}

/**
 * The receiver's length, when no model code can change it before the native reads it again: see above.
 * The receiver's own conversion (ToObject) is the native's.
 */
function stableLength(o: unknown, label: string): number {
  if (o === null || o === undefined) throw new $TypeError(label + ' called on null or undefined');
  if (isArray(o)) return (o as unknown[]).length;
  if (typeof o === 'string') return o.length;
  let holder: unknown = isObjectLike(o) ? o : getPrototypeOf(o);
  while (holder !== null && holder !== undefined) {
    const d = getOwnPropertyDescriptor(holder, 'length');
    if (d !== undefined) {
      if (hasOwn(d, 'value')) {
        if (isObjectLike(d.value))
          throw new $TypeError(label + ": the receiver's length is an object; give it a number");
        return toLength(d.value);
      }
      if (d.get === TypedArrayLengthGetter) return typedLength(o);
      throw new $TypeError(
        label + ": the receiver's length is a getter; copy it into an array first (Array.from(x))",
      );
    }
    holder = getPrototypeOf(holder);
  }
  return 0;
}

function typedLength(o: unknown): number {
  try {
    return TypedArrayLength(o);
  } catch {
    return 0;
  }
}

function tooLong(name: string, len: number, cap: number): RangeError {
  return new $RangeError(
    name +
      ': length ' +
      len +
      ' is over the sandbox limit of ' +
      cap +
      ' elements; work on smaller arrays or on the strings directly',
  );
}

/** SortCompare without a comparator (ToString, then code units), as a comparator. */
function defaultOrder(a: unknown, b: unknown): number {
  if (typeof a === 'symbol' || typeof b === 'symbol')
    throw new $TypeError('Cannot convert a Symbol value to a string');
  const x = $String(a);
  const y = $String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The typed arrays' default numeric order: -0 before +0, NaN last. */
function numericOrder(a: unknown, b: unknown): number {
  const x = a as number;
  const y = b as number;
  if (NumberIsNaN(x)) return NumberIsNaN(y) ? 0 : 1;
  if (NumberIsNaN(y)) return -1;
  if (x < y) return -1;
  if (x > y) return 1;
  if (x === 0 && y === 0 && typeof x === 'number') {
    const nx = 1 / x < 0;
    const ny = 1 / y < 0;
    return nx === ny ? 0 : nx ? -1 : 1;
  }
  return 0;
}

/** The arguments as the native will get them: the leading ones converted by kind, once. */
function convertArgs(kinds: readonly ArrayArgKind[], args: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (let k = 0; k < args.length; k++) {
    const v = args[k];
    const kind = k < kinds.length ? kinds[k] : 'any';
    out[k] = v === undefined || kind === 'any' ? v : kind === 'number' ? toNumber(v) : toStringOnce(v);
  }
  return out;
}

function guardMethod(
  proto: object,
  guard: ArrayGuard,
  label: string,
  lengthOf: (o: unknown, label: string) => number,
  order: Order,
): void {
  const name = guard.name;
  const d = getOwnPropertyDescriptor(proto, name);
  if (d === undefined || typeof d.value !== 'function') return;
  const native = d.value as AnyMethod;
  const cap = name === 'toLocaleString' ? LOCALE_CAP : ARRAY_CAP;
  const sorts = name === 'sort' || name === 'toSorted';
  const guarded = {
    [name]: function (this: unknown, ...args: unknown[]) {
      const converted = convertArgs(guard.args, args);
      const len = lengthOf(this, label);
      if (len > cap) throw tooLong(label, len, cap);
      if (name === 'fill') {
        const from = toIndex(converted[1] as number | undefined, len, 0);
        const to = toIndex(converted[2] as number | undefined, len, len);
        if (to - from > FILL_NATIVE_MAX) {
          const target = this as Record<number, unknown>;
          for (let i = from; i < to; i++) target[i] = converted[0];
          return this;
        }
      } else if (sorts && converted[0] === undefined && len > SORT_NATIVE_MAX) {
        return ReflectApply(native, this, [order]);
      }
      return ReflectApply(native, this, converted);
    },
  }[name]!;
  replaceMethod(proto, name, d, guarded);
}

/** Guards the Array and typed array methods above. */
export function guardArrays(): void {
  for (let i = 0; i < ARRAY_GUARDS.length; i++) {
    const guard = ARRAY_GUARDS[i]!;
    guardMethod(ArrayPrototype, guard, 'Array.prototype.' + guard.name, stableLength, defaultOrder);
  }
  for (let i = 0; i < TYPED_ARRAY_GUARDS.length; i++) {
    const guard = TYPED_ARRAY_GUARDS[i]!;
    guardMethod(TypedArrayPrototype, guard, 'TypedArray.prototype.' + guard.name, typedLength, numericOrder);
  }
}

/**
 * `Array.from`: an iterable is handed to the native behind an iterator method read once; an array-like
 * is copied here, its length read once and bounded, element by element (interruptible).
 */
export function guardArrayFrom(): void {
  defineProperty($Array, 'from', {
    value: function from(this: unknown, items: unknown, mapfn?: unknown, thisArg?: unknown) {
      if (mapfn !== undefined && typeof mapfn !== 'function')
        throw new $TypeError('Array.from: the map function must be a function');
      if (items === null || items === undefined)
        throw new $TypeError('Array.from: ' + items + ' is not iterable or array-like');
      const iterate = (items as Record<symbol, unknown>)[SymbolIterator];
      if (iterate !== undefined && iterate !== null) {
        if (typeof iterate !== 'function')
          throw new $TypeError('Array.from: Symbol.iterator is not a function');
        const once = { [SymbolIterator]: () => ReflectApply(iterate, items, []) };
        return ReflectApply(ArrayFrom, this, [once, mapfn, thisArg]);
      }
      const source = items as Record<number, unknown>;
      const len = toLength((source as { length?: unknown }).length);
      if (len > ARRAY_CAP)
        throw new $RangeError(
          'Array.from: length ' + len + ' is over the sandbox limit of ' + ARRAY_CAP + ' elements',
        );
      const count = MathFloor(len);
      // Array.from's array-like path (a constructor receiver builds its own kind), in JavaScript.
      const out = (
        typeof this === 'function' && this !== $Array
          ? new (this as new (n: number) => object)(count)
          : new $Array(count)
      ) as Record<number | string, unknown>;
      for (let k = 0; k < count; k++) {
        const value = source[k];
        const mapped = mapfn === undefined ? value : ReflectApply(mapfn as AnyMethod, thisArg, [value, k]);
        defineProperty(out, k, descriptor(mapped, true, true, true));
      }
      out.length = count;
      return out;
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });
}

/**
 * `String.raw` walks its template's `raw` array-like in one C++ loop that V8 does not interrupt:
 * `String.raw({ raw: { length: 1e8 } })` outlived the CPU limit. Here it is the same walk in JavaScript,
 * the length read once and bounded like an array's.
 */
export function guardStringRaw(): void {
  defineProperty($String, 'raw', {
    value: function raw(template: unknown, ...substitutions: unknown[]) {
      if (template === null || template === undefined)
        throw new $TypeError('String.raw: the template must be an object with a raw array');
      const literals = (template as { raw?: unknown }).raw;
      if (literals === null || literals === undefined)
        throw new $TypeError('String.raw: the template has no raw array');
      const count = MathFloor(toLength((literals as { length?: unknown }).length));
      if (count > ARRAY_CAP)
        throw new $RangeError(
          'String.raw: length ' + count + ' is over the sandbox limit of ' + ARRAY_CAP + ' elements',
        );
      let out = '';
      for (let i = 0; i < count; i++) {
        out += toStringOnce((literals as Record<number, unknown>)[i]);
        if (i + 1 < count && i < substitutions.length) out += toStringOnce(substitutions[i]);
      }
      return out;
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });
}
