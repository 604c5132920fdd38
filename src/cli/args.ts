import { type ParseArgsConfig, parseArgs } from 'node:util';
import { RlmError } from '../../core/errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The flags the last parse declared, long and short: the help tests compare them with `--help`. */
let declared: string[] | null = null;

/**
 * The flags (`--name`, and `-x` for a short form) the last {@link parseCommandArgs} call accepted, or null
 * when none ran since the last call of this function.
 */
export function takeDeclaredFlags(): readonly string[] | null {
  const flags = declared;
  declared = null;
  return flags;
}

/** parseArgs with rlm's error style: a bad flag is a BAD_INPUT error the CLI turns into exit 2. */
export function parseCommandArgs<O extends Options>(argv: string[], options: O) {
  declared = Object.entries(options).flatMap(([name, o]) => [
    `--${name}`,
    ...(o.short ? [`-${o.short}`] : []),
  ]);
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
