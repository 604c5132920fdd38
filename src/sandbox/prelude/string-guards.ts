/*
 * Strings: V8's global replace/split/match on a string of hundreds of megabytes run as one C++ call the
 * CPU limit cannot cut short. Such strings can only come from the model's own repeat/concat, so regex
 * and case operations on strings over 64 Mi characters (larger than any loaded context) are refused,
 * and so are `repeat`/`padStart`/`padEnd` results beyond that size.
 */
import {
  $RangeError,
  getOwnPropertyDescriptor,
  hasOwn,
  ReflectApply,
  StringPrototype,
  SymbolMatch,
  SymbolMatchAll,
  SymbolSearch,
} from './intrinsics.ts';
import { regexArgument } from './regex-guards.ts';
import { type AnyMethod, replaceMethod } from './replace.ts';

const STRING_CAP = 67108864;

function tooLongString(name: string, len: number): RangeError {
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

const REGEX_STRING_SYMBOLS: Readonly<Record<string, symbol>> = {
  match: SymbolMatch,
  matchAll: SymbolMatchAll,
  search: SymbolSearch,
};
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
const STRING_BUILDERS = ['repeat', 'padStart', 'padEnd'];

/** Guards the string methods above. */
export function guardStrings(): void {
  for (let i = 0; i < STRING_METHODS.length; i++) {
    const name = STRING_METHODS[i]!;
    const d = getOwnPropertyDescriptor(StringPrototype, name)!;
    const native = d.value as AnyMethod;
    const symbol = hasOwn(REGEX_STRING_SYMBOLS, name) ? REGEX_STRING_SYMBOLS[name]! : null;
    const guarded = {
      [name]: function (this: unknown, a: unknown) {
        if (typeof this === 'string' && this.length > STRING_CAP) throw tooLongString(name, this.length);
        if (symbol !== null) {
          const args = [regexArgument(a, symbol)];
          // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
          for (let k = 1; k < arguments.length; k++) args[k] = arguments[k];
          return ReflectApply(native, this, args);
        }
        // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
        return ReflectApply(native, this, arguments);
      },
    }[name]!;
    replaceMethod(StringPrototype, name, d, guarded);
  }
  for (let i = 0; i < STRING_BUILDERS.length; i++) {
    const name = STRING_BUILDERS[i]!;
    const d = getOwnPropertyDescriptor(StringPrototype, name)!;
    const native = d.value as AnyMethod;
    const guarded = {
      [name]: function (this: unknown, n: unknown) {
        // Checked before building: the result itself is what must not exist.
        const size =
          name === 'repeat' ? (typeof this === 'string' ? this.length : 0) * +(n as number) : +(n as number);
        if (size > STRING_CAP) throw tooLongString(name, size);
        // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
        return ReflectApply(native, this, arguments);
      },
    }[name]!;
    replaceMethod(StringPrototype, name, d, guarded);
  }
}
