/** What a real delete must leave behind: no file of a store holding the deleted text or ids. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Every file under `dir` whose bytes hold one of `needles`, as `relative/path: needle`. */
export function filesHolding(dir: string, needles: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = path.join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const bytes = readFileSync(full, 'latin1');
        for (const n of needles) if (bytes.includes(n)) out.push(`${path.relative(dir, full)}: ${n}`);
      }
    }
  };
  walk(dir);
  return out;
}
