/**
 * Output kept per block: the head and the tail of what the block printed, around a marker saying how
 * much was dropped. The model usually needs both ends — the first lines show what it asked for, the
 * last ones how it ended — and an error or FINAL printed last must survive a flood.
 *
 * The isolate keeps its own bounded head/tail buffer (prelude/output.ts) so a flood never grows memory;
 * this module is the host-side guarantee applied to whatever comes out, and the one place that defines
 * the marker's wording.
 */

/** Text placed between head and tail; `omitted` counts dropped characters. */
export function omittedMarker(omitted: number): string {
  return `\n… [${omitted} characters of output omitted] …\n`;
}

/** Marker parts for the isolate, which builds the same marker without importing this module. */
export const MARKER_PARTS = { before: '\n… [', after: ' characters of output omitted] …\n' } as const;

/**
 * Keeps at most `max` characters of `text`: the first half and the last half, joined by the marker.
 * Text within the limit is returned unchanged.
 */
export function truncateOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.ceil(max / 2);
  const tail = max - head;
  const omitted = text.length - head - tail;
  return text.slice(0, head) + omittedMarker(omitted) + (tail > 0 ? text.slice(text.length - tail) : '');
}
