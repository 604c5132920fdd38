/*
 * Shrinks the isolate's surface before any model code runs, in this order:
 *
 * - Bounds the built-ins V8 runs as uninterruptible C++ calls: Array and typed array methods
 *   (array-guards.ts, with Array.from and String.raw), string methods (string-guards.ts), regex compilation (regex-guards.ts),
 *   JSON.parse (json-guard.ts) and resizable ArrayBuffers (buffer-guard.ts).
 * - Closes code generation from strings. isolated-vm allows it (its V8 callback only refuses huge
 *   sources), so the `eval` global is deleted and the `constructor` of every kind of function
 *   prototype (plain, async, generator, async generator) is replaced by a function that throws: no
 *   path is left to the Function constructors, however the name is spelled.
 * - Freezes `Error.prepareStackTrace` as undefined: stack-trace callbacks are how code usually reaches
 *   the receivers and functions of other frames.
 * - Deletes globals with no use here (WebAssembly, SharedArrayBuffer, Atomics, Proxy, Reflect, eval,
 *   Function, FinalizationRegistry, WeakRef) and BigInt with every way to make one (../names.ts).
 */
import { REMOVED_GLOBALS } from '../names.ts';
import { guardArrayFrom, guardArrays, guardStringRaw } from './array-guards.ts';
import { guardArrayBuffer } from './buffer-guard.ts';
import {
  $Error,
  $EvalError,
  DataViewPrototype,
  defineProperty,
  FUNCTION_PROTOTYPES,
  G,
} from './intrinsics.ts';
import { guardJsonParse } from './json-guard.ts';
import { guardRegExp, guardRegExpProtocol } from './regex-guards.ts';
import { guardStrings } from './string-guards.ts';

function tameConstructor(proto: object): void {
  // biome-ignore lint/suspicious/noShadowRestrictedNames: it takes the place of Function, under its name
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

/** The last ways to make a BigInt once its constructors are gone (see ../names.ts). */
const BIGINT_ACCESSORS = ['getBigInt64', 'getBigUint64', 'setBigInt64', 'setBigUint64'];

export function harden(): void {
  guardArrays();
  guardStrings();
  guardRegExp();
  guardJsonParse();
  guardArrayFrom();
  guardStringRaw();
  for (let i = 0; i < FUNCTION_PROTOTYPES.length; i++) tameConstructor(FUNCTION_PROTOTYPES[i]!);
  defineProperty($Error, 'prepareStackTrace', {
    value: undefined,
    writable: false,
    enumerable: false,
    configurable: false,
  });
  const dataView = DataViewPrototype as unknown as Record<string, unknown>;
  for (let i = 0; i < BIGINT_ACCESSORS.length; i++) delete dataView[BIGINT_ACCESSORS[i]!];
  for (let i = 0; i < REMOVED_GLOBALS.length; i++) delete G[REMOVED_GLOBALS[i]!];
  guardRegExpProtocol();
  guardArrayBuffer();
}
