/*
 * Small pure web APIs ordinary snippets reach for, written on captured built-ins: `structuredClone`,
 * `TextEncoder`/`TextDecoder` (UTF-8), `btoa`/`atob`, `queueMicrotask` and `performance.now()`. None
 * touches the host; each is an ordinary (writable) global. What stays missing (URL, timers, fetch,
 * Buffer, ...) is named with what to use instead when a block reaches for it (../advice.ts).
 */
import {
  $Error,
  $Promise,
  $String,
  $TypeError,
  DateNow,
  freeze,
  PromiseResolve,
  PromiseThen,
  ReflectApply,
  RegExpTest,
  StringCharCodeAt,
  StringFromCharCode,
  StringIndexOf,
  StringReplace,
} from './intrinsics.ts';
import { defineGlobals } from './replace.ts';
import { structuredClone } from './structured-clone.ts';
import { TextDecoder, TextEncoder } from './text-coding.ts';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function invalidCharacter(message: string): Error {
  const e = new $Error(message);
  e.name = 'InvalidCharacterError';
  return e;
}

function btoa(data: unknown): string {
  const s = $String(data);
  let out = '';
  for (let i = 0; i < s.length; i += 3) {
    const a = StringCharCodeAt(s, i);
    const b = i + 1 < s.length ? StringCharCodeAt(s, i + 1) : 0;
    const c = i + 2 < s.length ? StringCharCodeAt(s, i + 2) : 0;
    if (a > 255 || b > 255 || c > 255)
      throw invalidCharacter(
        'btoa: the string has characters outside Latin-1; encode it first: btoa(String.fromCharCode(...new TextEncoder().encode(s)))',
      );
    const n = (a << 16) | (b << 8) | c;
    out +=
      B64[n >> 18]! +
      B64[(n >> 12) & 63] +
      (i + 1 < s.length ? B64[(n >> 6) & 63] : '=') +
      (i + 2 < s.length ? B64[n & 63] : '=');
  }
  return out;
}

function atob(data: unknown): string {
  const s = StringReplace($String(data), /[\t\n\f\r ]+/g, '');
  const clean = s.length % 4 === 0 ? StringReplace(s, /==?$/, '') : s;
  if (clean.length % 4 === 1 || RegExpTest(/[^A-Za-z0-9+/]/, clean))
    throw invalidCharacter('atob: the string is not valid base64');
  let out = '';
  let bits = 0;
  let acc = 0;
  for (let i = 0; i < clean.length; i++) {
    acc = (acc << 6) | StringIndexOf(B64, clean[i]!);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += StringFromCharCode((acc >> bits) & 255);
    }
  }
  return out;
}

function queueMicrotask(callback: unknown): void {
  if (typeof callback !== 'function') throw new $TypeError('queueMicrotask: the callback must be a function');
  ReflectApply(PromiseThen, ReflectApply(PromiseResolve, $Promise, [undefined]), [
    () => {
      callback();
    },
  ]);
}

/** Defines the web globals; `performance.timeOrigin` is now. */
export function installWeb(): void {
  const timeOrigin = DateNow();
  const performance = freeze({
    now: function now(): number {
      return DateNow() - timeOrigin;
    },
    timeOrigin: timeOrigin,
  });
  const web: Record<string, unknown> = {
    structuredClone,
    TextEncoder,
    TextDecoder,
    btoa,
    atob,
    queueMicrotask,
    performance,
  };
  defineGlobals(web, false);
}
