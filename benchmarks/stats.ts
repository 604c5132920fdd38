/** Small statistics shared by the benchmark runners and reports (one copy, so every figure means the same). */

/** Middle value of `xs` (the mean of the two middle ones for an even count); 0 for none. `xs` is not changed. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
