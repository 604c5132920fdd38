import { describe, expect, it } from 'vitest';
import { intFlag, parseCommandArgs } from '../../src/cli/args.ts';
import { thrown } from '../helpers/errors.ts';

const OPTIONS = {
  k: { type: 'string', short: 'k' },
  'max-depth': { type: 'string' },
  json: { type: 'boolean' },
} as const;

describe('parseCommandArgs', () => {
  it('gives a flag that takes a value a negative number after it, so the flag’s own check sees it', () => {
    const { values, positionals } = parseCommandArgs(
      ['q', '-k', '-3', '--max-depth', '-1.5', '--json'],
      OPTIONS,
    );
    expect(values).toMatchObject({ k: '-3', 'max-depth': '-1.5', json: true });
    expect(positionals).toEqual(['q']);
    expect(parseCommandArgs(['--k', '-.5'], OPTIONS).values.k).toBe('-.5');
  });

  it('still refuses a flag as a value, and reads everything after -- as positionals', () => {
    const ambiguous = thrown(() => parseCommandArgs(['-k', '--json'], OPTIONS));
    expect(ambiguous).toMatchObject({ code: 'BAD_INPUT' });
    expect(ambiguous.message).toMatch(/^Option '-k' argument is ambiguous.* \(see --help\)$/);
    expect(parseCommandArgs(['--', '-k', '-3'], OPTIONS).positionals).toEqual(['-k', '-3']);
    // A boolean flag takes no value: the number stays a positional, where parseArgs puts it.
    expect(thrown(() => parseCommandArgs(['--json', '-3'], OPTIONS)).message).toMatch(/Unknown option '-3'/);
  });
});

describe('intFlag', () => {
  it('names the flag as its help spells it', () => {
    expect(thrown(() => intFlag('0', '--n', 1)).message).toBe("--n must be an integer >= 1, got '0'");
    expect(thrown(() => intFlag('-3', '-k', 1)).message).toBe("-k must be an integer >= 1, got '-3'");
    expect(intFlag('7', '--n', 1)).toBe(7);
    expect(intFlag(undefined, '--n', 1)).toBeUndefined();
  });

  it('takes plain decimal integers only: not hex, binary, exponents or fractions', () => {
    for (const value of ['0x10', '0b1', '0o7', '1e1', '1.5', '1.0', 'Infinity', ' 7', '', '+'])
      expect(thrown(() => intFlag(value, '-k', 0)).message, value).toBe(
        `-k must be an integer >= 0, got '${value}'`,
      );
    expect(intFlag('010', '-k', 0)).toBe(10);
    expect(intFlag('+3', '-k', 0)).toBe(3);
  });
});
