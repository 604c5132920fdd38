/** A count with its noun, singular for exactly one: `1 iteration`, `2 iterations`, `0 iterations`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
