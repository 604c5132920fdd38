/*
 * The block's output buffer: a bounded head and tail (../output.ts says why both ends), so a flood of
 * prints never grows memory. Mirrored as it fills (mirror.ts).
 */
import { MathCeil, StringSlice } from './intrinsics.ts';
import { mirrorReset, mirrorWrite } from './mirror.ts';

let headMax = 0;
let tailMax = 0;
let markerBefore = '';
let markerAfter = '';

let outHead = '';
let outTail = '';
let outTotal = 0;

/** Sets the session's output limit and the omission marker's parts (from the host's config). */
export function configureOutput(maxOutputChars: number, marker: { before: string; after: string }): void {
  headMax = MathCeil(maxOutputChars / 2);
  tailMax = maxOutputChars - headMax;
  markerBefore = marker.before;
  markerAfter = marker.after;
}

export function write(s: string): void {
  writeBuffer(s);
  mirrorWrite(outHead, headMax, outTail, tailMax, outTotal);
}

function writeBuffer(s: string): void {
  outTotal += s.length;
  if (outHead.length < headMax) {
    const room = headMax - outHead.length;
    if (s.length <= room) {
      outHead += s;
      return;
    }
    outHead += StringSlice(s, 0, room);
    s = StringSlice(s, room);
  }
  outTail += s;
  // Trimmed lazily: a flood of small writes stays amortised O(1) per write.
  if (outTail.length > 2 * tailMax + 4096) outTail = StringSlice(outTail, outTail.length - tailMax);
}

/** What the block printed (head, marker, tail), emptying the buffer. */
export function takeOutput(): string {
  const tail = outTail.length > tailMax ? StringSlice(outTail, outTail.length - tailMax) : outTail;
  const omitted = outTotal - outHead.length - tail.length;
  const text = omitted > 0 ? outHead + markerBefore + omitted + markerAfter + tail : outHead + tail;
  outHead = '';
  outTail = '';
  outTotal = 0;
  mirrorReset();
  return text;
}
