/**
 * Vitest global setup: the run gets a temp folder of its own, and fails if anything is left in it at the
 * end. TMPDIR (TMP, TEMP) points there before any test file runs, so the tests' temp folders
 * (test/helpers/temp.ts) and those of every process they start, which inherit the variable, land in it:
 * a folder some test forgets to remove, or a process of a test that writes one and is never stopped,
 * fails the run here instead of piling up in the machine's /tmp.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const VARIABLES = ['TMPDIR', 'TMP', 'TEMP'] as const;

/**
 * The error a run that left `entries` in its temp folder `dir` fails with (null when it left nothing).
 * Exported for its test.
 */
export function leftoverError(dir: string, entries: readonly string[]): Error | null {
  if (entries.length === 0) return null;
  const shown = entries.slice(0, 20).join(', ');
  const more = entries.length > 20 ? ` and ${entries.length - 20} more` : '';
  return new Error(
    `the test run left ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} in its temp folder ${dir}: ` +
      `${shown}${more}. Make temp folders with tempDir() from test/helpers/temp.ts, which removes them ` +
      'when the test ends, and stop the processes a test starts before it ends.',
  );
}

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'rlm-test-run-'));
  // Searchable by everyone, like /tmp itself: test/cli/read-only.test.ts runs rlm as another user on a
  // folder made here, and mkdtemp's 0700 would refuse that user before the store's own modes are tried.
  chmodSync(dir, 0o711);
  const set: [string, string][] = [
    ...VARIABLES.map((name): [string, string] => [name, dir]),
    // npm (which the package and plugin tests run) keeps Node's compile cache in TMPDIR: a cache, not a
    // test's leftover, and kept out of this folder so that the check below stays exact.
    ['NODE_DISABLE_COMPILE_CACHE', '1'],
  ];
  const saved = set.map(([name]) => [name, process.env[name]] as const);
  for (const [name, value] of set) process.env[name] = value;
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    const entries = readdirSync(dir).sort();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    const error = leftoverError(dir, entries);
    if (error) throw error;
  };
}
