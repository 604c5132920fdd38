/**
 * Finding the files to ingest (reading one is ./read-document.ts), and the stable document ids and
 * content hashes they are stored under.
 */

import { createHash } from 'node:crypto';
import { type Dirent, promises as fs, type Stats } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { RlmError } from '../../core/errors.ts';
import { inSystemTree } from '../../core/paths.ts';
import { compilePattern, type IgnoreSet, isIgnored, parseIgnore } from './ignore.ts';
import { linkFence, SYSTEM_TREE_NOTE } from './link-fence.ts';
import { errorText, specialKind } from './read-document.ts';

/** A file found by {@link scanPaths}. */
interface ScannedFile {
  /** Absolute path. */
  path: string;
  bytes: number;
}

/** What a scan left out on purpose, counted (the CLI prints one line with the flag that takes them). */
interface PassedOver {
  /** Dot-files and dot-folders inside scanned folders (`includeHidden` takes them). */
  hidden: number;
  /** Folders never entered by default, like node_modules (`noIgnore` takes them). */
  folders: number;
  /** Paths matched by a `.gitignore` or `.rlmignore` (`noIgnore` takes them). */
  ignored: number;
  /** Paths matched by an `exclude` pattern. */
  excluded: number;
}

/** Result of {@link scanPaths}: files to read, paths passed over with the reason, and counts. */
export interface ScanResult {
  files: ScannedFile[];
  notes: { path: string; note: string }[];
  passedOver: PassedOver;
  /** Set when the walk stopped at `maxBytes` or `maxEntries`: `files` is then only part of what is there. */
  truncated?: 'bytes' | 'entries';
}

export interface ScanOptions {
  /** Also descend into dot-directories and take dot-files found inside folders (default false). */
  includeHidden?: boolean;
  /** Directory names never entered, in addition to dot-directories (default: node_modules). */
  skipDirs?: readonly string[];
  /** Ignore `.gitignore`/`.rlmignore` files and enter the skipped directories too (default false). */
  noIgnore?: boolean;
  /** `.gitignore`-style patterns, relative to each scanned folder, of paths to leave out. */
  exclude?: readonly string[];
  /** Stop once the files found hold more than this many bytes (a bounded look at `/`, say). */
  maxBytes?: number;
  /** Stop once this many directory entries have been looked at. */
  maxEntries?: number;
  /**
   * Also follow symlinks that lead outside the real paths of the given files and folders (default false:
   * they are skipped with a note). Links into `/proc`, `/sys` and `/dev` are skipped either way.
   */
  followLinks?: boolean;
  /** Checked between directories: an aborted walk throws ABORTED. */
  signal?: AbortSignal;
}

const DEFAULT_SKIP_DIRS = ['node_modules'];
/** The manifest that marks a folder as an rlm store (memory/files/manifest.ts); such folders are never scanned. */
const STORE_MANIFEST = 'rlm-store.json';
/** Ignore files read in every scanned folder. */
const IGNORE_FILES = ['.gitignore', '.rlmignore'];

/**
 * Expands files and folders (recursively) into a sorted list of absolute file paths. Skips
 * dot-directories (`.git`, `.rlm`…), `node_modules`, what `.gitignore`/`.rlmignore` files and `exclude`
 * patterns match, rlm stores and symlink loops; a path given explicitly is always taken, even when hidden.
 * A symlink found inside a folder is followed only when it leads inside one of the given paths (after
 * resolving links; `followLinks` lifts that), and nothing in `/proc`, `/sys` or `/dev` is ever walked or
 * read, given or linked to: both are notes. FIFOs, sockets and devices are noted and never opened. A
 * missing path is a `BAD_INPUT` error; an unreadable folder is a note.
 */
