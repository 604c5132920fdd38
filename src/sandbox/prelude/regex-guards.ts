/*
 * Regexes: V8 parses and compiles a pattern in one uninterruptible step, and some constructs cost up to
 * half a millisecond a character (unicode property classes with the i, u or v flags; \p{RGI_Emoji} under
 * v), so a pattern of a hundred kilobytes can outlast the CPU limit by far. Every way model code turns
 * text into a regex is bounded: the RegExp constructor, compile(), the string argument of
 * match/matchAll/search (string-guards.ts), and regex literals (../validate.ts, same bound).
 *
 * `RegExp.prototype[Symbol.split]` and `[Symbol.matchAll]` build a new regex through the species
 * constructor, and on an object whose `constructor` is undefined that is the intrinsic RegExp, which the
 * guarded constructor never sees: a plain object posing as a regex had V8 compile any pattern it liked.
 * Both work on real regexes only, whose source was bounded when they were made.
 */
import {
  $RangeError,
  $RegExp,
  $String,
  $TypeError,
  brand,
  defineProperty,
  getOwnPropertyDescriptor,
  ReflectApply,
  ReflectConstruct,
  RegExpExec,
  RegExpPrototype,
  RegExpSource,
  SymbolMatch,
  SymbolMatchAll,
  SymbolSplit,
} from './intrinsics.ts';
import { type AnyMethod, replaceConstructor, replaceMethod } from './replace.ts';

const REGEX_CAP = 8192;

function tooLongRegex(len: number): RangeError {
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

function checkedSource(s: string): string {
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
function regexArguments(pattern: unknown, flags: unknown, count: number): unknown[] {
  if (typeof pattern === 'string') checkedSource(pattern);
  else if (pattern !== null && typeof pattern === 'object') {
    if (brand(RegExpSource, pattern)) checkedSource(RegExpSource(pattern));
    else {
      // What the constructor would read from a regex-like object or convert, read once, here.
      const like = pattern as Record<PropertyKey, unknown>;
      const m = like[SymbolMatch];
      if (m !== undefined ? !!m : false) {
        let source = like.source;
        if (source !== undefined) source = checkedSource($String(source));
        return [source, flags === undefined ? like.flags : flags];
      }
      return [checkedSource($String(pattern)), flags];
    }
  }
  return count > 1 ? [pattern, flags] : [pattern];
}

/** The argument of match/matchAll/search: a string (or what converts to one) is compiled as a regex. */
export function regexArgument(v: unknown, symbol: symbol): unknown {
  if (typeof v === 'string') return checkedSource(v);
  if (v === null || v === undefined || typeof v === 'symbol') return v;
  if (typeof v === 'object' || typeof v === 'function') {
    const method = (v as Record<PropertyKey, unknown>)[symbol];
    if (method !== undefined && method !== null) return v;
  }
  return checkedSource($String(v));
}

/** Guards `RegExp`, `compile` and the species-building protocol methods. */
export function guardRegExp(): void {
  const regexCompile = getOwnPropertyDescriptor(RegExpPrototype, 'compile');
  if (regexCompile !== undefined && typeof regexCompile.value === 'function') {
    const nativeCompile = regexCompile.value as AnyMethod;
    defineProperty(RegExpPrototype, 'compile', {
      value: function compile(this: unknown, pattern: unknown, flags: unknown) {
        return ReflectApply(nativeCompile, this, regexArguments(pattern, flags, 2));
      },
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
  // biome-ignore lint/suspicious/noShadowRestrictedNames: it takes the place of RegExp, under its name
  const RegExpGuarded = function RegExp(pattern: unknown, flags: unknown) {
    // biome-ignore lint/complexity/noArguments: RegExp(p) and RegExp(p, undefined) differ for a regex p
    const args = regexArguments(pattern, flags, arguments.length);
    if (new.target === undefined) return ReflectApply($RegExp, undefined, args);
    return ReflectConstruct($RegExp, args, new.target === RegExpGuarded ? $RegExp : new.target);
  };
  replaceConstructor('RegExp', $RegExp, RegExpGuarded);
}

/** The species-building protocol methods work on real regexes only (see above). */
export function guardRegExpProtocol(): void {
  const protocol: [string, symbol][] = [
    ['split', SymbolSplit],
    ['matchAll', SymbolMatchAll],
  ];
  for (let i = 0; i < protocol.length; i++) {
    const label = protocol[i]![0];
    const symbol = protocol[i]![1];
    const d = getOwnPropertyDescriptor(RegExpPrototype, symbol)!;
    const native = d.value as AnyMethod;
    const key = '[Symbol.' + label + ']';
    const guarded = {
      [key]: function (this: unknown) {
        if (!brand(RegExpSource, this)) {
          throw new $TypeError(
            'RegExp.prototype[Symbol.' +
              label +
              '] works on regular expressions only: make one with /.../ or new RegExp(...)',
          );
        }
        // biome-ignore lint/complexity/noArguments: the native sees exactly the arguments it was given
        return ReflectApply(native, this, arguments);
      },
    }[key]!;
    replaceMethod(RegExpPrototype, symbol, d, guarded);
  }
}
