import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { encodeProject, sessionText, writeSession } from '../../benchmarks/claude-corpus.ts';
import { ChunkStore } from '../../memory/files/store.ts';
import { tempDir } from '../helpers/temp.ts';

const WORKER = fileURLToPath(new URL('../../src/claude/hook-worker.ts', import.meta.url));

/** Runs the hook's background import as the hook starts it, to its end. */
async function work(file: string, store: string, log: string): Promise<void> {
  await promisify(execFile)(process.execPath, [WORKER, file, store, log]);
}

describe('the hook worker', () => {
  it('imports the session with its subagent runs', async () => {
    const dir = tempDir('rlm-hook-worker-');
    const projects = join(dir, 'projects');
    const file = writeSession(projects, '/srv/app', {
      session: 'sess-a',
      cwd: '/srv/app',
      exchanges: [
        {
          user: 'Why does the build fail?',
          assistant: 'A missing import.',
          time: '2026-03-02T10:00:00.000Z',
        },
      ],
    });
    const runs = join(projects, encodeProject('/srv/app'), 'sess-a', 'subagents');
    mkdirSync(runs, { recursive: true });
    writeFileSync(
      join(runs, 'agent-42.jsonl'),
      sessionText({
        session: 'sess-a',
        cwd: '/srv/app',
        exchanges: [
          { user: 'Find the zebrafish import', assistant: 'zebrafish.ts', time: '2026-03-02T10:05:00.000Z' },
        ],
      }),
    );
    const store = join(dir, 'store');
    const log = join(dir, 'hook.log');
    await work(file, store, log);
    expect(existsSync(log)).toBe(false);
    const s = await ChunkStore.open(store);
    try {
      expect(
        s
          .documents()
          .map((d) => d.meta?.agent ?? null)
          .sort(),
      ).toEqual(['42', null]);
    } finally {
      await s.close();
    }
  });

  it('refuses a file that is not a session: one line in the log, no store', async () => {
    const dir = tempDir('rlm-hook-worker-');
    const file = join(dir, 'passwd.jsonl');
    writeFileSync(file, `${'root:x:0:0:root:/root:/bin/bash\n'.repeat(25)}`);
    const store = join(dir, 'store');
    const log = join(dir, 'hook.log');
    await work(file, store, log);
    const lines = readFileSync(log, 'utf8').split('\n');
    expect(lines.map((l) => l.replace(/^\S+Z /, ''))).toEqual([
      `error: importing ${file} into ${store}: ${file} is not a Claude Code session file: none of its lines is a session record [BAD_INPUT]`,
      '',
    ]);
    expect(existsSync(store)).toBe(false);
  });
});