export async function scanPaths(paths: string[], opts: ScanOptions = {}): Promise<ScanResult> {
  const skipDirs = new Set(opts.noIgnore ? [] : (opts.skipDirs ?? DEFAULT_SKIP_DIRS));
  const includeHidden = opts.includeHidden ?? false;
  const excludeRules = (opts.exclude ?? []).map(compilePattern).filter((r) => r !== null);
  const files = new Map<string, number>();
  const notes: { path: string; note: string }[] = [];
  const passedOver: PassedOver = { hidden: 0, folders: 0, ignored: 0, excluded: 0 };
  const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxEntries = opts.maxEntries ?? Number.POSITIVE_INFINITY;
  let bytes = 0;
  let entriesSeen = 0;
  let truncated: ScanResult['truncated'];
  const take = (file: string, size: number): void => {
    if (!files.has(file)) bytes += size;
    files.set(file, size);
    if (bytes > maxBytes) truncated = 'bytes';
  };
  /** Real paths of directories on the current descent, to detect symlink cycles. */
  const visiting = new Set<string>();
  /** Real paths of the given paths, the only places a symlink may lead unless `followLinks`. */
  const roots: string[] = [];
  const fence = linkFence(roots, opts.followLinks ?? false);

  const walk = async (dir: string, ignores: IgnoreSet[], excludes: IgnoreSet[]): Promise<void> => {
    if (truncated !== undefined) return;
    if (opts.signal?.aborted) throw new RlmError('ABORTED', 'the scan was cancelled');
    let real: string;
    try {
      real = await fs.realpath(dir);
    } catch (err) {
      notes.push({ path: dir, note: `unreadable: ${errorText(err)}` });
      return;
    }
    if (visiting.has(real)) {
      notes.push({ path: dir, note: 'symlink loop skipped' });
      return;
    }
    visiting.add(real);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch (err) {
      notes.push({ path: dir, note: `unreadable: ${errorText(err)}` });
      visiting.delete(real);
      return;
    }
    // An rlm store inside an ingested folder is data about the folder, not part of it.
    if (entries.some((e) => e.name === STORE_MANIFEST && e.isFile())) {
      notes.push({ path: dir, note: 'an rlm store, not ingested' });
      visiting.delete(real);
      return;
    }
    const here = opts.noIgnore ? ignores : [...ignores, ...(await readIgnoreFiles(dir, entries))];
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (truncated !== undefined) break;
      if (++entriesSeen > maxEntries) {
        truncated = 'entries';
        break;
      }
      const full = join(dir, entry.name);
      let st: Stats | null | undefined;
      let isDir = entry.isDirectory();
      /** Where a symlink leads (its real path), judged by the fence once the path is known to be wanted. */
      let target: string | undefined;
      if (entry.isSymbolicLink()) {
        const linked = await statOrError(full);
        if (!('isDirectory' in linked)) {
          notes.push({ path: full, note: symlinkNote(linked.code) });
          continue;
        }
        st = linked;
        isDir = st.isDirectory();
        target = await realpathOrNull(full);
        if (target === undefined) {
          notes.push({ path: full, note: missingNote(entry.name) });
          continue;
        }
      }
      if (entry.name.startsWith('.') && !includeHidden) {
        passedOver.hidden++;
        continue;
      }
      if (isDir && skipDirs.has(entry.name)) {
        passedOver.folders++;
        continue;
      }
      if (isIgnored(excludes, full, isDir)) {
        passedOver.excluded++;
        continue;
      }
      if (isIgnored(here, full, isDir)) {
        passedOver.ignored++;
        continue;
      }
      const refused = target === undefined ? null : fence(target);
      if (refused !== null) {
        notes.push({ path: full, note: refused });
        continue;
      }
      if (isDir) {
        await walk(full, here, excludes);
        continue;
      }
      st ??= entry.isFile() ? await statOrNull(full) : await lstatOrNull(full);
      if (st === null) notes.push({ path: full, note: missingNote(entry.name) });
      else if (st.isFile()) take(full, st.size);
      else notes.push({ path: full, note: `${specialKind(st)} skipped (not a regular file; never opened)` });
    }
    visiting.delete(real);
  };

  const given: { abs: string; st: Stats; real: string }[] = [];
  for (const p of paths) {
    const abs = resolve(p);
    const st = await statOrError(abs);
    if (!('isDirectory' in st)) {
      // A symlink loop exists but leads nowhere: say so, as for one met inside a folder.
      if (st.code === 'ELOOP') {
        notes.push({ path: abs, note: symlinkNote(st.code) });
        continue;
      }
      throw new RlmError('BAD_INPUT', `no such file or directory: ${p}`, { path: abs });
    }
    const real = await realpathOrNull(abs);
    if (real === undefined) throw new RlmError('BAD_INPUT', `no such file or directory: ${p}`, { path: abs });
    given.push({ abs, st, real });
    roots.push(real);
  }
  for (const { abs, st, real } of given) {
    if (inSystemTree(real)) {
      notes.push({ path: abs, note: real === abs ? SYSTEM_TREE_NOTE : `${real}: ${SYSTEM_TREE_NOTE}` });
      continue;
    }
    if (st.isDirectory()) {
      const excludes = excludeRules.length > 0 ? [{ base: abs, rules: excludeRules }] : [];
      await walk(abs, [], excludes);
    } else if (st.isFile()) take(abs, st.size);
    else notes.push({ path: abs, note: `${specialKind(st)} skipped (not a regular file; never opened)` });
    if (truncated !== undefined) break;
  }

  const sorted = [...files.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return {
    files: sorted.map(([path, bytes]) => ({ path, bytes })),
    notes,
    passedOver,
    ...(truncated === undefined ? {} : { truncated }),
  };
}

