/**
 * Compiling the sources into dist/ before a benchmark runs `bin/rlm.js`, which runs the compiled CLI: a
 * benchmark that times the command as a user runs it must time the current sources, not a stale build.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Compiles the sources into dist/ with the package's build config (tsconfig.build.json). */
export function buildDist(log: (s: string) => void): void {
  log('building dist/ for bin/rlm.js');
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: ROOT,
      stdio: 'pipe',
    },
  );
}
