/**
 * Where a folder walk may go. A symlink inside an ingested folder can lead anywhere (`docs -> ~`, a link
 * to `/proc/self`), and what ingest takes is later sent to a model, so the walk stays inside the real
 * paths of the folders it was given unless the caller says otherwise; the kernel's own trees are never
 * walked at all, whatever the caller says (they are endless, change as they are read, and hold other
 * processes' secrets).
 */
import { inSystemTree, inside } from '../../core/paths.ts';

/** The note for a path in a system tree. */
export const SYSTEM_TREE_NOTE = 'in /proc, /sys or /dev: never read';

/**
 * Judges the targets of symlinks met while walking `roots` (real paths). `outside` follows links that
 * leave the roots too. Returns null for a target the walk may take, or the note that says why not.
 */
export function linkFence(roots: readonly string[], outside: boolean): (target: string) => string | null {
  return (target) => {
    if (inSystemTree(target)) return `symlink to ${target} skipped: ${SYSTEM_TREE_NOTE}`;
    if (outside || roots.some((root) => inside(target, root))) return null;
    return `symlink to ${target} skipped: it leads outside the folders given`;
  };
}
