import { type ParseArgsConfig, parseArgs } from 'node:util';
import { RlmError } from '../../core/errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs with rlm's error style: a bad flag is a BAD_INPUT error the CLI turns into exit 2. */
export function parseCommandArgs<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    // Node's messages can span lines and quote oddly; keep its first sentence.
    const message = (err as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, '').split('\n')[0]!;
    throw new RlmError('BAD_INPUT', `${message} (see --help)`);
  }
}

/** Parses a non-negative integer flag, or throws BAD_INPUT naming the flag. */
export function intFlag(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new RlmError(
      'BAD_INPUT',
      `${name.length === 1 ? '-' : '--'}${name} must be an integer >= ${min}, got '${value}'`,
    );
  return n;
}
