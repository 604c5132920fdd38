import nodeFs, { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock } from '../../../memory/files/lock.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';

describe('the write lock under stale-lock recovery races', () => {
  it('never has two holders when two takers recover the same stale lock (inode numbers are reused)', async () => {
    const dir = tempDir();
    const lockFile = path.join(dir, 'write.lock');
    const dead = { pid: 999999999, host: os.hostname(), startedAt: new Date(0).toISOString() };
    writeFileSync(lockFile, JSON.stringify(dead));
    const staleIno = statSync(lockFile).ino;

    // Taker B reads the stale lock, then is held up (descheduled) before acting on what it read.
    const readFile = nodeFs.promises.readFile;
    let go!: () => void;
    const held = new Promise<void>((r) => {
      go = r;
    });
    let bRead!: () => void;
    const bHasRead = new Promise<void>((r) => {
      bRead = r;
    });
    let first = true;
    nodeFs.promises.readFile = (async (...args: Parameters<typeof readFile>) => {
      const text = await readFile(...args);
      if (first && String(args[0]) === lockFile) {
        first = false;
        bRead();
        await held;
      }
      return text;
    }) as typeof readFile;
    try {
      const b = acquireLock(dir, { command: 'B' });
      await bHasRead;
      // Meanwhile taker A recovers the same stale lock and takes the lock.
      const a = await acquireLock(dir, { command: 'A' });
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ command: 'A' });
      // ext4 hands the freed inode straight back: A's fresh lock has the stale lock's inode number.
      const reused = statSync(lockFile).ino === staleIno;
      go();
      const outcome = await b.then(
        async (lock) => {
          await lock.release();
          return 'B also holds the lock';
        },
        (err: { code?: string }) => err.code,
      );
      expect({ reused, outcome }).toMatchObject({ outcome: 'STORE_LOCKED' });
      await a.release();
    } finally {
      nodeFs.promises.readFile = readFile;
      go();
    }
  });
  it('recovers a stale lock one process at a time, and clears a break lock left by a killed recoverer', async () => {
    const dir = tempDir();
    const lockFile = path.join(dir, 'write.lock');
    const breaker = path.join(dir, 'write.lock.break');
    const dead = { pid: 999999999, host: os.hostname(), startedAt: new Date(0).toISOString() };
    writeFileSync(lockFile, JSON.stringify(dead));
    // Another process is recovering the stale lock right now: wait for it, do not take it over.
    writeFileSync(breaker, JSON.stringify({ ...dead, pid: process.pid }));
    expect((await caught(acquireLock(dir))).code).toBe('STORE_LOCKED');
    expect(readFileSync(lockFile, 'utf8')).toBe(JSON.stringify(dead));
    // That recoverer was killed: its break lock grows old and is cleared, and the stale lock goes.
    const old = new Date(Date.now() - 60_000);
    utimesSync(breaker, old, old);
    const lock = await acquireLock(dir, { command: 'after' });
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, command: 'after' });
    await lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});
