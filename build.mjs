// The package build (`npm run build`): a clean dist/, tsc over tsconfig.build.json, then the sandbox
// prelude's modules bundled into the one script the isolate evaluates, beside the module that reads it.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PRELUDE_DIR, writePrelude } from './build-prelude.ts';

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
await writePrelude(fileURLToPath(new URL(`dist/${PRELUDE_DIR}`, import.meta.url)));
