import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionText } from '../../benchmarks/claude-corpus.ts';
import { assertSessionFile } from '../../src/claude/files.ts';
import { caught } from '../helpers/errors.ts';
import { tempDir } from '../helpers/temp.ts';

describe('assertSessionFile', () => {
  it('accepts a session, and a file whose only record comes after lines that are not', async () => {
    const dir = tempDir('rlm-claude-files-');
    const session = join(dir, 's.jsonl');
    writeFileSync(
      session,
      sessionText({
        session: 's',
        exchanges: [{ user: 'hi', assistant: 'hello', time: '2026-03-02T10:00:00.000Z' }],
      }),
    );
    await expect(assertSessionFile(session)).resolves.toBeUndefined();
    const late = join(dir, 'late.jsonl');
    writeFileSync(late, 'not json\n["an array"]\n{"no":"type"}\n{"type":"summary","summary":"x"}\n');
    await expect(assertSessionFile(late)).resolves.toBeUndefined();
    // A line of a type the reference does not list is a record when it names its session.
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, '{"type":"attachment","sessionId":"s"}\n');
    await expect(assertSessionFile(other)).resolves.toBeUndefined();
  });

  it('refuses a file with no session record, a folder and a missing file, as BAD_INPUT', async () => {
    const dir = tempDir('rlm-claude-files-');
    const passwd = join(dir, 'passwd');
    writeFileSync(
      passwd,
      'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n',
    );
    const jsonl = join(dir, 'log.jsonl');
    writeFileSync(jsonl, '{"level":"info","msg":"started"}\n{"type":"request","path":"/"}\n42\n');
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    for (const file of [passwd, jsonl, empty]) {
      const err = await caught(assertSessionFile(file));
      expect(err.code).toBe('BAD_INPUT');
      expect(err.message).toBe(
        `${file} is not a Claude Code session file: none of its lines is a session record`,
      );
    }
    const folder = join(dir, 'folder.jsonl');
    mkdirSync(folder);
    expect(await caught(assertSessionFile(folder))).toMatchObject({
      code: 'BAD_INPUT',
      message: `${folder} is not a file`,
    });
    expect(await caught(assertSessionFile(join(dir, 'gone.jsonl')))).toMatchObject({
      code: 'BAD_INPUT',
      message: `cannot read ${join(dir, 'gone.jsonl')}: ENOENT`,
    });
  });
});
