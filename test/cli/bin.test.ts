import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/rlm.js', import.meta.url));

describe('the rlm bin', () => {
  beforeAll(() => {
    // The bin runs the compiled dist/, as an installed package does; build it from the current sources.
    execFileSync(
      process.execPath,
      [
        fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url)),
        '-p',
        'tsconfig.build.json',
      ],
      {
        cwd: ROOT,
        stdio: 'pipe',
      },
    );
  }, 120_000);

  it('starts Node with --no-node-snapshot, as isolated-vm requires', () => {
    expect(readFileSync(BIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env -S node --no-node-snapshot');
  });

  it('runs the README main command from the compiled package', () => {
    const r = spawnSync(
      BIN,
      [
        'answer',
        'Which schema version does the store use?',
        '--context',
        'memory/SCHEMA.md',
        '--model',
        'scripted:examples/schema-version.json',
        '--json',
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ answer: '2', status: 'final' });
  });

  it('prints its version and exits 2 on an unknown command', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(spawnSync(BIN, ['--version'], { encoding: 'utf8' }).stdout).toBe(`${pkg.version}\n`);
    const bad = spawnSync(BIN, ['frobnicate'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unknown command 'frobnicate'");
  });
});
