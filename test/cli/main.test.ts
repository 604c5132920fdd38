import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from './helpers.ts';

const repo = (file: string) => fileURLToPath(new URL(`../../${file}`, import.meta.url));

describe('rlm with an unknown command', () => {
  it('prints one error line with its code, and exits 2', async () => {
    const r = await cli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("rlm: unknown command 'frobnicate' (rlm --help lists the commands) [BAD_INPUT]\n");
  });

  it('suggests the command one edit away: a letter left out, added, changed or two swapped', async () => {
    for (const [typed, meant] of [
      ['answr', 'answer'],
      ['ingests', 'ingest'],
      ['serch', 'search'],
      ['grap', 'grep'],
      ['rpeair', 'repair'],
    ]) {
      const r = await cli([typed!]);
      expect(r.code, typed).toBe(2);
      expect(r.stderr, typed).toBe(`rlm: unknown command '${typed}'; did you mean '${meant}'? [BAD_INPUT]\n`);
    }
  });
});

describe('rlm help', () => {
  it('prints the usage, or with a command that command’s help', async () => {
    const all = await cli(['help']);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^usage: rlm <command>/);
    const answer = await cli(['help', 'answer']);
    expect(answer.code).toBe(0);
    expect(answer.stdout).toBe((await cli(['answer', '--help'])).stdout);
    expect(answer.stdout).toMatch(/^usage: rlm answer/);
    expect((await cli(['help', 'answr'])).stderr).toContain("did you mean 'answer'?");
  });
});

describe('rlm with a file that is not there', () => {
  it('prints the error line with its code', async () => {
    const r = await cli(['exec', '/nonexistent/x.js']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('rlm: exec: cannot read /nonexistent/x.js (ENOENT) [BAD_INPUT]\n');
  });
});

describe('a command that needs a subcommand, given none', () => {
  it('writes its usage to stderr and exits 2, as rlm does; asked for with --help, to stdout with 0', async () => {
    for (const command of ['store', 'claude']) {
      const none = await cli([command]);
      expect(none.code, command).toBe(2);
      expect(none.stdout, command).toBe('');
      expect(none.stderr, command).toMatch(new RegExp(`^usage: rlm ${command} `));
      const help = await cli([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout).toBe(none.stderr);
    }
  });
});

describe('numeric flags', () => {
  it('take plain decimal integers, not hex or exponents', async () => {
    for (const [flag, value] of [
      ['--max-depth', '0x10'],
      ['--max-iterations', '1e1'],
    ]) {
      const r = await cli([
        'answer',
        'q',
        '--context',
        repo('README.md'),
        '--model',
        `scripted:${repo('examples/schema-version.json')}`,
        flag!,
        value!,
      ]);
      expect(r.code, `${flag} ${value}`).toBe(2);
      expect(r.stderr).toBe(
        `rlm: ${flag} must be an integer >= ${flag === '--max-depth' ? 0 : 1}, got "${value}" [BAD_INPUT]\n`,
      );
    }
    const k = await cli(['search', 'x', '--store', 'nowhere', '-k', '0x10']);
    expect(k.stderr).toBe("rlm: -k must be an integer >= 1, got '0x10' [BAD_INPUT]\n");
  });
});
