import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeSession } from '../../benchmarks/claude-corpus.ts';

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
    expect(JSON.parse(r.stdout)).toMatchObject({ answer: '1', status: 'final' });
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

  it('runs the Claude Code hook from the compiled package: silent, exit 0, imported in the background', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlm-bin-hook-'));
    try {
      const file = writeSession(join(dir, 'projects'), '/home/x/proj', {
        session: 's1',
        cwd: '/home/x/proj',
        exchanges: [
          { user: 'how do we deploy', assistant: 'with the vault token', time: '2026-01-01T00:00:00Z' },
        ],
      });
      const store = join(dir, 'store');
      const r = spawnSync(
        BIN,
        ['claude', 'ingest', '--hook', '--store', store, '--log', join(dir, 'hook.log')],
        {
          input: JSON.stringify({ transcript_path: file, hook_event_name: 'SessionEnd' }),
          encoding: 'utf8',
        },
      );
      expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
      let out = '';
      for (let i = 0; i < 150 && !out.includes('vault token'); i++) {
        await new Promise((done) => setTimeout(done, 200));
        if (existsSync(join(store, 'rlm-store.json')))
          out = spawnSync(BIN, ['claude', 'recall', 'deploy', '--store', store], { encoding: 'utf8' }).stdout;
      }
      expect(out).toContain('User: how do we deploy');
      expect(existsSync(join(dir, 'hook.log'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
