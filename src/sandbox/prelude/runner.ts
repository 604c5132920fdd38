/*
 * The entry points the host drives: `runBlock`, `collect` and `readVar`, and how their results leave
 * the isolate.
 *
 * Shields. When a call into the isolate returns, isolated-vm looks at the promises rejected without a
 * handler during it and copies the reason of the first one to the host, reading its message, stack and
 * name — outside the CPU limit. A model's reason with a looping getter would run unbounded there, and
 * two in a row outlive even disposing the isolate (the first swallows the termination). So every entry
 * point first rejects a promise of its own, whose reason has no prototype and only data properties:
 * being first, it is the one copied, and the model's rejections are never read. Its message carries
 * the entry's result ("=" + JSON) once there is one; the host reads results from there (../isolate.ts).
 * A few recent shields stay referenced: an entry stopped by the CPU limit skips that step, and the
 * next call's copy then finds the older shield first.
 */

import { resetGrepNotice } from './context-helpers.ts';
import { takeGrepRunning } from './context-text.ts';
import { encode } from './encode.ts';
import { answerText, clearFinal, currentFinal } from './final.ts';
import {
  $Promise,
  defineProperty,
  descriptor,
  freeze,
  G,
  hasOwn,
  jsonParse,
  ObjectCreate,
  PromiseReject,
  PromiseThen,
  ReflectApply,
  StringCharCodeAt,
  StringIndexOf,
  StringSlice,
} from './intrinsics.ts';
import { takeOutput, write } from './output.ts';
import { show } from './show.ts';
import { resetSubCallNotices } from './sub-calls.ts';

/** An error as the host receives it: name and message clipped, where the model's code was. */
interface BlockError {
  name: string;
  message: string;
  line: number;
  column: number;
}

/** A block's result (../outcome.ts reads it). */
interface BlockResult {
  stdout: string;
  final: string | null;
  error: BlockError | null;
  inGrep: boolean;
}

/** An error is a line for the model, not a channel around the output limit. */
const ERROR_NAME_MAX = 200;
const ERROR_MESSAGE_MAX = 2000;

function clipText(s: string, max: number): string {
  return s.length <= max ? s : StringSlice(s, 0, max) + '… (' + (s.length - max) + ' more characters)';
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function describeError(e: unknown, file: string): BlockError {
  let name = 'Error';
  let message = '';
  let stack = '';
  if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
    const thrown = e as { name?: unknown; message?: unknown; stack?: unknown };
    try {
      const n = thrown.name;
      if (typeof n === 'string') name = n;
    } catch {}
    try {
      const m = thrown.message;
      if (typeof m === 'string') message = m;
    } catch {}
    try {
      const s = thrown.stack;
      if (typeof s === 'string') stack = s;
    } catch {}
    if (message === '' && stack === '') message = show(e);
  } else {
    name = 'Uncaught';
    message = show(e);
  }
  const error: BlockError = {
    name: clipText(name, ERROR_NAME_MAX),
    message: clipText(message, ERROR_MESSAGE_MAX),
    line: 0,
    column: 0,
  };
  // The first frame in this block's file is where the model's code was when it failed.
  const at = StringIndexOf(stack, file + ':');
  if (at !== -1) {
    let i = at + file.length + 1;
    let line = 0;
    let column = 0;
    while (i < stack.length && isDigit(StringCharCodeAt(stack, i)))
      line = line * 10 + StringCharCodeAt(stack, i++) - 48;
    if (StringCharCodeAt(stack, i) === 58) {
      i++;
      while (i < stack.length && isDigit(StringCharCodeAt(stack, i)))
        column = column * 10 + StringCharCodeAt(stack, i++) - 48;
    }
    error.line = line;
    error.column = column;
  }
  return error;
}

const SHIELD_NAME = 'RlmShield';
const SHIELD_SLOTS = 4;
interface ShieldReason {
  name: string;
  message: string;
  stack: string;
}
const shieldPromises: (Promise<never> | null)[] = [null, null, null, null];
const shieldReasons: (ShieldReason | null)[] = [null, null, null, null];
let shieldNext = 0;

function shieldOpen(): void {
  const reason = ObjectCreate(null) as ShieldReason;
  reason.name = SHIELD_NAME;
  reason.message = 'pending';
  reason.stack = '';
  shieldReasons[shieldNext] = reason;
  shieldPromises[shieldNext] = ReflectApply(PromiseReject, $Promise, [reason]) as Promise<never>;
  shieldNext = (shieldNext + 1) % SHIELD_SLOTS;
}

