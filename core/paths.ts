/** Comparing paths by whole segments. */
import path from 'node:path';

/** True when `p` is `dir` or below it (both absolute and resolved). */
export function inside(p: string, dir: string): boolean {
  if (p === dir) return true;
  const rel = path.relative(dir, p);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
