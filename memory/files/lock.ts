/**
 * One writer at a time per store: an exclusive lock file holding the owner's pid and host. A lock left by
 * a process that no longer exists on this host is stale and taken over, so a killed ingest never wedges
 * the store.
 *
 * The lock file never exists without its contents: they are written to a file of this process first,
 * which is then hard-linked to the lock's name (a link fails if the name exists). Creating the lock file
 * and then writing into it left a moment when another writer read an empty lock, took it for the
 * leftover of a dead process, and took it over from a live one: two writers, and lost writes.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  promises as fs,
  linkSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RlmError } from '../../core/errors.ts';
import { processAlive as alive, processStartTicks, sameProcessAlive } from '../../core/process.ts';
import type { StoreLock } from '../engine/persistence.ts';

export const LOCK_FILE = 'write.lock';

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
  /** When the owner started, in clock ticks since boot (Linux): tells a pid given again from the owner. */
  startTicks?: number;
  command?: string;
}

export interface LockOptions {
  /** How long to wait for another writer to finish, ms (default 0: fail at once with STORE_LOCKED). */
  waitMs?: number;
  /** Purpose recorded in the lock, shown to the writer that is kept out. */
  command?: string;
  /** Called once when this writer starts waiting for another one (e.g. to tell a person why). */
  onWait?: (owner: { pid: number; host: string; command?: string }) => void;
  /** Gives up the wait (ABORTED): a cancelled call must not write once the lock comes free. */
  signal?: AbortSignal;
}

/** How old an unreadable lock must be before it counts as left by a dead process. */
const UNREADABLE_GRACE_MS = 5000;

/** The lock's owner and its text as read (null when it could not be read), or null when there is no lock. */
async function readLock(file: string): Promise<(LockInfo & { text: string | null }) | null> {
  let mtimeMs = 0;
  let text: string | null = null;
  try {
    mtimeMs = statSync(file).mtimeMs;
    text = await fs.readFile(file, 'utf8');
    const info = JSON.parse(text) as LockInfo;
    if (typeof info.pid === 'number') return { ...info, text };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
  }
  // A lock that does not parse: damaged, or (on a filesystem without hard links, see tryCreate) being
  // written right now. Only an old one is given up on, and one that cannot be read is never broken.
  const pid = Date.now() - mtimeMs > UNREADABLE_GRACE_MS ? -1 : -2;
  return { pid, host: os.hostname(), startedAt: '', text };
}

