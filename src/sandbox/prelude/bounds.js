/*
 * Prelude part, after harden.ts: bounds on the last paths around the isolate's limits.
 *
 * - `RegExp.prototype[Symbol.split]` and `[Symbol.matchAll]` build a new regex through the species
 *   constructor, and on an object whose `constructor` is undefined that is the intrinsic RegExp, which
 *   the guarded constructor (harden.ts) never sees: a plain object posing as a regex had V8 compile any
 *   pattern it liked. Both now work on real regexes only, whose source was bounded when they were made.
 * - Resizable ArrayBuffers reserve `maxByteLength` outside the heap and `resize` commits it without
 *   isolated-vm counting it against the memory limit: a 64 MB isolate could hold gigabytes. The
 *   reservations of a session together are bounded by its memory limit (`config.memoryMb`); plain
 *   ArrayBuffers are counted by isolated-vm already. SharedArrayBuffer is deleted (names.ts).
 */
const REGEX_PROTOCOL = [
  ['split', Symbol.split],
  ['matchAll', Symbol.matchAll],
];
for (let i = 0; i < REGEX_PROTOCOL.length; i++) {
  const label = REGEX_PROTOCOL[i][0];
  const symbol = REGEX_PROTOCOL[i][1];
  const d = getOwnPropertyDescriptor($RegExp.prototype, symbol);
  const native = d.value;
  const guarded = {
    ['[Symbol.' + label + ']']: function (string) {
      if (!brand(RegExpSource, this)) {
        throw new $TypeError(
          'RegExp.prototype[Symbol.' +
            label +
            '] works on regular expressions only: make one with /.../ or new RegExp(...)',
        );
      }
      return ReflectApply(native, this, arguments);
    },
  }['[Symbol.' + label + ']'];
  replaceMethod($RegExp.prototype, symbol, d, guarded);
}

const $ArrayBuffer = ArrayBuffer;
/** Bytes of maxByteLength the session's resizable buffers have reserved (never credited back). */
let resizableReserved = 0;
function resizableBudget() {
  return (config === null ? 128 : config.memoryMb) * 1048576;
}
const ArrayBufferGuarded = function ArrayBuffer(length, options) {
  if (new.target === undefined) throw new $TypeError("Constructor ArrayBuffer requires 'new'");
  let args = arguments;
  if (options !== null && typeof options === 'object') {
    const max = options.maxByteLength;
    if (max !== undefined) {
      const bytes = +max;
      const left = resizableBudget() - resizableReserved;
      if (!(bytes <= left)) {
        throw new $RangeError(
          'ArrayBuffer: a maxByteLength of ' +
            max +
            ' bytes is over what this session may still reserve for resizable buffers (' +
            left +
            ' of ' +
            resizableBudget() +
            ' bytes, the memory limit); use a smaller maxByteLength, or plain arrays',
        );
      }
      resizableReserved += bytes > 0 ? bytes : 0;
      // Read once: a getter answering differently the second time must not reach the native constructor.
      args = [length, { maxByteLength: max }];
    }
  }
  return ReflectConstruct($ArrayBuffer, args, new.target === ArrayBufferGuarded ? $ArrayBuffer : new.target);
};
{
  const statics = getOwnPropertyNames($ArrayBuffer);
  for (let i = 0; i < statics.length; i++) {
    const key = statics[i];
    if (key === 'prototype' || key === 'length' || key === 'name') continue;
    defineProperty(ArrayBufferGuarded, key, getOwnPropertyDescriptor($ArrayBuffer, key));
  }
  defineProperty(ArrayBufferGuarded, 'length', { value: 1 });
  defineProperty(ArrayBufferGuarded, Symbol.species, getOwnPropertyDescriptor($ArrayBuffer, Symbol.species));
  defineProperty(ArrayBufferGuarded, 'prototype', {
    value: $ArrayBuffer.prototype,
    writable: false,
    enumerable: false,
    configurable: false,
  });
  defineProperty($ArrayBuffer.prototype, 'constructor', {
    value: ArrayBufferGuarded,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  defineProperty(G, 'ArrayBuffer', {
    value: ArrayBufferGuarded,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}
