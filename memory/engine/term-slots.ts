/**
 * Strings numbered by slot, for a set that keeps changing: the link window's vocabulary (./link-window.ts)
 * of about 200k terms, tens of thousands of them replaced with each segment. Slots of removed strings are
 * given again, so arrays by slot stay as long as the most strings held at once.
 *
 * Why not a `Map`: with that churn a Map of 200k strings fills with deleted entries and rebuilds its table
 * every few segments: a new 14 MB table on V8's heap each time, while the old one waits for a full
 * collection. Those rebuilds set the 1 GB ingest's peak RSS, up to 10 MB above the rest of the run
 * (measured with VmHWM at each step of a commit). Here the lookup table is an Int32Array of 4 bytes a
 * bucket, outside V8's heap, and a rebuild allocates only that.
 */
import { RlmError } from '../../core/errors.ts';
import { fnv1a } from '../fnv.ts';
import { grown } from '../grown.ts';

/** A bucket whose string was removed: lookups probe past it, inserts reuse it. */
const REMOVED = -1;
/** Buckets used (live or removed) past which the table is rebuilt. */
const MAX_LOAD = 0.7;

export class TermSlots {
  /** The string of each slot; '' for a free slot. */
  private readonly terms: string[] = [];
  /** The hash of each slot's string. */
  private hashes = new Int32Array(1024);
  private readonly free: number[] = [];
  /** Buckets: slot + 1, 0 for never used, {@link REMOVED}. A power of two long. */
  private table = new Int32Array(2048);
  private live = 0;
  private used = 0;

  /** Strings held. */
  get size(): number {
    return this.live;
  }

  /** The slot of `term`, or -1. */
  get(term: string): number {
    const at = this.find(term, fnv1a(term) | 0);
    return at < 0 ? -1 : this.table[at]! - 1;
  }

  /** The string in `slot` ('' when the slot is free). */
  termAt(slot: number): string {
    return this.terms[slot] ?? '';
  }

  /** The slot of `term`, given one if it has none. */
  add(term: string): number {
    const h = fnv1a(term) | 0;
    const at = this.find(term, h);
    if (at < 0) return this.put(term, h, -at - 1);
    return this.table[at]! - 1;
  }

  /** Gives `term` (hash `h`, not held) a slot, in bucket `at`: never used, or removed. */
  private put(term: string, h: number, at: number): number {
    const slot = this.free.pop() ?? this.terms.length;
    if (slot === this.terms.length) this.terms.push(term);
    else this.terms[slot] = term;
    this.hashes = grown(this.hashes, slot + 1);
    this.hashes[slot] = h;
    if (this.table[at] === 0) this.used++;
    this.table[at] = slot + 1;
    this.live++;
    if (this.used > this.table.length * MAX_LOAD) this.rebuild();
    return slot;
  }

  /** Frees `slot` (held by a string); its number may be given to the next string added. */
  remove(slot: number): void {
    const mask = this.table.length - 1;
    let at = bucketOf(this.hashes[slot]!, mask);
    while (this.table[at] !== slot + 1) {
      if (this.table[at] === 0) throw new RlmError('RUNTIME', `term slots: slot ${slot} is not held`);
      at = (at + 1) & mask;
    }
    this.table[at] = REMOVED;
    this.terms[slot] = '';
    this.free.push(slot);
    this.live--;
  }

  /**
   * The bucket holding `term` (hash `h`); when none does, -1 - the bucket an insert should take (the
   * first removed one on the probe, else the empty one that ended it), so adding probes once.
   */
  private find(term: string, h: number): number {
    const mask = this.table.length - 1;
    let reuse = -1;
    for (let at = bucketOf(h, mask); ; at = (at + 1) & mask) {
      const v = this.table[at]!;
      if (v === 0) return -1 - (reuse < 0 ? at : reuse);
      if (v === REMOVED) {
        if (reuse < 0) reuse = at;
      } else if (this.hashes[v - 1] === h && this.terms[v - 1] === term) return at;
    }
  }

  /** A table with no removed bucket, at most half full. */
  private rebuild(): void {
    let size = 2048;
    while (size * 0.5 < this.live) size *= 2;
    const old = this.table;
    const table = new Int32Array(size);
    const mask = size - 1;
    for (let i = 0; i < old.length; i++) {
      const v = old[i]!;
      if (v <= 0) continue;
      let at = bucketOf(this.hashes[v - 1]!, mask);
      while (table[at] !== 0) at = (at + 1) & mask;
      table[at] = v;
    }
    this.table = table;
    this.used = this.live;
  }
}

/** The first bucket for hash `h`: its high bits folded in, since the mask keeps only the low ones. */
function bucketOf(h: number, mask: number): number {
  return (h ^ (h >>> 16)) & mask;
}
