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
