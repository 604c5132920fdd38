/**
 * Temp folders for tests: the one way a test makes a folder, so that every folder is removed, also when
 * the test fails.
 *
 * `tempDir()` called inside a test (or its beforeEach / afterEach) is removed when that test ends;
 * called anywhere else (a file's top level, a describe body, a beforeAll) it is removed when the test
 * file ends. Folders are made under `os.tmpdir()`, which during `npm test` is the run's own temp folder
 * (test/setup/run-temp.ts): a folder left behind there fails the run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

/** Folders made outside a test, removed when the file ends. */
const fileFolders: string[] = [];

// This module is evaluated once per test file (vitest isolates each file's modules, the default), while
// the file is being collected: the hook below belongs to that file, whichever test file imports it.
afterAll(() => {
  for (const dir of fileFolders.splice(0)) remove(dir);
});

function remove(dir: string): void {
  // Retries ride out a process of the test still writing into the folder as it goes (ENOTEMPTY).
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}

/** A new empty folder `<tmpdir>/<prefix>XXXXXX`, removed when the current test (or else file) ends. */
export function tempDir(prefix = 'rlm-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    onTestFinished(() => remove(dir));
  } catch {
    // Not inside a test: onTestFinished refuses, and the folder lives as long as the file.
    fileFolders.push(dir);
  }
  return dir;
}
