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
 */
import {
  $Array,
  $RangeError,
  $String,
  $TypeError,
  ArrayFrom,
  ArrayPrototype,
  defineProperty,
  getOwnPropertyDescriptor,
  MathCeil,
  MathFloor,
  MathMax,
  MathMin,
  NumberIsNaN,
  ReflectApply,
  TypedArrayLength,
  TypedArrayPrototype,
} from './intrinsics.ts';
import { type AnyMethod, replaceMethod } from './replace.ts';

const ARRAY_CAP = 16777216;
const FILL_NATIVE_MAX = 65536;
const SORT_NATIVE_MAX = 100000;
const LOCALE_CAP = 1000000;

type Order = (a: unknown, b: unknown) => number;

function toIndex(v: unknown, len: number, dflt: number): number {
  if (v === undefined) return dflt;
  let n = +(v as number);
  if (NumberIsNaN(n)) n = 0;
  n = n < 0 ? MathCeil(n) : MathFloor(n);
  return n < 0 ? MathMax(len + n, 0) : MathMin(n, len);
}

function arrayLength(o: unknown): number {
  if (o === null || o === undefined) return 0;
  const n = +(o as { length: number }).length;
  return n > 0 ? n : 0;
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

function typedLength(o: unknown): number {
  try {
    return TypedArrayLength(o);
  } catch {
    return 0;
  }
}

function guardMethod(
  proto: object,
  name: string,
  label: string,
  lengthOf: (o: unknown) => number,
  order: Order,
): void {
  const d = getOwnPropertyDescriptor(proto, name);
  if (d === undefined || typeof d.value !== 'function') return;
  const native = d.value as AnyMethod;
  const cap = name === 'toLocaleString' ? LOCALE_CAP : ARRAY_CAP;
  let guarded: AnyMethod;
  if (name === 'fill') {
    guarded = function fill(this: Record<number, unknown>, value: unknown, start: unknown, end: unknown) {
      const len = lengthOf(this);
      if (len > ARRAY_CAP) throw tooLong(label, len, ARRAY_CAP);
      const from = toIndex(start, len, 0);
      const to = toIndex(end, len, len);
      // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
      if (to - from <= FILL_NATIVE_MAX) return ReflectApply(native, this, arguments);
      for (let i = from; i < to; i++) this[i] = value;
      return this;
    };
  } else if (name === 'sort' || name === 'toSorted') {
    guarded = {
      [name]: function (this: unknown, comparefn: unknown) {
        const len = lengthOf(this);
        if (len > ARRAY_CAP) throw tooLong(label, len, ARRAY_CAP);
        if (comparefn === undefined && len > SORT_NATIVE_MAX) return ReflectApply(native, this, [order]);
        // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
        return ReflectApply(native, this, arguments);
      },
    }[name]!;
  } else {
    guarded = {
      [name]: function (this: unknown) {
        const len = lengthOf(this);
        if (len > cap) throw tooLong(label, len, cap);
        // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
        return ReflectApply(native, this, arguments);
      },
    }[name]!;
  }
  replaceMethod(proto, name, d, guarded);
}

const ARRAY_METHODS = [
  'fill',
  'copyWithin',
  'sort',
  'reverse',
  'indexOf',
  'lastIndexOf',
  'includes',
  'slice',
  'splice',
  'join',
  'toString',
  'toLocaleString',
  'toSorted',
  'toReversed',
  'toSpliced',
  'with',
  'flat',
  'flatMap',
  'concat',
  'forEach',
  'map',
  'filter',
  'some',
  'every',
  'find',
  'findIndex',
  'findLast',
  'findLastIndex',
  'reduce',
  'reduceRight',
  'shift',
  'unshift',
];
const TYPED_METHODS = ['sort', 'toSorted', 'join', 'toLocaleString'];

/** Guards the Array and typed array methods above, and `Array.from`. */
export function guardArrays(): void {
  for (let i = 0; i < ARRAY_METHODS.length; i++) {
    const name = ARRAY_METHODS[i]!;
    guardMethod(ArrayPrototype, name, 'Array.prototype.' + name, arrayLength, defaultOrder);
  }
  for (let i = 0; i < TYPED_METHODS.length; i++) {
    const name = TYPED_METHODS[i]!;
    guardMethod(TypedArrayPrototype, name, 'TypedArray.prototype.' + name, typedLength, numericOrder);
  }
}

/** `Array.from` on an array-like refuses lengths over the cap before building anything. */
export function guardArrayFrom(): void {
  defineProperty($Array, 'from', {
    value: function from(this: unknown, items: unknown) {
      if (
        items !== null &&
        items !== undefined &&
        typeof items === 'object' &&
        arrayLength(items) > ARRAY_CAP
      ) {
        throw new $RangeError(
          'Array.from: length ' +
            arrayLength(items) +
            ' is over the sandbox limit of ' +
            ARRAY_CAP +
            ' elements',
        );
      }
      // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
      return ReflectApply(ArrayFrom, this, arguments);
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });
}
