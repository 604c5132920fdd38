import nodeFs, {
  existsSync,
  promises as fs,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processStartTicks } from '../../../core/process.ts';
import { acquireLock, isLeftoverLockFile } from '../../../memory/files/lock.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';
import { runChild, startChild } from '../helpers/child.ts';

const CHILD = fileURLToPath(new URL('../helpers/lock-child.ts', import.meta.url));
const SLOW_CHILD = fileURLToPath(new URL('../helpers/slow-lock-child.ts', import.meta.url));

const run = (args: string[]) => runChild(CHILD, args);

describe('the write lock', () => {
  it('is never seen half-written: a live owner still writing its lock is not taken for a dead one', async () => {
    const dir = tempDir();
    const child = startChild(SLOW_CHILD, [dir]);
    let exited = false;
    void child.done.then(() => {
      exited = true;
    });
    const lockFile = path.join(dir, 'write.lock');
    // From the moment the lock's name exists (the child is still in its slowed-down writes).
    while (!existsSync(lockFile)) {
      if (exited) throw new Error(`the child ended before taking the lock: ${(await child.done).err}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const err = await caught(acquireLock(dir));
    expect(err.code).toBe('STORE_LOCKED');
    expect(err.message).toContain('(slow-writer)');
    child.stdin.end();
    expect(await child.done).toMatchObject({ code: 0, out: 'held\nreleased\n' });
  });

  it('never has two holders, however often several processes take it at once', async () => {
    const dir = tempDir();
    const log = path.join(dir, 'holders.log');
    const results = await Promise.all(['a', 'b', 'c', 'd'].map(() => run([dir, log, '150'])));
    for (const r of results) expect(r, r.err).toMatchObject({ code: 0, out: 'done\n' });
    const lines = (await fs.readFile(log, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(4 * 150 * 2);
    // Strictly enter A, exit A, enter B, exit B…: a second holder would show up inside a pair.
    for (let i = 0; i < lines.length; i += 2) {
      const holder = lines[i]!.split(' ')[1];
      expect([lines[i], lines[i + 1]], `line ${i + 1}`).toEqual([`enter ${holder}`, `exit ${holder}`]);
    }
  });

  it('names the files a killed lock taker leaves, only once their process is gone', () => {
    expect(isLeftoverLockFile(`write.lock.${process.pid}-1a2b3c4d`)).toBe(false);
    expect(isLeftoverLockFile('write.lock.999999999-1a2b3c4d')).toBe(true);
    expect(isLeftoverLockFile('write.lock.stale-999999999-3')).toBe(true);
    expect(isLeftoverLockFile('write.lock')).toBe(false);
    expect(isLeftoverLockFile('documents-00000001.json')).toBe(false);
  });

  // Start ticks come from /proc: elsewhere a lock is judged by its pid alone.
  it.runIf(process.platform === 'linux')(
    'takes over a lock whose pid now belongs to a process started after it was taken (a pid given again)',
    async () => {
      const dir = tempDir();
      const lockFile = path.join(dir, 'write.lock');
      const ticks = processStartTicks(process.pid)!;
      expect(ticks).toBeGreaterThan(0);
      const held = (startTicks: number) =>
        writeFileSync(
          lockFile,
          JSON.stringify({
            pid: process.pid,
            host: os.hostname(),
            startedAt: new Date().toISOString(),
            startTicks,
          }),
        );
      // This pid runs, but not the process that took the lock: that one started at other ticks.
      held(ticks - 1);
      const lock = await acquireLock(dir, { command: 'after' });
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({
        command: 'after',
        startTicks: ticks,
      });
      await lock.release();
      // Taken by this very process: a live owner, waited for.
      held(ticks);
      expect((await caught(acquireLock(dir))).code).toBe('STORE_LOCKED');
    },
  );

  it('gives an unreadable lock a grace period: young, it may be being written; old, it is damaged', async () => {
    const dir = tempDir();
    const lockFile = path.join(dir, 'write.lock');
    writeFileSync(lockFile, '');
    const young = await caught(acquireLock(dir));
    expect(young.code).toBe('STORE_LOCKED');
    expect(young.message).toContain('a writer still writing its lock file');
    // The way out names the file to remove.
    expect(young.message).toContain(`or remove the lock file ${lockFile} if that process is gone`);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFile, old, old);
    const lock = await acquireLock(dir, { command: 'after' });
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, command: 'after' });
    await lock.release();
    expect(existsSync(lockFile)).toBe(false);
  });

  it('works on a filesystem without hard links', async () => {
    const dir = tempDir();
    const link = nodeFs.linkSync;
    nodeFs.linkSync = () => {
      throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' });
    };
    syncBuiltinESMExports();
    try {
      const lock = await acquireLock(dir, { command: 'no links' });
      expect((await caught(acquireLock(dir))).message).toContain('(no links)');
      await lock.release();
      await (await acquireLock(dir)).release();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      nodeFs.linkSync = link;
      syncBuiltinESMExports();
    }
  });
});
