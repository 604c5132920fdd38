/**
 * How to start this very rlm again later, from a launcher written now (Claude Code hooks): the absolute
 * path of the Node running it and of the package's bin. Neither `rlm` on PATH nor the default `node`
 * is needed then; both may be missing or older for the program that runs the launcher.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `[node, bin]`: absolute paths, decided now. */
export function selfCommand(): [string, string] {
  return [process.execPath, binPath()];
}

/** The package's `bin/rlm.js`, found above this module (src/cli/ from source, dist/src/cli/ when built). */
function binPath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const bin = path.join(dir, 'bin', 'rlm.js');
    if (existsSync(bin) && existsSync(path.join(dir, 'package.json'))) return bin;
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error(`cannot find rlm's bin/rlm.js above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