async function readIgnoreFiles(dir: string, entries: Dirent[]): Promise<IgnoreSet[]> {
  const sets: IgnoreSet[] = [];
  for (const name of IGNORE_FILES) {
    if (!entries.some((e) => e.name === name && e.isFile())) continue;
    try {
      const rules = parseIgnore(await fs.readFile(join(dir, name), 'utf8'));
      if (rules.length > 0) sets.push({ base: dir, rules });
    } catch {
      // An unreadable ignore file ignores nothing; the scan goes on.
    }
  }
  return sets;
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await fs.lstat(path);
  } catch {
    return null;
  }
}

/** A path's stats following symlinks, or the error code (ENOENT, ELOOP, EACCES…) saying why not. */
async function realpathOrNull(path: string): Promise<string | undefined> {
  try {
    return await fs.realpath(path);
  } catch {
    return undefined;
  }
}

async function statOrError(path: string): Promise<Stats | { code: string }> {
  try {
    return await fs.stat(path);
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? 'EIO' };
  }
}

/**
 * Why an entry the folder listed could not be found. Node reads names as UTF-8: a name that is not
 * (its bytes shown as U+FFFD) cannot be opened by the name it was given, so it is not "gone".
 */
function missingNote(name: string): string {
  return name.includes('\uFFFD')
    ? 'its name is not valid UTF-8, so it cannot be opened by name; rename it to ingest it'
    : 'vanished while scanning';
}

/** Why a symlink was passed over: it leads to itself (a loop), to nothing, or somewhere unreadable. */
function symlinkNote(code: string): string {
  if (code === 'ELOOP') return 'symlink loop skipped';
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'broken symlink skipped';
  return `unreadable: ${code}`;
}

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await fs.stat(path);
  } catch {
    return null;
  }
}

/**
 * Stable document id for a path: a slug of the file name (≤ 40 chars of [a-z0-9-]) and the first
 * 8 hex digits of the SHA-1 of the absolute path, e.g. `notes-md-1a2b3c4d`.
 */
export function documentIdFor(path: string): string {
  const abs = resolve(path);
  const slug =
    basename(abs)
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+/, '')
      .slice(0, 40)
      .replace(/-+$/, '') || 'doc';
  const hash = createHash('sha1').update(abs).digest('hex').slice(0, 8);
  return `${slug}-${hash}`;
}

/** UTF-16 units of text hashed per update by {@link contentHash}. */
const HASH_SLICE = 64 * 1024;

/**
 * SHA-256 hex of a text (as UTF-8) or of raw bytes. A long text is fed in slices (never splitting a
 * surrogate pair, so the UTF-8 is the same): hashing a string converts it to UTF-8 in a temporary buffer
 * of up to three bytes per character, megabytes for a big document, left to the allocator after each call.
 */
export function contentHash(content: string | Uint8Array): string {
  const hash = createHash('sha256');
  if (typeof content !== 'string' || content.length <= HASH_SLICE) return hash.update(content).digest('hex');
  for (let i = 0; i < content.length; ) {
    let end = Math.min(i + HASH_SLICE, content.length);
    const last = content.charCodeAt(end - 1);
    if (end < content.length && last >= 0xd800 && last <= 0xdbff) end--;
    hash.update(content.slice(i, end));
    i = end;
  }
  return hash.digest('hex');
}
