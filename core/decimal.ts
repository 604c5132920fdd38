/**
 * Numbers as people type them in a flag or an environment variable. `Number()` also reads `0x10`, `0b1`,
 * `1e1` and `' 12 '`, so `--max-depth 0x10` ran 16 deep: a value that does not look like the number it
 * means is refused rather than guessed at.
 */

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * `text` as a number when it is a plain decimal, else NaN: `12`, `-3`, and with `fractional` also
 * `0.5` and `.5`. Hex, binary, octal, exponents, `Infinity`, spaces and the empty string are NaN.
 */
export function parseDecimal(text: string, fractional = false): number {
  return (fractional ? DECIMAL : INTEGER).test(text) ? Number(text) : Number.NaN;
}
