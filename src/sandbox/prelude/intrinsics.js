/*
 * First part of the in-isolate prelude: pristine copies of the built-ins the bridge relies on, taken
 * before any model code runs. Model code may later replace `JSON.stringify`, `Array.prototype.*`,
 * `String.prototype.*` or `Promise.prototype.then`; the bridge keeps working because it only calls
 * these captured functions, through `ReflectApply`, never through a property lookup at call time.
 *
 * Prelude sources are plain JavaScript kept in `String.raw` strings, so no build or test transform can
 * inject helpers into code that must run inside the isolate. Rules for them: strict mode, no template
 * literals, no spread or `for…of` over arrays (both go through the poisonable array iterator), no
 * `instanceof` on model values.
 */
const G = globalThis;
const ReflectApply = Reflect.apply;
const defineProperty = Object.defineProperty;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const getOwnPropertyNames = Object.getOwnPropertyNames;
const getPrototypeOf = Object.getPrototypeOf;
const objectKeys = Object.keys;
const objectIs = Object.is;
const hasOwn = Object.hasOwn;
const freeze = Object.freeze;
const ObjectPrototype = Object.prototype;
const isArray = Array.isArray;
const jsonStringify = JSON.stringify;
const jsonParse = JSON.parse;
const $Error = Error;
const $TypeError = TypeError;
const $RangeError = RangeError;
const $RegExp = RegExp;
const $String = String;
const MathMin = Math.min;
const MathMax = Math.max;
const MathCeil = Math.ceil;
const MathFloor = Math.floor;
const NumberIsInteger = Number.isInteger;
const NumberIsFinite = Number.isFinite;
const ErrorIsError = typeof Error.isError === 'function' ? Error.isError : null;
const ObjectCreate = Object.create;
const $Promise = Promise;
const PromiseReject = Promise.reject;
const PromiseThen = Promise.prototype.then;
const ReflectConstruct = Reflect.construct;
const FunctionPrototypeCall = Function.prototype.call;
const SymbolMatch = Symbol.match;

/** A property descriptor model code cannot extend: no prototype, so poisoned Object.prototype fields are not read. */
function descriptor(value, writable, enumerable, configurable) {
  const d = ObjectCreate(null);
  d.value = value;
  d.writable = writable;
  d.enumerable = enumerable;
  d.configurable = configurable;
  return d;
}

/** fn.call without Function.prototype.call, which model code could replace. */
function uncurry(fn) {
  return function (self, a, b, c) {
    return ReflectApply(fn, self, [a, b, c]);
  };
}
function uncurryGetter(proto, name) {
  const get = getOwnPropertyDescriptor(proto, name).get;
  return function (self) {
    return ReflectApply(get, self, []);
  };
}

const StringSlice = uncurry(String.prototype.slice);
const StringIndexOf = uncurry(String.prototype.indexOf);
const StringLastIndexOf = uncurry(String.prototype.lastIndexOf);
const StringCharCodeAt = uncurry(String.prototype.charCodeAt);
const StringToLowerCase = uncurry(String.prototype.toLowerCase);
const StringReplace = uncurry(String.prototype.replace);
const RegExpExec = uncurry(RegExp.prototype.exec);
const RegExpTest = uncurry(RegExp.prototype.test);
const RegExpToString = uncurry(RegExp.prototype.toString);
const RegExpSource = uncurryGetter(RegExp.prototype, 'source');
const RegExpFlags = uncurryGetter(RegExp.prototype, 'flags');
const FunctionToString = uncurry(Function.prototype.toString);
const SymbolToString = uncurry(Symbol.prototype.toString);
const DateGetTime = uncurry(Date.prototype.getTime);
const DateToISOString = uncurry(Date.prototype.toISOString);
const MapForEach = uncurry(Map.prototype.forEach);
const MapSize = uncurryGetter(Map.prototype, 'size');
const SetForEach = uncurry(Set.prototype.forEach);
const SetSize = uncurryGetter(Set.prototype, 'size');
const TypedArrayLength = uncurryGetter(getPrototypeOf(Uint8Array.prototype), 'length');

/**
 * JSON encoding of the bridge's own messages (requests, block results) that ignores toJSON and
 * prototype getters, so poisoning Object.prototype cannot garble what the host receives. Handles the
 * shapes the bridge builds: primitives, arrays and plain objects; anything else becomes null.
 */
/** Longest string the bridge encodes: JSON.stringify is one C++ call V8 cannot interrupt. */
const ENCODE_STRING_MAX = 16777216;
function encode(v) {
  switch (typeof v) {
    case 'string':
      if (v.length > ENCODE_STRING_MAX) throw new $RangeError('string too large to encode');
      return jsonStringify(v);
    case 'number':
      return NumberIsFinite(v) ? '' + v : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    default:
      return 'null';
  }
  if (v === null) return 'null';
  let out;
  if (isArray(v)) {
    out = '[';
    for (let i = 0; i < v.length; i++) {
      const d = getOwnPropertyDescriptor(v, i);
      out += (i === 0 ? '' : ',') + encode(d === undefined ? null : d.value);
    }
    return out + ']';
  }
  out = '{';
  const keys = objectKeys(v);
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const d = getOwnPropertyDescriptor(v, keys[i]);
    if (d === undefined || !hasOwn(d, 'value') || d.value === undefined) continue;
    out += (first ? '' : ',') + jsonStringify(keys[i]) + ':' + encode(d.value);
    first = false;
  }
  return out + '}';
}

/** Brand checks: they throw on the wrong kind of object whatever its prototype or toStringTag says. */
function brand(check, v) {
  try {
    check(v);
    return true;
  } catch (e) {
    return false;
  }
}
