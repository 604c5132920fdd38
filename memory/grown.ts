/** Growth of the Int32Arrays that the store's builders fill as they go (postings, slots, chunk ends). */

/** `a` if it holds `need` elements, else a copy of it at least twice as long. */
export function grown(a: Int32Array<ArrayBuffer>, need: number): Int32Array<ArrayBuffer> {
  if (need <= a.length) return a;
  const next = new Int32Array(Math.max(need, a.length * 2));
  next.set(a);
  return next;
}
