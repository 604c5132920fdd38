/*
 * Last part of the prelude: shrinks the isolate's surface before any model code runs.
 *
 * - Closes code generation from strings. isolated-vm allows it (its V8 callback only refuses huge
 *   sources), so the `eval` global is deleted and the `constructor` of every kind of function
 *   prototype (plain, async, generator, async generator) is replaced by a function that throws: no
 *   path is left to the Function constructors, however the name is spelled.
 * - Deletes globals with no use here (WebAssembly, SharedArrayBuffer, Atomics, Proxy, Reflect, eval,
 *   Function, FinalizationRegistry, WeakRef) and BigInt with every way to make one (names.ts).
 * - Freezes `Error.prepareStackTrace` as undefined: stack-trace callbacks are how code usually reaches
 *   the receivers and functions of other frames.
 * - Bounds the Array methods that V8 runs as uninterruptible C++ loops. On a sparse array of huge
 *   length (`[].length = 1e9`) `fill`, `sort`, `reverse`, `indexOf`, `copyWithin` or `slice` can run
 *   for minutes without ever checking the CPU timeout, and isolated-vm then gives up on the isolate.
 *   Lengths above `ARRAY_CAP` are refused; a large `fill` runs as a plain (interruptible) loop.
 * - Sorting without a comparator is one uninterruptible C++ call too, and a slow one (numbers are
 *   compared as strings: two million take over six seconds). Above `SORT_NATIVE_MAX` elements the
 *   same order is produced through a comparator written here, so V8 calls back into JavaScript and
 *   the CPU limit can stop it. Typed arrays get the same treatment (their numeric sort, and `join`,
 *   are C++ loops over up to billions of elements), and `toLocaleString` (ICU, per element) is refused
 *   beyond `LOCALE_CAP` elements.
 * - Likewise refuses regex and case operations on strings over 64 Mi characters (larger than any
 *   loaded context) and `repeat`/`padStart`/`padEnd` results beyond that size.
 */
const ARRAY_CAP = 16777216;
const FILL_NATIVE_MAX = 65536;

function toIndex(v, len, dflt) {
  if (v === undefined) return dflt;
  let n = +v;
  if (n !== n) n = 0;
  n = n < 0 ? MathCeil(n) : MathFloor(n);
  return n < 0 ? MathMax(len + n, 0) : MathMin(n, len);
}

function arrayLength(o) {
  if (o === null || o === undefined) return 0;
  const n = +o.length;
  return n > 0 ? n : 0;
}

function tooLong(name, len, cap) {
  return new $RangeError(
    name +
      ': length ' +
      len +
      ' is over the sandbox limit of ' +
      cap +
      ' elements; work on smaller arrays or on the strings directly',
  );
}

const SORT_NATIVE_MAX = 100000;
const LOCALE_CAP = 1000000;

/** SortCompare without a comparator (ToString, then code units), as a comparator. */
function defaultOrder(a, b) {
  if (typeof a === 'symbol' || typeof b === 'symbol')
    throw new $TypeError('Cannot convert a Symbol value to a string');
  const x = $String(a);
  const y = $String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The typed arrays' default numeric order: -0 before +0, NaN last. */
function numericOrder(a, b) {
  if (a !== a) return b !== b ? 0 : 1;
  if (b !== b) return -1;
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === 0 && b === 0 && typeof a === 'number') {
    const na = 1 / a < 0;
    const nb = 1 / b < 0;
    return na === nb ? 0 : na ? -1 : 1;
  }
  return 0;
}

function typedLength(o) {
  try {
    return TypedArrayLength(o);
  } catch (e) {
    return 0;
  }
}

/**
 * Puts `guarded` in place of the method `key` of `owner` whose descriptor is `d`: same length, same
 * attributes, so only what it refuses tells it from the native one.
 */
function replaceMethod(owner, key, d, guarded) {
  defineProperty(guarded, 'length', { value: d.value.length });
  defineProperty(owner, key, {
    value: guarded,
    writable: d.writable,
    enumerable: d.enumerable,
    configurable: d.configurable,
  });
}

