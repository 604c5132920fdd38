/**
 * Prelude part: writes everything the block prints through to the output mirror (../mirror.ts) as
 * it is printed, so the isolate process can still return what a block printed when the block must
 * be killed. Head and tail mirror the output buffer's own (core.ts): the first `headMax` characters
 * in order, then a ring of the last `tailMax`, each at most `MIRROR_CHARS`. Only the part of a write
 * that can survive is copied, so a flood costs no more than the characters kept.
 */
export const MIRROR_SOURCE = String.raw`
const MIRROR_CHARS = 32768;
const mirrorHeader = outputMirror === undefined ? null : new Float64Array(outputMirror, 0, 4);
const mirrorChars = outputMirror === undefined ? null : new Uint16Array(outputMirror, 32, 2 * MIRROR_CHARS);
/** s.charCodeAt(i) through a bound intrinsic: no lookup model code could poison, no allocation. */
const charCodeOf = FunctionPrototypeCall.bind(String.prototype.charCodeAt);

function mirrorReset() {
  if (mirrorHeader === null) return;
  mirrorHeader[1] = 0;
  mirrorHeader[2] = 0;
  mirrorHeader[3] = 0;
}

function mirrorWrite(s) {
  const h = mirrorHeader;
  if (h === null) return;
  const headCap = MathMin(headMax, MIRROR_CHARS);
  const tailCap = MathMin(tailMax, MIRROR_CHARS);
  const n = s.length;
  h[3] += n;
  let i = 0;
  let head = h[1];
  if (head < headCap) {
    const end = MathMin(n, headCap - head);
    for (; i < end; i++) mirrorChars[head++] = charCodeOf(s, i);
    h[1] = head;
    if (i === n) return;
  }
  if (tailCap === 0) return;
  let written = h[2];
  if (n - i > tailCap) {
    written += n - i - tailCap;
    i = n - tailCap;
  }
  let at = written % tailCap;
  for (; i < n; i++) {
    mirrorChars[MIRROR_CHARS + at] = charCodeOf(s, i);
    if (++at === tailCap) at = 0;
    written++;
  }
  h[2] = written;
}
`;
