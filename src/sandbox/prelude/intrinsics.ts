/*
 * Pristine copies of the built-ins the prelude relies on. This module is the first the bundle evaluates
 * (every other module imports it), and it only reads: its constants are taken when the isolate's script
 * runs, before the prelude hardens anything and long before any model code. Model code may later
 * replace `JSON.stringify`, `Array.prototype.*`, `String.prototype.*` or `Promise.prototype.then`; the
 * prelude keeps working because it only calls these captured functions, through `ReflectApply`, never
 * through a property lookup at call time.
 *
 * Rules for code that runs after model code (checked on the bundle by test/sandbox/prelude/bundle.test.ts):
 * no spread, `for…of` or array destructuring (all three go through the poisonable array iterator), no
 * `instanceof` on model values, no getter or method looked up on a value model code could have touched
 * unless through a captured function. Captures belong here, at module level, never in a function that
 * runs later.
 */

/** The isolate's global object, as a map of names (the prelude defines and deletes globals by name). */
export const G = globalThis as unknown as Record<PropertyKey, unknown>;
export const ReflectApply = Reflect.apply;
export const ReflectConstruct = Reflect.construct;
export const defineProperty = Object.defineProperty;
export const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
export const getOwnPropertyNames = Object.getOwnPropertyNames;
export const getPrototypeOf = Object.getPrototypeOf;
export const objectKeys = Object.keys;
export const objectIs = Object.is;
export const hasOwn = Object.hasOwn;
export const freeze = Object.freeze;
export const ObjectCreate = Object.create;
export const ObjectPrototype = Object.prototype;
export const $Array = Array;
export const isArray = Array.isArray;
export const ArrayFrom = Array.from;
export const ArrayPrototype = Array.prototype;
export const $JSON = JSON;
export const jsonStringify = JSON.stringify;
export const jsonParse = JSON.parse;
export const $Error = Error;
export const $TypeError = TypeError;
export const $RangeError = RangeError;
export const $EvalError = EvalError;
export const $RegExp = RegExp;
export const RegExpPrototype = RegExp.prototype;
export const $String = String;
export const StringPrototype = String.prototype;
export const StringFromCharCode = String.fromCharCode;
export const MathMin = Math.min;
export const MathMax = Math.max;
export const MathCeil = Math.ceil;
export const MathFloor = Math.floor;
export const NumberIsFinite = Number.isFinite;
export const NumberIsNaN = Number.isNaN;
export const ErrorIsError: ((v: unknown) => boolean) | null =
  typeof (Error as { isError?: unknown }).isError === 'function'
    ? (Error as unknown as { isError: (v: unknown) => boolean }).isError
    : null;
export const $Promise = Promise;
export const PromiseReject = Promise.reject;
export const PromiseResolve = Promise.resolve;
export const PromiseThen = Promise.prototype.then;
export const SymbolMatch = Symbol.match;
export const SymbolMatchAll = Symbol.matchAll;
export const SymbolReplace = Symbol.replace;
export const SymbolSearch = Symbol.search;
export const SymbolSplit = Symbol.split;
export const SymbolSpecies = Symbol.species;
export const SymbolIterator = Symbol.iterator;
export const DateNow = Date.now;
export const $Date = Date;
export const $Map = Map;
export const $Set = Set;
export const $WeakMap = WeakMap;
/** Intl, when the isolate has ICU. */
export const $Intl: typeof Intl | undefined = typeof Intl === 'object' ? Intl : undefined;
export const $ArrayBuffer = ArrayBuffer;
export const $DataView = DataView;
export const DataViewPrototype = DataView.prototype;
export const $Uint8Array = Uint8Array;
export const $Uint16Array = Uint16Array;
export const $Float64Array = Float64Array;
/** %TypedArray%.prototype, which every typed array's prototype inherits from. */
export const TypedArrayPrototype: object = getPrototypeOf(Uint8Array.prototype);
/** The typed array constructors by their `Symbol.toStringTag`. */
export const TYPED_ARRAYS: Readonly<Record<string, new (buffer: ArrayBuffer) => ArrayBufferView>> = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
};
/** The error constructors by name. */
export const ERROR_CONSTRUCTORS: Readonly<Record<string, new (message: string) => Error>> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};
/** The prototypes of the four kinds of function, whose `constructor` compiles code from strings. */
export const FUNCTION_PROTOTYPES: readonly object[] = [
  getPrototypeOf(async () => {}),
  getPrototypeOf(function* () {}),
  getPrototypeOf(async function* () {}),
  getPrototypeOf(() => {}),
];

/** A property descriptor model code cannot extend: no prototype, so poisoned Object.prototype fields are not read. */
export function descriptor(
  value: unknown,
  writable: boolean,
  enumerable: boolean,
  configurable: boolean,
): PropertyDescriptor {
  const d = ObjectCreate(null) as PropertyDescriptor;
  d.value = value;
  d.writable = writable;
  d.enumerable = enumerable;
  d.configurable = configurable;
  return d;
}

/**
 * `fn.call(self, ...args)` without Function.prototype.call, which model code could replace. The rest
 * parameter is built by the engine, not through the array iterator.
 */
function uncurry<This, Args extends unknown[], R>(
  fn: (this: This, ...args: Args) => R,
): (self: This, ...args: Args) => R {
  return (self, ...args) => ReflectApply(fn, self, args);
}

function uncurryGetter<This, R>(proto: object, name: PropertyKey): (self: This) => R {
  const get = getOwnPropertyDescriptor(proto, name)!.get as (this: This) => R;
  return (self) => ReflectApply(get, self, []);
}