function guardMethod(proto, name, label, lengthOf, order) {
  const d = getOwnPropertyDescriptor(proto, name);
  if (d === undefined || typeof d.value !== 'function') return;
  const native = d.value;
  const cap = name === 'toLocaleString' ? LOCALE_CAP : ARRAY_CAP;
  let guarded;
  if (name === 'fill') {
    guarded = function fill(value, start, end) {
      const len = lengthOf(this);
      if (len > ARRAY_CAP) throw tooLong(label, len, ARRAY_CAP);
      const from = toIndex(start, len, 0);
      const to = toIndex(end, len, len);
      if (to - from <= FILL_NATIVE_MAX) return ReflectApply(native, this, arguments);
      for (let i = from; i < to; i++) this[i] = value;
      return this;
    };
  } else if (name === 'sort' || name === 'toSorted') {
    guarded = {
      [name]: function (comparefn) {
        const len = lengthOf(this);
        if (len > ARRAY_CAP) throw tooLong(label, len, ARRAY_CAP);
        if (comparefn === undefined && len > SORT_NATIVE_MAX) return ReflectApply(native, this, [order]);
        return ReflectApply(native, this, arguments);
      },
    }[name];
  } else {
    guarded = {
      [name]: function () {
        const len = lengthOf(this);
        if (len > cap) throw tooLong(label, len, cap);
        return ReflectApply(native, this, arguments);
      },
    }[name];
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
for (let i = 0; i < ARRAY_METHODS.length; i++) {
  guardMethod(
    Array.prototype,
    ARRAY_METHODS[i],
    'Array.prototype.' + ARRAY_METHODS[i],
    arrayLength,
    defaultOrder,
  );
}
const TYPED_METHODS = ['sort', 'toSorted', 'join', 'toLocaleString'];
const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
for (let i = 0; i < TYPED_METHODS.length; i++) {
  guardMethod(
    TypedArrayPrototype,
    TYPED_METHODS[i],
    'TypedArray.prototype.' + TYPED_METHODS[i],
    typedLength,
    numericOrder,
  );
}

// Strings: V8's global replace/split/match on a string of hundreds of megabytes run as one C++ call
// the CPU limit cannot cut short. Such strings come from the model's own repeat/concat, or are the
// context itself: the cap is 64 MiB or the longest context document, whichever is longer (init raises
// it), so `context.match(...)` works on any context the isolate holds. A call past the CPU limit on such
// a string is stopped by the process watchdog (session.ts): the session resets, the host is unharmed.
let STRING_CAP = 67108864;
/** Lets strings as long as `length` through the guards below (a context document that long is loaded). */
function allowStringsOf(length) {
  if (length > STRING_CAP) STRING_CAP = length;
}
function tooLongString(name, len) {
  return new $RangeError(
    'String.prototype.' +
      name +
      ': a string of ' +
      len +
      ' characters is over the sandbox limit of ' +
      STRING_CAP +
      '; work on slices',
  );
}
// Regexes: V8 parses and compiles a pattern in one uninterruptible step, and some constructs cost
// up to half a millisecond a character (unicode property classes with the i, u or v flags; \p{RGI_Emoji}
// under v), so a pattern of a hundred kilobytes can outlast the CPU limit by far. Every way model code
// turns text into a regex is bounded: the RegExp constructor, compile(), the string argument of
// match/matchAll/search, and regex literals (validate.ts, same bound).
const REGEX_CAP = 8192;
function tooLongRegex(len) {
  return new $RangeError(
    'RegExp: a pattern of ' +
      len +
      ' characters is over the sandbox limit of ' +
      REGEX_CAP +
      '; split it into several smaller patterns',
  );
}
// Property escapes (\p{…}, \P{…}) and class strings (\q{…}) cost up to tens of milliseconds each under
// the u or v flag, and V8 builds a whole class in one step: their number is bounded too (validate.ts).
const REGEX_PROPERTY_CAP = 32;
const PROPERTY_ESCAPE = /\\[pPq]\{/g;
function checkedSource(s) {
  if (s.length > REGEX_CAP) throw tooLongRegex(s.length);
  PROPERTY_ESCAPE.lastIndex = 0;
  let n = 0;
  while (RegExpExec(PROPERTY_ESCAPE, s) !== null) {
    if (++n > REGEX_PROPERTY_CAP) {
      throw new $RangeError(
        'RegExp: more than ' +
          REGEX_PROPERTY_CAP +
          ' property escapes (\\p{...}, \\q{...}) in one pattern is over the sandbox limit; split it into several smaller patterns',
      );
    }
  }
  return s;
}
/** The arguments to give the native constructor (or compile) for (pattern, flags), pattern bounded. */
function regexArguments(pattern, flags, count) {
  if (typeof pattern === 'string') checkedSource(pattern);
  else if (pattern !== null && typeof pattern === 'object') {
    if (brand(RegExpSource, pattern)) checkedSource(RegExpSource(pattern));
    else {
      // What the constructor would read from a regex-like object or convert, read once, here.
      const m = pattern[SymbolMatch];
      if (m !== undefined ? !!m : false) {
        let source = pattern.source;
        if (source !== undefined) source = checkedSource($String(source));
        return [source, flags === undefined ? pattern.flags : flags];
      }
      return [checkedSource($String(pattern)), flags];
    }
  }
  return count > 1 ? [pattern, flags] : [pattern];
}
/** The argument of match/matchAll/search: a string (or what converts to one) is compiled as a regex. */
function regexArgument(v, symbol) {
  if (typeof v === 'string') return checkedSource(v);
  if (v === null || v === undefined || typeof v === 'symbol') return v;
  if (typeof v === 'object' || typeof v === 'function') {
    const method = v[symbol];
    if (method !== undefined && method !== null) return v;
  }
  return checkedSource($String(v));
}

const REGEX_STRING_SYMBOLS = { match: SymbolMatch, matchAll: Symbol.matchAll, search: Symbol.search };
const STRING_METHODS = [
  'replace',
  'replaceAll',
  'split',
  'match',
  'matchAll',
  'search',
  'normalize',
  'toLowerCase',
  'toUpperCase',
  'localeCompare',
];
for (let i = 0; i < STRING_METHODS.length; i++) {
  const name = STRING_METHODS[i];
  const d = getOwnPropertyDescriptor(String.prototype, name);
  const native = d.value;
  const symbol = hasOwn(REGEX_STRING_SYMBOLS, name) ? REGEX_STRING_SYMBOLS[name] : null;
  const guarded = {
    [name]: function (a) {
      if (typeof this === 'string' && this.length > STRING_CAP) throw tooLongString(name, this.length);
      if (symbol !== null) {
        const args = [regexArgument(a, symbol)];
        for (let k = 1; k < arguments.length; k++) args[k] = arguments[k];
        return ReflectApply(native, this, args);
      }
      return ReflectApply(native, this, arguments);
    },
  }[name];
  replaceMethod(String.prototype, name, d, guarded);
}
const STRING_BUILDERS = ['repeat', 'padStart', 'padEnd'];
for (let i = 0; i < STRING_BUILDERS.length; i++) {
  const name = STRING_BUILDERS[i];
  const d = getOwnPropertyDescriptor(String.prototype, name);
  const native = d.value;
  const guarded = {
    [name]: function (n) {
      // Checked before building: the result itself is what must not exist.
      const size = name === 'repeat' ? (typeof this === 'string' ? this.length : 0) * +n : +n;
      if (size > STRING_CAP) throw tooLongString(name, size);
      return ReflectApply(native, this, arguments);
    },
  }[name];
  replaceMethod(String.prototype, name, d, guarded);
}

const regexCompile = getOwnPropertyDescriptor($RegExp.prototype, 'compile');
if (regexCompile !== undefined && typeof regexCompile.value === 'function') {
  const nativeCompile = regexCompile.value;
  defineProperty($RegExp.prototype, 'compile', {
    value: function compile(pattern, flags) {
      return ReflectApply(nativeCompile, this, regexArguments(pattern, flags, 2));
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });
}
const RegExpGuarded = function RegExp(pattern, flags) {
  const args = regexArguments(pattern, flags, arguments.length);
  if (new.target === undefined) return ReflectApply($RegExp, undefined, args);
  return ReflectConstruct($RegExp, args, new.target === RegExpGuarded ? $RegExp : new.target);
};
{
  const statics = getOwnPropertyNames($RegExp);
  for (let i = 0; i < statics.length; i++) {
    const key = statics[i];
    if (key === 'prototype' || key === 'length' || key === 'name') continue;
    defineProperty(RegExpGuarded, key, getOwnPropertyDescriptor($RegExp, key));
  }
  defineProperty(RegExpGuarded, Symbol.species, getOwnPropertyDescriptor($RegExp, Symbol.species));
  defineProperty(RegExpGuarded, 'prototype', {
    value: $RegExp.prototype,
    writable: false,
    enumerable: false,
    configurable: false,
  });
  defineProperty($RegExp.prototype, 'constructor', {
    value: RegExpGuarded,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  defineProperty(G, 'RegExp', {
    value: RegExpGuarded,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}

// JSON.parse builds every object and array of its text in one C++ call: twenty million empty objects
// take half a minute. Long texts are checked first (an upper bound: braces inside strings count too).
const JSON_SCAN_MIN = 1048576;
const JSON_CONTAINER_CAP = 2000000;
function countUpTo(text, ch, limit) {
  let n = 0;
  let i = StringIndexOf(text, ch, 0);
  while (i !== -1 && n <= limit) {
    n++;
    i = StringIndexOf(text, ch, i + 1);
  }
  return n;
}
defineProperty(JSON, 'parse', {
  value: function parse(text, reviver) {
    const source = typeof text === 'string' ? text : $String(text);
    if (source.length > JSON_SCAN_MIN) {
      const containers =
        countUpTo(source, '{', JSON_CONTAINER_CAP) + countUpTo(source, '[', JSON_CONTAINER_CAP);
      if (containers > JSON_CONTAINER_CAP) {
        throw new $RangeError(
          'JSON.parse: more than ' +
            JSON_CONTAINER_CAP +
            ' objects and arrays in one text is over the sandbox limit; parse it in parts (for JSON lines, line by line)',
        );
      }
    }
    return arguments.length > 1 ? jsonParse(source, reviver) : jsonParse(source);
  },
  writable: true,
  enumerable: false,
  configurable: true,
});

const nativeArrayFrom = Array.from;
defineProperty(Array, 'from', {
  value: function from(items) {
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
    return ReflectApply(nativeArrayFrom, this, arguments);
  },
  writable: true,
  enumerable: false,
  configurable: true,
});

const $EvalError = EvalError;
function tameConstructor(proto) {
  const tamed = function Function() {
    throw new $EvalError(
      'code generation from strings is disabled in the sandbox; write the function directly',
    );
  };
  defineProperty(tamed, 'prototype', {
    value: proto,
    writable: false,
    enumerable: false,
    configurable: false,
  });
  defineProperty(proto, 'constructor', {
    value: tamed,
    writable: false,
    enumerable: false,
    configurable: false,
  });
}
tameConstructor(getPrototypeOf(async function () {}));
tameConstructor(getPrototypeOf(function* () {}));
tameConstructor(getPrototypeOf(async function* () {}));
tameConstructor(getPrototypeOf(function () {}));

defineProperty($Error, 'prepareStackTrace', {
  value: undefined,
  writable: false,
  enumerable: false,
  configurable: false,
});

// The last ways to make a BigInt once its constructors are gone (see names.ts).
const BIGINT_ACCESSORS = ['getBigInt64', 'getBigUint64', 'setBigInt64', 'setBigUint64'];
for (let i = 0; i < BIGINT_ACCESSORS.length; i++) delete DataView.prototype[BIGINT_ACCESSORS[i]];

for (let i = 0; i < REMOVED_GLOBALS.length; i++) delete G[REMOVED_GLOBALS[i]];
