/**
 * The `paths` argument of `rlm_answer` and `rlm_ingest`, turned into the list of files to read: every path
 * inside the connection's file-access fences, the walk bounded (a call naming `/` is refused quickly
 * instead of reading the disk past the client's timeout), and the files' total bounded for a run.
 */
import { stat } from 'node:fs/promises';
import { RlmError } from '../../core/errors.ts';
import { scanPaths } from '../../memory/ingest/files.ts';
import type { FileAccess } from './access.ts';
import { describeBytes } from './limits.ts';

/** Bounds of one {@link filesOf} call. */
export interface PathBounds {
  /** Bytes of all files together. */
  maxBytes: number;
  /** What to suggest when the files are too many bytes. */
  tooLarge: string;
  /** Files and folders looked at while walking. */
  maxEntries: number;
  signal?: AbortSignal;
}

/**
 * The files under `given` (resolved against the working folder), sorted, each one allowed by `access`,
 * with the walk's notes (links skipped, unreadable folders...). BAD_INPUT names a missing path or the
 * bound a call went past; ACCESS_DENIED names a refused path.
 */
export async function filesOf(
  access: FileAccess,
  given: readonly string[],
  bounds: PathBounds,
): Promise<{ files: string[]; notes: { path: string; note: string }[] }> {
  const roots: string[] = [];
  for (const p of given) {
    const abs = await access.check(p, bounds.signal);
    try {
      await stat(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      const where = abs === p ? p : `${p} (${abs})`;
      throw code === 'ENOENT'
        ? new RlmError('BAD_INPUT', `no such file or directory: ${where}`, { path: abs })
        : new RlmError('BAD_INPUT', `cannot read ${where}: ${code}`, { path: abs }, { cause: err });
    }
    roots.push(abs);
  }
  const scan = await scanPaths(roots, {
    maxEntries: bounds.maxEntries,
    maxBytes: bounds.maxBytes,
    ...(bounds.signal === undefined ? {} : { signal: bounds.signal }),
  });
  if (scan.truncated === 'bytes') {
    throw new RlmError(
      'BAD_INPUT',
      `paths hold more than ${describeBytes(bounds.maxBytes)} of files: ${bounds.tooLarge}`,
      { paths: given },
    );
  }
  if (scan.truncated === 'entries') {
    throw new RlmError(
      'BAD_INPUT',
      `paths hold more than ${bounds.maxEntries.toLocaleString('en-US')} files and folders: name narrower paths`,
      { paths: given },
    );
  }
  // A symlink found inside an allowed folder may point anywhere; each file is judged where it really is.
  for (const f of scan.files) {
    if (bounds.signal?.aborted) throw new RlmError('ABORTED', 'the call was cancelled');
    await access.checkResolved(f.path);
  }
  return { files: scan.files.map((f) => f.path), notes: scan.notes };
}