function shieldDeliver(text: string): string {
  for (let i = 0; i < SHIELD_SLOTS; i++) {
    const reason = shieldReasons[i];
    if (reason !== null && reason !== undefined) reason.message = '=' + text;
  }
  return text;
}

/** Encoded once, while the built-ins are pristine: what goes back when a result cannot be encoded. */
const TOO_LARGE = encode({
  stdout: '',
  final: null,
  error: {
    name: 'RangeError',
    message: 'the block result is too large to return (a huge FINAL answer?)',
    line: 0,
    column: 0,
  },
  inGrep: false,
});

/**
 * Encodes and delivers an entry's result. Never throws: an exception leaving an entry point would be
 * copied by isolated-vm, stack included, and its stack text is built from prototypes model code owns.
 */
function deliver(result: unknown, fallback: string): string {
  try {
    return shieldDeliver(encode(result));
  } catch {
    return shieldDeliver(fallback);
  }
}

/** The last finished block's result, for when the host asks again (after the CPU limit stopped it). */
let lastResult: BlockResult | null = null;
/** Counts blocks, so a stale block's settlement is ignored. */
let blockSeq = 0;
const VAR_DESCRIPTOR = freeze(descriptor(undefined, true, true, false));
const INERT_CONSTRUCTOR = freeze(descriptor(undefined, false, false, false));

function finishBlock(seq: number, failed: boolean, outcome: unknown, file: string): void {
  if (seq !== blockSeq || lastResult !== null) return;
  let error: BlockError | null = null;
  try {
    if (failed) error = describeError(outcome, file);
    else if (outcome !== undefined) write(show(outcome) + '\n');
  } catch {
    error = { name: 'Error', message: 'the block result could not be shown', line: 0, column: 0 };
  }
  lastResult = { stdout: takeOutput(), final: currentFinal(), error: error, inGrep: false };
  deliver(lastResult, TOO_LARGE);
}

/**
 * Runs one block: fn is the rewritten block (an async function of the global object), names the
 * JSON list of names it declares. Returns nothing: the result reaches the host through the shield, as
 * soon as the block settles — within this call, as everything a block awaits settles in its microtasks
 * (host calls are synchronous). A block still pending when the call returns never settles.
 */
export function runBlock(fn: (global: unknown) => Promise<unknown>, file: string, names: string): void {
  shieldOpen();
  const seq = ++blockSeq;
  try {
    takeOutput();
    clearFinal();
    takeGrepRunning();
    resetGrepNotice();
    resetSubCallNotices();
    lastResult = null;
    // What a script-level var does, done here: the names become global properties, values kept.
    const list = jsonParse(names) as string[];
    for (let i = 0; i < list.length; i++) {
      const name = list[i]!;
      if (!hasOwn(G, name)) defineProperty(G, name, VAR_DESCRIPTOR);
    }
    const p = ReflectApply(fn, G, [G]);
    // An own constructor of undefined makes then() use the intrinsic Promise instead of asking model
    // code (a getter on Promise.prototype.constructor); the captured then ignores a poisoned one.
    defineProperty(p, 'constructor', INERT_CONSTRUCTOR);
    ReflectApply(PromiseThen, p, [
      (value: unknown) => {
        finishBlock(seq, false, value, file);
      },
      (e: unknown) => {
        finishBlock(seq, true, e, file);
      },
    ]);
  } catch (e) {
    finishBlock(seq, true, e, file);
  }
}

/** What a block left behind when its result did not reach the host (CPU limit), or a flush. */
export function collect(): string {
  shieldOpen();
  const inGrep = takeGrepRunning();
  let result: BlockResult | string = TOO_LARGE;
  try {
    result =
      lastResult !== null ? lastResult : { stdout: takeOutput(), final: currentFinal(), error: null, inGrep };
  } catch {}
  lastResult = null;
  return typeof result === 'string' ? shieldDeliver(result) : deliver(result, TOO_LARGE);
}

const NOT_FOUND = encode({ found: false, value: null });

export function readVar(name: unknown): string {
  shieldOpen();
  try {
    // A getter that throws, or loops until the CPU limit: no value. Nothing the model threw may reach
    // isolated-vm's copy.
    if (typeof name === 'string' && hasOwn(G, name))
      return deliver({ found: true, value: answerText(G[name]) }, NOT_FOUND);
  } catch {}
  return shieldDeliver(NOT_FOUND);
}
