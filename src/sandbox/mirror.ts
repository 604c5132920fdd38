/**
 * The output mirror: a small SharedArrayBuffer the isolate copies its output into as it prints
 * (prelude/mirror.ts, which takes this layout from here), shared with the isolate process's main thread. When a block has to be stopped
 * by killing its process (V8 will not yield), the process reads the mirror first, so the block's
 * result keeps what it printed before the stop.
 *
 * Layout: four float64 — unused, head length, tail length, total characters printed — then the
 * head's UTF-16 code units and the tail's, `MIRROR_CHARS` each.
 */
import { omittedMarker } from './output.ts';

/** Characters kept per end (head, tail). */
export const MIRROR_CHARS = 32_768;
/** Bytes before the characters: the four float64 of the header. */
export const HEADER_BYTES = 32;
export const MIRROR_BYTES = HEADER_BYTES + 4 * MIRROR_CHARS;

function decode(units: Uint16Array): string {
  let out = '';
  for (let i = 0; i < units.length; i += 8192) out += String.fromCharCode(...units.subarray(i, i + 8192));
  return out;
}

/** What the mirror holds, as the block's result would show it (head, marker, tail). */
export function readMirror(sab: SharedArrayBuffer): string {
  const header = new Float64Array(sab, 0, 4);
  const chars = new Uint16Array(sab, HEADER_BYTES, 2 * MIRROR_CHARS).slice();
  const clamp = (n: number | undefined) => Math.min(MIRROR_CHARS, Math.max(0, Math.floor(n ?? 0)));
  const head = decode(chars.subarray(0, clamp(header[1])));
  const tail = decode(chars.subarray(MIRROR_CHARS, MIRROR_CHARS + clamp(header[2])));
  const omitted = Math.floor((header[3] ?? 0) - head.length - tail.length);
  return omitted > 0 ? head + omittedMarker(omitted) + tail : head + tail;
}
