/*
 * Keeps the output mirror (../mirror.ts) in step with the output buffer of output.ts, so the isolate
 * process can still return what a block printed when the block must be killed. The head is written
 * through as it fills (its size bounds that work per block); the tail is copied on each of the first
 * `MIRROR_EAGER_WRITES` writes of a block, then at most once every `MIRROR_INTERVAL_MS`, so a flood of
 * prints pays a few percent. What a flood printed in its last few milliseconds before a kill can be
 * missing; anything printed before a pause is kept.
 */
import { HEADER_BYTES, MIRROR_CHARS } from '../mirror.ts';
import { $Float64Array, $Uint16Array, charCodeOf, DateNow, MathMin } from './intrinsics.ts';

const MIRROR_EAGER_WRITES = 64;
const MIRROR_INTERVAL_MS = 5;

/** [unused, head chars written, tail chars written, total chars] (layout: ../mirror.ts). */
let mirrorHeader: Float64Array | null = null;
let mirrorChars: Uint16Array | null = null;
let mirrorWrites = 0;
let mirrorLast = 0;

/** Binds the shared buffer the host process reads; without one (tests, no process) nothing is mirrored. */
export function attachMirror(buffer: SharedArrayBuffer | undefined): void {
  if (buffer === undefined) return;
  mirrorHeader = new $Float64Array(buffer, 0, 4);
  mirrorChars = new $Uint16Array(buffer, HEADER_BYTES, 2 * MIRROR_CHARS);
}

export function mirrorReset(): void {
  if (mirrorHeader === null) return;
  mirrorHeader[1] = 0;
  mirrorHeader[2] = 0;
  mirrorHeader[3] = 0;
  mirrorWrites = 0;
}

/** Mirrors the buffer's state after a write: its head, its tail and the total written. */
export function mirrorWrite(
  head: string,
  headMax: number,
  tail: string,
  tailMax: number,
  total: number,
): void {
  const h = mirrorHeader;
  const chars = mirrorChars;
  if (h === null || chars === null) return;
  if (h[1]! < headMax && h[1]! < MIRROR_CHARS) {
    const headEnd = MathMin(head.length, MIRROR_CHARS);
    for (let i = h[1]!; i < headEnd; i++) chars[i] = charCodeOf(head, i);
    h[1] = headEnd;
  }
  if (tail.length > 0) {
    if (mirrorWrites < MIRROR_EAGER_WRITES) mirrorWrites++;
    else if (DateNow() - mirrorLast < MIRROR_INTERVAL_MS) return;
    mirrorLast = DateNow();
    const keep = MathMin(tailMax, MIRROR_CHARS, tail.length);
    const from = tail.length - keep;
    for (let i = 0; i < keep; i++) chars[MIRROR_CHARS + i] = charCodeOf(tail, from + i);
    h[2] = keep;
  }
  h[3] = total;
}
