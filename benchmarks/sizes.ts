/** Parsing context sizes (`8k,32k,128k,1m`) and lists of names for the CLI and the harness. */
import { RlmError } from '../core/errors.ts';

/** Smallest and largest sizes a suite generates. */
const MIN_SIZE = 1024;
const MAX_SIZE = 16 * 1024 * 1024;

/**
 * One size in tokens: `8k` = 8,192 and `1m` = 1,048,576 (binary, like the paper's 2^13…2^20 axes), or a
 * plain integer. BAD_INPUT for anything else or out of range.
 */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!m) throw new RlmError('BAD_INPUT', `bad size '${text}': use a token count like 8k, 32k, 1m or 20000`);
  const unit = (m[2] as string).toLowerCase();
  const n = Math.round(Number(m[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1));
  if (n < MIN_SIZE || n > MAX_SIZE)
    throw new RlmError('BAD_INPUT', `size '${text}' is out of range (1k to 16m tokens)`);
  return n;
}

/** A comma-separated size list, sorted ascending and deduplicated. */
export function parseSizes(text: string): number[] {
  return [...new Set(splitList(text).map(parseSize))].sort((a, b) => a - b);
}

/** Comma-separated names, trimmed, empty items dropped. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Checks names against the allowed ones (order kept, duplicates dropped); BAD_INPUT names the bad one. */
export function pickNames<T extends string>(
  names: readonly string[],
  allowed: readonly T[],
  what: string,
): T[] {
  const out: T[] = [];
  for (const n of names) {
    if (!(allowed as readonly string[]).includes(n)) {
      throw new RlmError('BAD_INPUT', `unknown ${what} '${n}': use ${allowed.join(', ')}`);
    }
    if (!out.includes(n as T)) out.push(n as T);
  }
  return out;
}
