/**
 * Whether a folder is someone else's: it holds files, none of them a store's. A store is never made in
 * one unless asked (`--create`): a mistyped store path would otherwise scatter store files among the
 * user's own.
 */
import { readdirSync } from 'node:fs';
import { isTempName } from '../fsutil.ts';
import { isLockFile } from './lock.ts';
import { MANIFEST_FILE, storeFilesAmong } from './manifest.ts';

/** True when `dir` is a folder holding files and no store's; false when missing, empty or a store. */
export function isForeignFolder(dir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false; // missing: it will be created; not a folder: opening it says so
  }
  // A folder of store files without a manifest is a store: opening it says so and points to `rlm repair`.
  // A lock or temp file alone is another process making the store right now: opening waits for it.
  const others = names.filter((n) => !isLockFile(n) && !isTempName(n));
  return others.length > 0 && !names.includes(MANIFEST_FILE) && storeFilesAmong(names).length === 0;
}