export const StringSlice: (s: string, start?: number, end?: number) => string = uncurry(
  String.prototype.slice,
);
export const StringIndexOf: (s: string, search: string, position?: number) => number = uncurry(
  String.prototype.indexOf,
);
export const StringLastIndexOf: (s: string, search: string, position?: number) => number = uncurry(
  String.prototype.lastIndexOf,
);
export const StringCharCodeAt: (s: string, i: number) => number = uncurry(String.prototype.charCodeAt);
export const StringToLowerCase: (s: string) => string = uncurry(String.prototype.toLowerCase);
export const StringReplace: (s: string, pattern: RegExp, replacement: string) => string = uncurry(
  String.prototype.replace as (this: string, pattern: RegExp, replacement: string) => string,
);
export const RegExpExec: (re: RegExp, s: string) => RegExpExecArray | null = uncurry(RegExp.prototype.exec);
export const RegExpTest: (re: RegExp, s: string) => boolean = uncurry(RegExp.prototype.test);
export const RegExpToString: (re: RegExp) => string = uncurry(RegExp.prototype.toString);
export const RegExpSource: (re: unknown) => string = uncurryGetter(RegExp.prototype, 'source');
export const RegExpFlags: (re: unknown) => string = uncurryGetter(RegExp.prototype, 'flags');
export const FunctionToString: (fn: unknown) => string = uncurry(Function.prototype.toString);
export const SymbolToString: (s: symbol) => string = uncurry(Symbol.prototype.toString);
export const DateGetTime: (d: unknown) => number = uncurry(Date.prototype.getTime);
export const DateToISOString: (d: unknown) => string = uncurry(Date.prototype.toISOString);
export const MapForEach: (m: unknown, fn: (value: unknown, key: unknown) => void) => void = uncurry(
  Map.prototype.forEach,
);
export const MapSize: (m: unknown) => number = uncurryGetter(Map.prototype, 'size');
export const MapGet: <V>(m: Map<unknown, V>, key: unknown) => V | undefined = uncurry(Map.prototype.get);
export const MapSet: <V>(m: Map<unknown, V>, key: unknown, value: V) => unknown = uncurry(Map.prototype.set);
export const MapHas: (m: Map<unknown, unknown>, key: unknown) => boolean = uncurry(Map.prototype.has);
export const WeakMapGet: <V>(m: WeakMap<object, V>, key: object) => V | undefined = uncurry(
  WeakMap.prototype.get,
);
export const WeakMapSet: <V>(m: WeakMap<object, V>, key: object, value: V) => unknown = uncurry(
  WeakMap.prototype.set,
);
export const SetForEach: (s: unknown, fn: (value: unknown) => void) => void = uncurry(Set.prototype.forEach);
export const SetSize: (s: unknown) => number = uncurryGetter(Set.prototype, 'size');
export const SetAdd: (s: Set<unknown>, value: unknown) => unknown = uncurry(Set.prototype.add);
export const ArrayBufferSlice: (b: unknown, start: number, end?: number) => ArrayBuffer = uncurry(
  ArrayBuffer.prototype.slice,
);
export const ArrayBufferByteLength: (b: unknown) => number = uncurryGetter(
  ArrayBuffer.prototype,
  'byteLength',
);
export const TypedArrayLength: (a: unknown) => number = uncurryGetter(TypedArrayPrototype, 'length');
/** The pristine `length` getter of typed arrays: it reads an internal slot, no model code. */
export const TypedArrayLengthGetter = getOwnPropertyDescriptor(TypedArrayPrototype, 'length')!.get;
export const TypedArrayBuffer: (a: unknown) => ArrayBuffer = uncurryGetter(TypedArrayPrototype, 'buffer');
export const TypedArrayByteOffset: (a: unknown) => number = uncurryGetter(TypedArrayPrototype, 'byteOffset');
export const TypedArrayByteLength: (a: unknown) => number = uncurryGetter(TypedArrayPrototype, 'byteLength');
export const TypedArrayToStringTag: (a: unknown) => string = uncurryGetter(
  TypedArrayPrototype,
  Symbol.toStringTag,
);
export const DataViewBuffer: (v: unknown) => ArrayBuffer = uncurryGetter(DataView.prototype, 'buffer');
export const DataViewByteOffset: (v: unknown) => number = uncurryGetter(DataView.prototype, 'byteOffset');
export const DataViewByteLength: (v: unknown) => number = uncurryGetter(DataView.prototype, 'byteLength');
/**
 * A regex's own flags, from its internal slot: the getters of the flags, in the order
 * `RegExp.prototype.flags` lists them (that getter itself reads them through properties model code can
 * redefine).
 */
export const REGEXP_FLAG_GETTERS: readonly (readonly [string, (re: unknown) => unknown])[] = [
  ['d', uncurryGetter(RegExp.prototype, 'hasIndices')],
  ['g', uncurryGetter(RegExp.prototype, 'global')],
  ['i', uncurryGetter(RegExp.prototype, 'ignoreCase')],
  ['m', uncurryGetter(RegExp.prototype, 'multiline')],
  ['s', uncurryGetter(RegExp.prototype, 'dotAll')],
  ['u', uncurryGetter(RegExp.prototype, 'unicode')],
  ['v', uncurryGetter(RegExp.prototype, 'unicodeSets')],
  ['y', uncurryGetter(RegExp.prototype, 'sticky')],
];
/** s.charCodeAt(i) through a bound intrinsic: no lookup model code could poison, no argument array. */
export const charCodeOf: (s: string, i: number) => number = Function.prototype.call.bind(
  String.prototype.charCodeAt,
) as never;

/** Brand checks: they throw on the wrong kind of object whatever its prototype or toStringTag says. */
export function brand(check: (v: unknown) => unknown, v: unknown): boolean {
  try {
    check(v);
    return true;
  } catch {
    return false;
  }
}
