import nodeFs, { readFileSync, statSync, writeFileSync } from 'node:fs';
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
});
