/**
 * Durable file primitives for the store: every write goes to a temp file that is fsynced and renamed
 * over the target, so a reader or a crash sees either the old file or the new one, never half of each.
 */
import { randomBytes } from 'node:crypto';
import { constants, promises as fs, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { RlmError } from '../core/errors.ts';
import { noFolderAt } from '../core/paths.ts';
import { corrupt } from './corrupt.ts';

export { corrupt };

/** Bytes gathered before one write when the data comes in pieces. */
const WRITE_BUFFER_BYTES = 256 * 1024;

/** The name a file is written under before its rename over `file` (this process's, never reused). */
export function tempPathFor(file: string): string {
  return `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Whether `name` is one {@link tempPathFor} gives: a write in flight, or a crash's leftover. */
export function isTempName(name: string): boolean {
  return /\.tmp-\d+-[0-9a-f]+$/.test(name);
}

/**
 * Writes `data` to `file` atomically and durably (temp file + fsync + rename + fsync of the folder).
 * `data` may be an iterable of string pieces (see memory/json-pieces.ts), written through one small
 * buffer, so a big file is never held whole in memory. The file gets `mode` (default 0644, less the
 * umask).
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array | Iterable<string | Uint8Array>,
  mode?: number,
): Promise<void> {
  const tmp = tempPathFor(file);
  const handle = await fs
    .open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o644)
    .catch((err: NodeJS.ErrnoException) => {
      // The temp file is this function's own: a failure to make it (no such folder, no permission) is
      // told of the file the caller asked for.
      throw Object.assign(err, { path: file, message: err.message.replace(tmp, file) });
    });
  try {
    // Exactly the mode asked for, whatever the umask.
    if (mode !== undefined) await handle.chmod(mode);
    if (typeof data === 'string' || data instanceof Uint8Array) await handle.writeFile(data);
    else await writePieces(handle, data);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await syncDir(path.dirname(file));
}

/**
 * Writes `pieces` in order (strings as UTF-8), small ones gathered into writes of about
 * {@link WRITE_BUFFER_BYTES}; a big byte piece is written as it is.
 */
async function writePieces(handle: fs.FileHandle, pieces: Iterable<string | Uint8Array>): Promise<void> {
  const buf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  let used = 0;
  const writeAll = async (bytes: Uint8Array, length: number) => {
    for (let done = 0; done < length; ) done += (await handle.write(bytes, done, length - done)).bytesWritten;
  };
  for (const piece of pieces) {
    if (typeof piece !== 'string') {
      if (used + piece.length <= buf.length) {
        buf.set(piece, used);
        used += piece.length;
        continue;
      }
      await writeAll(buf, used);
      used = 0;
      await writeAll(piece, piece.length);
      continue;
    }
    // Three bytes per UTF-16 unit at most, so a piece that passes this check always fits.
    if (used + piece.length * 3 > buf.length) {
      await writeAll(buf, used);
      used = 0;
      if (piece.length * 3 > buf.length) {
        const bytes = Buffer.from(piece, 'utf8');
        await writeAll(bytes, bytes.length);
        continue;
      }
    }
    used += buf.write(piece, used, 'utf8');
  }
  await writeAll(buf, used);
}

/** fsync a folder so a rename in it survives a power cut. Some platforms cannot open folders: ignore. */
export async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not supported on this platform (e.g. Windows); rename is still atomic there.
  } finally {
    await handle?.close();
  }
}

/** Reads and parses a JSON file; a parse failure is STORE_CORRUPT naming the file. */
export async function readJson<T>(file: string): Promise<T> {
  const raw = await fs.readFile(file, 'utf8');
  return parseJson<T>(raw, file);
}

export function parseJson<T>(raw: string, file: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch (err) {
    throw corrupt(file, `invalid JSON (${(err as Error).message})`);
  }
}

/**
 * Throws BAD_INPUT when `dir` cannot be a store folder: it or a folder above it is a file, or it lies in
 * /proc, /sys or /dev (/dev/shm is fine); ACCESS_DENIED when a folder on the way cannot be looked into.
 */
export async function assertNotAFile(dir: string): Promise<void> {
  // Judged at the nearest part of the path that exists, links followed: a store under /proc would send
  // Node's recursive mkdir into a loop that never ends (nor hears Ctrl-C), one under a file fails deep
  // inside with ENOTDIR.
  let at = dir;
  for (;;) {
    let st: Stats;
    try {
      st = await fs.stat(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const up = path.dirname(at);
      if ((code === 'ENOENT' || code === 'ENOTDIR') && up !== at) {
        at = up;
        continue;
      }
      if (code === 'ENOENT') return;
      if (code === 'EACCES' || code === 'EPERM')
        throw new RlmError('ACCESS_DENIED', `store path ${dir}: ${at} cannot be looked into (${code})`);
      throw err;
    }
    if (noFolderAt(await fs.realpath(at)))
      throw new RlmError('BAD_INPUT', `store path ${dir} is in /proc, /sys or /dev, where no store can be`);
    if (st.isDirectory()) return;
    throw new RlmError(
      'BAD_INPUT',
      at === dir
        ? `store path ${dir} is a file, not a folder`
        : `store path ${dir} lies under ${at}, which is a file`,
    );
  }
}

export async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * `~` and `~/x` as the shell would expand them. Paths reach rlm unexpanded from MCP host configs,
 * `RLM_STORE=~/x` and quoted arguments; without this they become a folder literally named `~`.
 */
export function expandHome(p: string, home: string = homedir()): string {
  if (p === '~') return home;
  if (p.startsWith('~/') || p.startsWith(`~${path.sep}`)) return path.join(home, p.slice(2));
  return p;
}
