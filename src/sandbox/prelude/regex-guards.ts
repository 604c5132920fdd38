/*
 * Regexes: V8 parses and compiles a pattern in one uninterruptible step, and some constructs cost up to
 * half a millisecond a character (unicode property classes with the i, u or v flags; \p{RGI_Emoji} under
 * v), so a pattern of a hundred kilobytes can outlast the CPU limit by far. Every way model code turns
 * text into a regex is bounded: the RegExp constructor, compile(), the string argument of
 * match/matchAll/search (string-guards.ts), and regex literals (../validate.ts, same bound). Like the
 * string guards, these convert the pattern and flags to strings once, check them, and hand the native
 * those strings only (a regex given as the pattern is read from its internal slots).
 *
 * The protocol methods (`RegExp.prototype[Symbol.match]`, `[Symbol.matchAll]`, `[Symbol.replace]`,
 * `[Symbol.search]`, `[Symbol.split]`) run the same C++ loops over their string argument as the string
 * methods that call them, so that string is converted once and held to the same 64 Mi cap.
 * `[Symbol.split]` and `[Symbol.matchAll]` also build a new regex through the species constructor, and
 * on an object whose `constructor` is undefined that is the intrinsic RegExp, which the guarded
 * constructor never sees: a plain object posing as a regex had V8 compile any pattern it liked. Both
 * work on real regexes only, whose source was bounded when they were made.
 */
import {
  isObjectLike,
  PROTOCOL_SYMBOLS,
  type Protocol,
  STRING_CAP,
  toNumber,
  tooLongString,
  toStringOnce,
} from './coerce.ts';
import {
  $RangeError,
  $RegExp,
  $TypeError,
  brand,
  defineProperty,
  getOwnPropertyDescriptor,
  REGEXP_FLAG_GETTERS,
  ReflectApply,
  ReflectConstruct,
  RegExpExec,
  RegExpPrototype,
  RegExpSource,
  SymbolMatch,
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

/** A regex source within the bounds, or a RangeError. */
export function checkedPattern(s: string): string {
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

/** A real regex's flags, from its internal slot. */
function originalFlags(re: unknown): string {
  let flags = '';
  for (let i = 0; i < REGEXP_FLAG_GETTERS.length; i++) {
    const entry = REGEXP_FLAG_GETTERS[i]!;
    if (entry[1](re) === true) flags += entry[0];
  }
  return flags;
}

/** (source, flags) as the native takes them: strings converted once (the source bounded), or undefined. */
function regexStrings(source: unknown, flags: unknown): [string | undefined, string | undefined] {
  return [
    source === undefined ? undefined : checkedPattern(toStringOnce(source)),
    flags === undefined ? undefined : toStringOnce(flags),
  ];
}

function isRealRegExp(v: unknown): boolean {
  return isObjectLike(v) && brand(RegExpSource, v);
}

/** Guards `RegExp` and `compile`. */
export function guardRegExp(): void {
  const regexCompile = getOwnPropertyDescriptor(RegExpPrototype, 'compile');
  if (regexCompile !== undefined && typeof regexCompile.value === 'function') {
    const nativeCompile = regexCompile.value as AnyMethod;
    defineProperty(RegExpPrototype, 'compile', {
      value: function compile(this: unknown, pattern: unknown, flags: unknown) {
        // Annex B: a regex pattern gives its own source and flags, and then no flags may be passed.
        if (isRealRegExp(pattern)) {
          if (flags !== undefined)
            throw new $TypeError('RegExp.prototype.compile: no flags may be given with a regex pattern');
          return ReflectApply(
            nativeCompile,
            this,
            regexStrings(RegExpSource(pattern), originalFlags(pattern)),
          );
        }
        return ReflectApply(nativeCompile, this, regexStrings(pattern, flags));
      },
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
  // biome-ignore lint/suspicious/noShadowRestrictedNames: it takes the place of RegExp, under its name
  const RegExpGuarded = function RegExp(pattern: unknown, flags: unknown) {
    const real = isRealRegExp(pattern);
    let like = real;
    if (isObjectLike(pattern)) {
      // IsRegExp, read once.
      const matcher = (pattern as Record<symbol, unknown>)[SymbolMatch];
      if (matcher !== undefined) like = !!matcher;
    }
    const object = pattern as { constructor?: unknown; source?: unknown; flags?: unknown };
    // RegExp(re) with no new and no flags gives re back when re's constructor is RegExp.
    if (new.target === undefined && like && flags === undefined && object.constructor === RegExpGuarded)
      return pattern;
    let args: [string | undefined, string | undefined];
    if (real)
      args = regexStrings(RegExpSource(pattern), flags === undefined ? originalFlags(pattern) : flags);
    else if (like) args = regexStrings(object.source, flags === undefined ? object.flags : flags);
    else args = regexStrings(pattern, flags);
    if (new.target === undefined) return ReflectApply($RegExp, undefined, args);
    return ReflectConstruct($RegExp, args, new.target === RegExpGuarded ? $RegExp : new.target);
  };
  replaceConstructor('RegExp', $RegExp, RegExpGuarded);
}

/** The protocol methods: their string argument converted once and capped; split and matchAll on real regexes only. */
export function guardRegExpProtocol(): void {
  const protocols: Protocol[] = ['match', 'matchAll', 'replace', 'search', 'split'];
  for (let i = 0; i < protocols.length; i++) {
    const protocol = protocols[i]!;
    const symbol = PROTOCOL_SYMBOLS[protocol];
    const label = 'RegExp.prototype[Symbol.' + protocol + ']';
    const realOnly = protocol === 'split' || protocol === 'matchAll';
    const d = getOwnPropertyDescriptor(RegExpPrototype, symbol)!;
    const native = d.value as AnyMethod;
    const guarded = {
      [label]: function (this: unknown, ...args: unknown[]) {
        if (realOnly && !isRealRegExp(this)) {
          throw new $TypeError(
            label + ' works on regular expressions only: make one with /.../ or new RegExp(...)',
          );
        }
        const s = toStringOnce(args[0]);
        if (s.length > STRING_CAP) throw tooLongString(label, s.length);
        const converted: unknown[] = [s];
        if (args.length > 1) {
          const second = args[1];
          // replace's replacement (a function stays one), split's limit.
          if (protocol === 'replace')
            converted[1] =
              typeof second === 'function' || !isObjectLike(second) ? second : toStringOnce(second);
          else if (protocol === 'split') converted[1] = second === undefined ? second : toNumber(second);
        }
        return ReflectApply(native, this, converted);
      },
    }[label]!;
    replaceMethod(RegExpPrototype, symbol, d, guarded);
  }
}
