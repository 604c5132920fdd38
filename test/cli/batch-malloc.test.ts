import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { batchMallocEnv } from '../../bin/lib/batch-malloc.js';
import { tempDir } from '../helpers/temp.ts';

const BIN = fileURLToPath(new URL('../../bin/rlm.js', import.meta.url));

/** Loaded into every Node the bin starts: appends that process's MALLOC_ARENA_MAX and pid to a file. */
const PROBE =
  'import{appendFileSync}from"node:fs";' +
  'appendFileSync(process.env.RLM_PROBE,(process.env.MALLOC_ARENA_MAX??"unset")+" "+process.pid+"\\n")';

/** Runs the bin with `args` and `env`; returns its result and, per Node that started, [MALLOC_ARENA_MAX, pid]. */
function probe(dir: string, args: string[], env: Record<string, string> = {}) {
  const file = join(dir, `probe-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, '');
  const run = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      ...env,
      RLM_PROBE: file,
      NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(PROBE)}`,
    },
  });
  const starts = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' '));
  return { run, starts };
}

const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
  .glibcVersionRuntime;

describe('batch commands and malloc', () => {
  it('ask for one arena on Linux with glibc, unless the user chose a number', () => {
    const env = { PATH: '/usr/bin', MALLOC_TOP_PAD_: '0' };
    expect(batchMallocEnv(env, 'linux', '2.36')).toEqual({ ...env, MALLOC_ARENA_MAX: '1' });
    expect(batchMallocEnv({ GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' }, 'linux', '2.36')).toEqual({
      GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0',
      MALLOC_ARENA_MAX: '1',
    });
    expect(batchMallocEnv({ MALLOC_ARENA_MAX: '4' }, 'linux', '2.36')).toBeUndefined();
    expect(batchMallocEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, 'linux', '2.36')).toBeUndefined();
    // musl, macOS and Windows have no such setting.
    expect(batchMallocEnv(env, 'linux', undefined)).toBeUndefined();
    expect(batchMallocEnv(env, 'darwin', undefined)).toBeUndefined();
    expect(batchMallocEnv(env, 'win32', undefined)).toBeUndefined();
  });

  it('`rlm ingest` replaces its process by one started with that setting, and ingests as before', () => {
    const dir = tempDir('rlm-malloc-');
    const doc = join(dir, 'notes.md');
    writeFileSync(doc, '# Notes\n\nThe ferry leaves at nine.\n');
    const store = join(dir, 'store');
    const { run, starts } = probe(dir, ['ingest', doc, '--store', store, '--json']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ documents: 1, added: 1 });
    const expected = batchMallocEnv(process.env, process.platform, glibc);
    if (expected === undefined) expect(starts).toEqual([['unset', String(run.pid)]]);
    // The same pid twice: the process was replaced, not forked, so nothing waits on a child.
    else
      expect(starts).toEqual([
        ['unset', String(run.pid)],
        ['1', String(run.pid)],
      ]);

    // `rlm store copy` passes every document through in batches too.
    const copied = probe(dir, ['store', 'copy', store, join(dir, 'copy'), '--json']);
    expect(copied.run.status).toBe(0);
    expect(JSON.parse(copied.run.stdout)).toMatchObject({ documents: 1 });
    expect(copied.starts.map(([arenas]) => arenas)).toEqual(
      expected === undefined ? ['unset'] : ['unset', '1'],
    );

    // Other commands start once, as they are; a number the user chose is kept.
    expect(probe(dir, ['stats', '--store', store, '--json']).starts).toEqual([['unset', expect.any(String)]]);
    const chosen = probe(dir, ['ingest', doc, '--store', store, '--json'], { MALLOC_ARENA_MAX: '4' });
    expect(chosen.run.status).toBe(0);
    expect(chosen.starts).toEqual([['4', String(chosen.run.pid)]]);
  });
});
