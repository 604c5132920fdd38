/* Checks of the helpers' arguments: a wrong type is the model's mistake, reported as a TypeError naming it. */
import { $TypeError, MathFloor, NumberIsFinite } from './intrinsics.ts';

/** A string argument, or a TypeError naming it. */
export function stringArg(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new $TypeError(what + ' must be a string');
  return v;
}

/** An optional integer argument: `fallback` when absent, a TypeError naming it when not a finite number. */
export function intArg(v: unknown, fallback: number, name: string, fn: string): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !NumberIsFinite(v))
    throw new $TypeError(fn + ': ' + name + ' must be a number');
  return MathFloor(v);
}