/** Takes the lock's name if free: true when this process now holds it. */
function tryCreate(file: string, me: LockInfo): boolean {
  const mine = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  // Synchronous calls: taking and dropping the lock is a few tiny syscalls on every write, and a
  // thread-pool hop for each costs more than the calls themselves on a busy machine.
  writeFileSync(mine, JSON.stringify(me));
  try {
    linkSync(mine, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (!NO_LINKS.has(code ?? '')) throw err;
  } finally {
    rmSync(mine, { force: true });
  }
  // A filesystem without hard links (FAT, some network shares): create, then write; readers give an
  // unreadable lock a grace period instead of taking it at once (see readLock).
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(me));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** What creating a file fails with where this user may not write: no permission, a read-only mount. */
const READ_ONLY = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * {@link tryCreate}, with a store the user may not write (the lock is every writer's first file) told
 * apart from other failures: one clear ACCESS_DENIED instead of an errno on a temp file's name.
 */
function tryCreateIn(dir: string, file: string, me: LockInfo): boolean {
  try {
    return tryCreate(file, me);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (!READ_ONLY.has(code)) throw err;
    throw new RlmError(
      'ACCESS_DENIED',
      `the store ${dir} is read-only for this user: writing needs write permission on that folder`,
      { dir, errno: code },
      { cause: err },
    );
  }
}

/** What `link` fails with where a filesystem has no hard links. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** How long a recovery may hold the break lock before others count it as abandoned. */
const BREAK_STALE_MS = 10_000;

/**
 * Removes the stale lock at `file` if it still holds `staleText`; false when another process is
 * recovering it now or the lock could not be read (the caller waits). Recoverers first take
 * `write.lock.break`, created whole like the lock, so one at a time re-reads and removes: between that
 * read and the removal no fresh lock can appear (the name is taken by the stale one), and a fresh lock,
 * whose text differs, is never removed. Moving the stale lock aside instead, as before, freed the name
 * of a live lock for a moment whenever two processes recovered the same stale lock, letting a third
 * take it: two holders.
 */
function breakStale(file: string, staleText: string | null, me: LockInfo): boolean {
  // A lock that could not be read cannot be told from a fresh one: it is left to a person.
  if (staleText === null) return false;
  const breaker = `${file}.break`;
  if (!tryCreate(breaker, me)) {
    // Held for the time of a read and an unlink: one this old was left by a process killed meanwhile.
    let abandoned = false;
    try {
      abandoned = Date.now() - statSync(breaker).mtimeMs > BREAK_STALE_MS;
    } catch {
      // gone meanwhile
    }
    if (!abandoned) return false;
    rmSync(breaker, { force: true });
    if (!tryCreate(breaker, me)) return false;
  }
  try {
    let now: string | null;
    try {
      now = readFileSync(file, 'utf8');
    } catch {
      now = null;
    }
    // Gone, or replaced by a fresh lock (another text): either way the next attempt sees what is there.
    if (now === staleText) rmSync(file, { force: true });
    return true;
  } finally {
    rmSync(breaker, { force: true });
  }
}

/** A lock taker's copy of the lock or of the break lock, with its pid (`stale-`: older versions' name). */
const LOCK_COPY = /^write\.lock\.(?:break\.|stale-)?(\d+)-[0-9a-f]+$/;

/** Whether `name` is the lock, the break lock, or a lock taker's own copy of either. */
export function isLockFile(name: string): boolean {
  return name === LOCK_FILE || name === `${LOCK_FILE}.break` || LOCK_COPY.test(name);
}

/**
 * True for a file a lock taker left behind when it was killed mid-way (its own copy of the lock or of
 * the break lock; `stale-` files are what older versions moved aside) and whose process is gone; the
 * next writer deletes it.
 */
export function isLeftoverLockFile(name: string): boolean {
  const pid = LOCK_COPY.exec(name)?.[1];
  return pid !== undefined && !alive(Number(pid));
}

/** Takes the store's write lock or throws STORE_LOCKED. */
export async function acquireLock(dir: string, opts: LockOptions = {}): Promise<StoreLock> {
  const file = path.join(dir, LOCK_FILE);
  const startTicks = processStartTicks(process.pid);
  const deadline = Date.now() + (opts.waitMs ?? 0);
  const me: LockInfo = {
    pid: process.pid,
    host: os.hostname(),
    startedAt: new Date().toISOString(),
    ...(startTicks === undefined ? {} : { startTicks }),
    ...(opts.command ? { command: opts.command } : {}),
  };
  let waited = false;
  for (;;) {
    if (opts.signal?.aborted)
      throw new RlmError(
        'ABORTED',
        `cancelled while waiting for the lock of store ${dir}; nothing was written`,
      );
    if (tryCreateIn(dir, file, me)) {
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          rmSync(file, { force: true });
        },
      };
    }
    const owner = await readLock(file);
    if (owner === null) continue; // released between our attempt and the read
    // pid -2: unreadable but young, so maybe being written; wait for it like a live owner.
    // A pid given again to a newer process since the lock was taken is no owner either.
    const stale =
      owner.host === os.hostname() &&
      owner.pid !== -2 &&
      (owner.pid === -1 || !sameProcessAlive(owner.pid, owner.startTicks));
    // A stale lock is removed only under the break lock, and only if it still holds what was read.
    if (stale && breakStale(file, owner.text, me)) continue;
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
      const who =
        owner.pid > 0
          ? `process ${owner.pid} on ${owner.host}${what} since ${owner.startedAt}`
          : owner.pid === -2
            ? 'a writer still writing its lock file'
            : 'a lock file that cannot be read';
      throw new RlmError(
        'STORE_LOCKED',
        `store ${dir} is locked by ${who}; wait for it to finish, or remove the lock file ${file} if that process is gone.`,
        { dir, pid: owner.pid, host: owner.host },
      );
    }
    await sleep(Math.min(100, Math.max(10, deadline - Date.now())));
  }
}
