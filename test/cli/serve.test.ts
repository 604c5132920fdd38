/** `rlm serve`'s checks at the start: what would fail every later call is said before serving. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { cli } from './helpers.ts';

const launcher = fileURLToPath(new URL('../mcp/helpers/launch.ts', import.meta.url));

describe('rlm serve at the start', () => {
  it('refuses a --model or --sub-model of no scheme rlm knows, exit 2', async () => {
    for (const flag of ['--model', '--sub-model']) {
      const r = await cli(['serve', flag, 'bogus']);
      expect(r.code, flag).toBe(2);
      expect(r.stderr, flag).toMatch(new RegExp(`^rlm: ${flag}: unknown model spec "bogus"`));
    }
  });

  it('warns of an --allow-path that does not exist, and serves', () => {
    // A real process: stdio serving needs real streams. Its stdin ends at once, and so does the server.
    const r = spawnSync(process.execPath, ['--no-node-snapshot', launcher, 'serve', '--allow-path', 'nope'], {
      cwd: tempDir(),
      input: '',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'rlm serve: warning: --allow-path nope does not exist (yet); calls naming paths under it will fail until it does',
    );
  });
});
