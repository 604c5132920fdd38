/**
 * Comparing paths by whole segments, the kernel's trees no path of rlm's may enter, and saying why a
 * file cannot be made at a path.
 */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { RlmError } from './errors.ts';

/** True when `p` is `dir` or below it (both absolute and resolved). */
export function inside(p: string, dir: string): boolean {
  if (p === dir) return true;
  const rel = path.relative(dir, p);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** Kernel views of processes, drivers and devices: never walked, read or written. */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

/** True when the real path `p` lies in `/proc`, `/sys` or `/dev`. */
export function inSystemTree(p: string): boolean {
  return SYSTEM_TREES.some((tree) => inside(p, tree));
}

/**
 * True when no folder of rlm's may be made at the real path `p`: in `/proc`, `/sys` or `/dev`, except
 * `/dev/shm`, the memory-backed folder some keep stores in.
 */
export function noFolderAt(p: string): boolean {
  return inSystemTree(p) && !inside(p, '/dev/shm');
}

/**
 * `mkdir -p dir`, refused with BAD_INPUT when the folder would be in `/proc`, `/sys` or `/dev` (not `/dev/shm`)
 * (judged at the nearest part of the path that exists, links followed): under /proc, Node's recursive
 * mkdir loops for ever and does not hear Ctrl-C.
 */
export function makeFolderSync(dir: string): void {
  let at = path.resolve(dir);
  for (;;) {
    try {
      statSync(at);
      break;
    } catch {
      const up = path.dirname(at);
      if (up === at) break;
      at = up;
    }
  }
  if (noFolderAt(realpathSync(at)))
    throw new RlmError('BAD_INPUT', `${dir} is in /proc, /sys or /dev, where rlm makes no folder`);
  mkdirSync(dir, { recursive: true });
}

/**
 * Why no file can be made at `file`, said of its folders, or undefined when they look fine: the first
 * folder on the way that is a file, or the nearest that does not exist (unless `makesFolders`: the
 * writer makes missing ones). Asked after a write failed, to name the user's path rather than the
 * system's error about a temp file or a `mkdir`.
 */
export function folderProblem(file: string, makesFolders = false): string | undefined {
  const folders: string[] = [];
  for (let dir = path.dirname(path.resolve(file)); ; dir = path.dirname(dir)) {
    folders.unshift(dir);
    if (path.dirname(dir) === dir) break;
  }
  for (const dir of folders) {
    let isFolder: boolean | undefined;
    try {
      isFolder = statSync(dir, { throwIfNoEntry: false })?.isDirectory();
    } catch {
      return undefined; // unreadable: the system's own error says more
    }
    if (isFolder === undefined) return makesFolders ? undefined : `its folder ${dir} does not exist`;
    if (!isFolder) return `${dir} is a file, not a folder`;
  }
  return undefined;
}
