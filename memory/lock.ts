/**
 * One writer at a time per store: an exclusive lock file holding the owner's pid and host. A lock left by
 * a process that no longer exists on this host is stale and taken over, so a killed ingest never wedges
 * the store.
 */
import { closeSync, promises as fs, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RlmError } from '../core/errors.ts';

export const LOCK_FILE = 'write.lock';

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
  command?: string;
}

export interface LockOptions {
  /** How long to wait for another writer to finish, ms (default 0: fail at once with STORE_LOCKED). */
  waitMs?: number;
  /** Purpose recorded in the lock, shown to the writer that is kept out. */
  command?: string;
  /** Called once when this writer starts waiting for another one (e.g. to tell a person why). */
  onWait?: (owner: { pid: number; host: string; command?: string }) => void;
}

export interface StoreLock {
  release(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(file: string): Promise<LockInfo | null> {
  try {
    const info = JSON.parse(await fs.readFile(file, 'utf8')) as LockInfo;
    return typeof info.pid === 'number' ? info : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // Unreadable or half-written lock (the owner died between create and write): treat as stale.
    return { pid: -1, host: os.hostname(), startedAt: '' };
  }
}

/** Takes the store's write lock or throws STORE_LOCKED. */
export async function acquireLock(dir: string, opts: LockOptions = {}): Promise<StoreLock> {
  const file = path.join(dir, LOCK_FILE);
  const deadline = Date.now() + (opts.waitMs ?? 0);
  const me: LockInfo = {
    pid: process.pid,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    ...(opts.command ? { command: opts.command } : {}),
  };
  let waited = false;
  for (let attempt = 0; ; attempt++) {
    try {
      // Synchronous calls: taking and dropping the lock is a few tiny syscalls on every write, and a
      // thread-pool hop for each costs more than the calls themselves on a busy machine.
      const fd = openSync(file, 'wx');
      try {
        writeSync(fd, JSON.stringify(me));
      } finally {
        closeSync(fd);
      }
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = await readLock(file);
    if (owner === null) continue; // released between our open and read
    const stale = owner.host === os.hostname() && (owner.pid === -1 || !alive(owner.pid));
    if (stale) {
      // Rename first so two processes recovering the same stale lock cannot both delete a fresh one.
      const grave = `${file}.stale-${process.pid}-${attempt}`;
      await fs.rename(file, grave).catch(() => undefined);
      await fs.rm(grave, { force: true });
      continue;
    }
    if (Date.now() < deadline && !waited) {
      waited = true;
      opts.onWait?.({
        pid: owner.pid,
        host: owner.host,
        ...(owner.command ? { command: owner.command } : {}),
      });
    }
    if (Date.now() >= deadline) {
      const what = owner.command ? ` (${owner.command})` : '';
      throw new RlmError(
        'STORE_LOCKED',
        `store ${dir} is locked by process ${owner.pid} on ${owner.host}${what} since ${owner.startedAt}; ` +
          'wait for it to finish, or remove the lock file if that process is gone.',
        { dir, pid: owner.pid, host: owner.host },
      );
    }
    await sleep(Math.min(100, Math.max(10, deadline - Date.now())));
  }
}
