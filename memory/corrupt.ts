/**
 * The error a damaged store file raises. A module of its own so that grep, which the sandbox loads, can
 * raise it without loading the store's file utilities.
 */
import path from 'node:path';
import { RlmError } from '../core/errors.ts';

/** The STORE_CORRUPT error, always naming the file and the way out. */
export function corrupt(file: string, reason: string): RlmError {
  const dir = path.dirname(file).replace(/[\\/]segments$/, '');
  return new RlmError(
    'STORE_CORRUPT',
    `store file ${file} is corrupt: ${reason.replace(/\s+/g, ' ').slice(0, 200)}. Run \`rlm repair --store ${dir}\` to rebuild derived files.`,
    { file },
  );
}

/** Errno codes of a file this user may not read: a permission, not damage (repair must not drop it). */
const DENIED = new Set(['EACCES', 'EPERM']);

/** Whether `code` (an errno code) says the file may not be read by this user. */
export function isDenied(code: unknown): boolean {
  return typeof code === 'string' && DENIED.has(code);
}

/** The ACCESS_DENIED error of a store file this user may not read, naming it and the way out. */
export function unreadable(file: string, code: string): RlmError {
  const dir = path.dirname(file).replace(/[\\/]segments$/, '');
  return new RlmError(
    'ACCESS_DENIED',
    `store file ${file} cannot be read by this user (${code}): its permissions changed, or the store belongs to another user; \`ls -l ${dir}\` shows its owner, who can give access (chmod -R u+rw, or run as that user). Nothing was changed.`,
    { file },
  );
}

/**
 * Errno codes of a read that failed for want of something, not because of the file: permission, or a
 * resource the process ran out of for a moment. A file that fails so is not damaged.
 */
const NOT_DAMAGE = new Set(['EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'ENOMEM', 'EAGAIN', 'EBUSY', 'EINTR']);

/**
 * Whether a failure to read a store file is about access, not about its bytes (an {@link unreadable}
 * error, or an errno error of permission or of a resource run out): such a file is not damaged and must
 * not be rebuilt or dropped by a repair. A file that is a folder (EISDIR), a path through a file
 * (ENOTDIR) or a read error of the disk (EIO) is damage: repair rebuilds or drops what it held.
 */
export function isAccessFailure(err: unknown): boolean {
  if (err instanceof RlmError) return err.code === 'ACCESS_DENIED';
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && NOT_DAMAGE.has(code);
}
