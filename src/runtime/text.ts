/** Small text helpers of the loop. */

/** The first line of `s`, cut to `max` characters with an ellipsis. */
export function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 1))}…` : flat;
}
