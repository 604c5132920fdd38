/**
 * Undoing a store a failed command created: a first `rlm ingest` or `rlm remember` that fails after
 * making the store folder must not leave an empty store behind (the next attempt would then find "a
 * store" where the user has none). Only a store that holds nothing is removed, under its write lock, so
 * a store another process has meanwhile written into is always kept.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DirectoryPersistence } from './directory.ts';
import { LOCK_FILE } from './lock.ts';

/** Removes the store in `dir` when it holds no document and no memory; true when it did. */
export async function discardEmptyStore(dir: string): Promise<boolean> {
  const persistence = new DirectoryPersistence(dir, { lockWaitMs: 0 });
  let lock: Awaited<ReturnType<DirectoryPersistence['lock']>>;
  try {
    lock = await persistence.lock('discard');
  } catch {
    return false; // another writer is at work: not ours to remove
  }
  try {
    try {
      const state = await persistence.readState();
      if (state.documents.size > 0) return false;
      if (state.memory && (await persistence.readJournal(state.memory.journal, 0)).lines.length > 0)
        return false;
    } catch {
      // No readable manifest: a store that never got its first commit.
    }
    for (const name of await fs.readdir(dir)) {
      if (name !== LOCK_FILE) await fs.rm(path.join(dir, name), { recursive: true, force: true });
    }
  } finally {
    await lock.release();
  }
  await fs.rmdir(dir).catch(() => undefined);
  return true;
}
