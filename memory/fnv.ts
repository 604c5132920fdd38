/** 32-bit FNV-1a, the one string hash of the store's tables and hashed features. */

export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units of `text[start, end)`, from `seed`; unsigned, no substring made. */
export function fnv1a(text: string, start = 0, end = text.length, seed = FNV_OFFSET): number {
  let h = seed;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}
