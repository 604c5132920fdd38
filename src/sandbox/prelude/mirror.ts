/**
 * Prelude part: keeps the output mirror (../mirror.ts) in step with the output buffer of core.ts, so
 * the isolate process can still return what a block printed when the block must be killed. Synced on
 * the first writes of a block, then at most every `MIRROR_INTERVAL_MS`, and before the guarded
 * built-ins that can run long in one step (harden.ts calls `mirrorSync`).
 */
export const MIRROR_SOURCE = String.raw`
const MIRROR_CHARS = 32768;
const MIRROR_EAGER_WRITES = 64;
const MIRROR_INTERVAL_MS = 10;
const DateNow = Date.now;
const mirrorHeader = outputMirror === undefined ? null : new Float64Array(outputMirror, 0, 4);
const mirrorChars = outputMirror === undefined ? null : new Uint16Array(outputMirror, 32, 2 * MIRROR_CHARS);
let mirrorHead = 0;
let mirrorWrites = 0;
let mirrorLast = 0;
let mirrorDirty = false;

function mirrorReset() {
  if (mirrorHeader === null) return;
  mirrorHeader[0] += 1;
  mirrorHeader[1] = 0;
  mirrorHeader[2] = 0;
  mirrorHeader[3] = 0;
  mirrorHeader[0] += 1;
  mirrorHead = 0;
  mirrorWrites = 0;
  mirrorDirty = false;
}

function mirrorNote() {
  if (mirrorHeader === null) return;
  mirrorDirty = true;
  if (mirrorWrites < MIRROR_EAGER_WRITES) {
    mirrorWrites++;
    mirrorSync();
  } else if (DateNow() - mirrorLast >= MIRROR_INTERVAL_MS) mirrorSync();
}

function mirrorSync() {
  if (!mirrorDirty || mirrorHeader === null) return;
  mirrorDirty = false;
  mirrorLast = DateNow();
  const h = mirrorHeader;
  h[0] += 1;
  const headEnd = MathMin(outHead.length, MIRROR_CHARS);
  for (let i = mirrorHead; i < headEnd; i++) mirrorChars[i] = StringCharCodeAt(outHead, i);
  mirrorHead = headEnd;
  let tail = outTail.length > tailMax ? StringSlice(outTail, outTail.length - tailMax) : outTail;
  if (tail.length > MIRROR_CHARS) tail = StringSlice(tail, tail.length - MIRROR_CHARS);
  for (let i = 0; i < tail.length; i++) mirrorChars[MIRROR_CHARS + i] = StringCharCodeAt(tail, i);
  h[1] = headEnd;
  h[2] = tail.length;
  h[3] = outTotal;
  h[0] += 1;
}
`;
