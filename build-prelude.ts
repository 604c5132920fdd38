/**
 * Bundles the sandbox prelude (src/sandbox/prelude/, typed modules that run inside the isolate) into the
 * one script the isolate evaluates, `rlm-prelude.js`. `npm run build` writes it into dist/ beside the
 * module that reads it; the test setup and the benchmarks write it beside the sources, where
 * src/sandbox/prelude/index.ts finds it when running from them.
 *
 * rolldown (already installed for vitest) hoists the modules into one scope in ESM evaluation order,
 * renames clashing names and drops unused declarations; it does not reorder statements within a module.
 * With ES2024 syntax left as written (`target: 'esnext'`), it adds no helpers of its own. The output is
 * wrapped so that the script's completion value is the prelude's first stage and no global is declared.
 *
 * Run directly (`node build-prelude.ts [DIR]`), it writes the bundle into DIR (default: beside the
 * sources).
 */
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const ROOT = path.dirname(fileURLToPath(import.meta.url));
/** Where the prelude's modules live, relative to the package root. */
export const PRELUDE_DIR = 'src/sandbox/prelude';
/** The bundle's file name (also the script name in the isolate's stack traces). */
export const PRELUDE_BUNDLE = 'rlm-prelude.js';
const ENTRY = path.join(ROOT, PRELUDE_DIR, 'main.ts');
/** Name of the bundle's value inside the wrapper function: a local, never a global of the isolate. */
const LOCAL = 'rlmPrelude';

/** The prelude as one script whose completion value is its first stage. Fails on any bundler warning. */
export async function bundlePrelude(): Promise<string> {
  const bundle = await rolldown({
    input: ENTRY,
    platform: 'neutral',
    transform: { target: 'esnext' },
    // Every import resolves to a module of this repository, bundled; nothing is left to load at run time.
    external: () => false,
    onLog(level, log) {
      if (level === 'warn') throw new Error(`prelude bundle: ${log.message}`);
    },
  });
  try {
    const { output } = await bundle.generate({
      format: 'iife',
      name: LOCAL,
      exports: 'default',
      minify: false,
      comments: false,
    });
    if (output.length !== 1) throw new Error(`prelude bundle: expected one chunk, got ${output.length}`);
    const chunk = output[0];
    return `(function () {\n'use strict';\n${chunk.code}return ${LOCAL};\n})();\n`;
  } finally {
    await bundle.close();
  }
}

/** Writes the bundle into `dir` (atomically: readers see the old file or the new one). Returns its path. */
export async function writePrelude(dir = path.join(ROOT, PRELUDE_DIR)): Promise<string> {
  const code = await bundlePrelude();
  const file = path.join(dir, PRELUDE_BUNDLE);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, code);
  renameSync(temp, file);
  return file;
}

if (import.meta.main) {
  const dir = process.argv[2];
  console.log(await writePrelude(dir === undefined ? undefined : path.resolve(dir)));
}
