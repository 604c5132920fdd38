/* `print` and `console`: everything they print goes to the block's bounded output (output.ts). */
import { freeze } from './intrinsics.ts';
import { write } from './output.ts';
import { show } from './show.ts';

/** The values separated by spaces (strings as they are, the rest displayed), after `prefix` if any. */
function line(prefix: string, args: readonly unknown[]): string {
  let out = prefix;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    out += (i === 0 && prefix === '' ? '' : ' ') + (typeof a === 'string' ? a : show(a));
  }
  return out;
}

export function print(...args: unknown[]): void {
  write(line('', args) + '\n');
}

function dir(v: unknown): void {
  write(show(v) + '\n');
}

export const consoleObject = freeze({
  log: print,
  info: print,
  debug: print,
  warn: print,
  error: print,
  trace: print,
  dir: dir,
  table: dir,
  assert: function assert(ok: unknown, ...rest: unknown[]): void {
    if (ok) return;
    write(line('Assertion failed', rest) + '\n');
  },
});
