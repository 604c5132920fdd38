// The package build (`npm run build`): a clean dist/, tsc over tsconfig.build.json, then the sandbox
// prelude's fragments, plain JavaScript read at run time, copied beside the module that reads them.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
rmSync(new URL('dist', import.meta.url), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [fileURLToPath(new URL('node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
cpSync(
  new URL('src/sandbox/prelude', import.meta.url),
  new URL('dist/src/sandbox/prelude', import.meta.url),
  {
    recursive: true,
    filter: (source) => !source.endsWith('.ts'),
  },
);
