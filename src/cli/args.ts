import { type ParseArgsConfig, parseArgs } from 'node:util';
import { parseDecimal } from '../../core/decimal.ts';
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
      args: joinNegativeValues(argv, options),
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

/** A value that reads as a negative number: `-1`, `-2.5`, `-.5`. */
const NEGATIVE_NUMBER = /^-\.?\d/;

/**
 * `argv` with a negative number after a flag that takes a value joined to it (`-k -3` becomes `--k=-3`).
 * parseArgs refuses such a value as ambiguous, so the flag's own check, which says what the flag takes,
 * would never run. No flag is spelled like a number, so no flag is lost.
 */
function joinNegativeValues(argv: string[], options: Options): string[] {
  const takesValue = new Map<string, string>();
  for (const [name, o] of Object.entries(options)) {
    if (o.type !== 'string') continue;
    takesValue.set(`--${name}`, name);
    if (o.short) takesValue.set(`-${o.short}`, name);
  }
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    // After `--` every argument is a positional, as parseArgs reads them.
    if (arg === '--') return [...out, ...argv.slice(i)];
    const name = takesValue.get(arg);
    const next = argv[i + 1];
    if (name !== undefined && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * Parses a non-negative integer flag, or throws BAD_INPUT naming the flag as its help spells it (`-k`,
 * `--n`): the spelling is given, since a one-letter long flag cannot be told from a short one.
 */
export function intFlag(value: string | undefined, flag: `-${string}`, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = parseDecimal(value);
  if (!Number.isSafeInteger(n) || n < min)
    throw new RlmError('BAD_INPUT', `${flag} must be an integer >= ${min}, got '${value}'`);
  return n;
}

/**
 * Tags as given, or BAD_INPUT naming the flag when one is empty or only spaces: it would be stored (or
 * looked for) as a tag no one meant (`--tag ""` showed as `[text a,]`).
 */
export function tagsFlag(tags: string[] | undefined, flag: `--${string}`): string[] | undefined {
  if (tags?.some((t) => t.trim() === ''))
    throw new RlmError('BAD_INPUT', `${flag}: a tag is empty or only spaces, got '${tags.join(',')}'`);
  return tags;
}
