import nodeFs, { readFileSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock } from '../../memory/lock.ts';
import { tempDir } from './helpers/corpus.ts';

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
    let first = true;
    nodeFs.promises.readFile = (async (...args: Parameters<typeof readFile>) => {
      const text = await readFile(...args);
      if (first && String(args[0]) === lockFile) {
        first = false;
        await held;
      }
      return text;
    }) as typeof readFile;
    try {
      const b = acquireLock(dir, { command: 'B' });
      await new Promise((r) => setTimeout(r, 50));
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
  it('never frees the lock name of a live holder while recovering a stale lock (a third taker gets in)', async () => {
    const dir = tempDir();
    const lockFile = path.join(dir, 'write.lock');
    const dead = { pid: 999999999, host: os.hostname(), startedAt: new Date(0).toISOString() };
    writeFileSync(lockFile, JSON.stringify(dead));

    // B reads the stale lock and is held up; A recovers it and takes the lock meanwhile.
    const readFile = nodeFs.promises.readFile;
    const rename = nodeFs.renameSync;
    let go!: () => void;
    const held = new Promise<void>((r) => {
      go = r;
    });
    let first = true;
    nodeFs.promises.readFile = (async (...args: Parameters<typeof readFile>) => {
      const text = await readFile(...args);
      if (first && String(args[0]) === lockFile) {
        first = false;
        await held;
      }
      return text;
    }) as typeof readFile;
    // When B moves the lock aside (A's live lock, as it turns out), C tries to take the lock at once.
    let cTook: boolean | null = null;
    try {
      const b = acquireLock(dir, { command: 'B' });
      await new Promise((r) => setTimeout(r, 50));
      const a = await acquireLock(dir, { command: 'A' });
      nodeFs.renameSync = (from, to) => {
        rename(from, to);
        if (cTook !== null || String(from) !== lockFile) return;
        try {
          writeFileSync(lockFile, JSON.stringify({ ...dead, pid: process.pid, command: 'C' }), {
            flag: 'wx',
          });
          cTook = true;
        } catch {
          cTook = false;
        }
      };
      syncBuiltinESMExports();
      go();
      const outcome = await b.then(
        async (lock) => {
          await lock.release();
          return 'B holds the lock';
        },
        (err: { code?: string }) => err.code,
      );
      // A still holds the lock: neither B nor C may have it.
      expect({ outcome, cTook }).toEqual({ outcome: 'STORE_LOCKED', cTook: false });
      await a.release();
    } finally {
      nodeFs.promises.readFile = readFile;
      nodeFs.renameSync = rename;
      syncBuiltinESMExports();
      go();
    }
  });
});
