/**
 * A small seeded PRNG for the task generators. Benchmarks must be reproducible from a seed alone, so every
 * random choice goes through here, never through `Math.random`.
 */

import { fnv1a } from '../memory/fnv.ts';

/** 32-bit FNV-1a of a string: turns labels like `sniah/8192/3` into independent sub-seeds. */
export function hashString(s: string): number {
  return fnv1a(s);
}

/** A deterministic random source (splitmix32): the same seed always gives the same sequence. */
export class Rng {
  #state: number;

  constructor(seed: number | string) {
    this.#state = (typeof seed === 'string' ? hashString(seed) : seed) >>> 0;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0;
    let z = this.#state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  }

  /** A uniform integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** One element of a non-empty list. */
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[Math.floor(this.next() * xs.length)] as T;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(xs: readonly T[]): T[] {
    const out = xs.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** An index drawn with probability proportional to `weights`. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i] as number;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** An independent generator for a named sub-task, so adding draws in one place never shifts another. */
  fork(label: string): Rng {
    return new Rng(hashString(`${this.#state}:${label}`));
  }
}
