/*
 * Prelude part: keeps the output mirror (../mirror.ts) in step with the output buffer of core.ts, so
 * the isolate process can still return what a block printed when the block must be killed. The head
 * is written through as it fills (its size bounds that work per block); the tail is copied on each of
 * the first `MIRROR_EAGER_WRITES` writes of a block, then at most once every `MIRROR_INTERVAL_MS`, so a
 * flood of prints pays a few percent. What a flood printed in its last few milliseconds before a kill
 * can be missing; anything printed before a pause is kept.
 */
const MIRROR_CHARS = 32768;
const MIRROR_EAGER_WRITES = 64;
const MIRROR_INTERVAL_MS = 5;
const DateNow = Date.now;
const mirrorHeader = outputMirror === undefined ? null : new Float64Array(outputMirror, 0, 4);
const mirrorChars = outputMirror === undefined ? null : new Uint16Array(outputMirror, 32, 2 * MIRROR_CHARS);
/** s.charCodeAt(i) through a bound intrinsic: no lookup model code could poison. */
const charCodeOf = FunctionPrototypeCall.bind(String.prototype.charCodeAt);
let mirrorWrites = 0;
let mirrorLast = 0;

function mirrorReset() {
  if (mirrorHeader === null) return;
  mirrorHeader[1] = 0;
  mirrorHeader[2] = 0;
  mirrorHeader[3] = 0;
  mirrorWrites = 0;
}

function mirrorWrite() {
  const h = mirrorHeader;
  if (h === null) return;
  if (h[1] < headMax && h[1] < MIRROR_CHARS) {
    const headEnd = MathMin(outHead.length, MIRROR_CHARS);
    for (let i = h[1]; i < headEnd; i++) mirrorChars[i] = charCodeOf(outHead, i);
    h[1] = headEnd;
  }
  if (outTail.length > 0) {
    if (mirrorWrites < MIRROR_EAGER_WRITES) mirrorWrites++;
    else if (DateNow() - mirrorLast < MIRROR_INTERVAL_MS) return;
    mirrorLast = DateNow();
    const keep = MathMin(tailMax, MIRROR_CHARS, outTail.length);
    const from = outTail.length - keep;
    for (let i = 0; i < keep; i++) mirrorChars[MIRROR_CHARS + i] = charCodeOf(outTail, from + i);
    h[2] = keep;
  }
  h[3] = outTotal;
}
