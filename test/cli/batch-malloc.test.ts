import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { batchMallocEnv } from '../../bin/lib/batch-malloc.js';
import { tempDir } from '../helpers/temp.ts';

const BIN = fileURLToPath(new URL('../../bin/rlm.js', import.meta.url));

/** Loaded into every Node the bin starts: appends that process's malloc settings (a/b/c) and pid to a file. */
const PROBE =
  'import{appendFileSync}from"node:fs";const e=process.env;' +
  'appendFileSync(e.RLM_PROBE,[e.MALLOC_ARENA_MAX,e.MALLOC_MMAP_THRESHOLD_,e.MALLOC_TRIM_THRESHOLD_]' +
  '.map(v=>v??"unset").join("/")+" "+process.pid+"\\n")';

/** The settings a batch command adds, as the probe prints them. */
const BATCH = '1/1048576/4194304';

/** Runs the bin with `args` and `env`; returns its result and, per Node that started, [settings, pid]. */
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
  it('ask for one arena and fixed block thresholds on Linux with glibc, each unless the user chose it', () => {
    const env = { PATH: '/usr/bin', MALLOC_TOP_PAD_: '0' };
    const all = {
      MALLOC_ARENA_MAX: '1',
      MALLOC_MMAP_THRESHOLD_: '1048576',
      MALLOC_TRIM_THRESHOLD_: '4194304',
    };
    expect(batchMallocEnv(env, 'linux', '2.36')).toEqual({ ...env, ...all });
    expect(batchMallocEnv({ GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' }, 'linux', '2.36')).toEqual({
      GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0',
      ...all,
    });
    // A value the user chose is kept, by its variable or by its tunable; the others are still added.
    expect(batchMallocEnv({ MALLOC_ARENA_MAX: '4' }, 'linux', '2.36')).toEqual({
      ...all,
      MALLOC_ARENA_MAX: '4',
    });
    const tunables = 'glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=0';
    expect(batchMallocEnv({ GLIBC_TUNABLES: tunables }, 'linux', '2.36')).toEqual({
      GLIBC_TUNABLES: tunables,
      MALLOC_MMAP_THRESHOLD_: '1048576',
    });
    const chosen = {
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '0',
      GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=1',
    };
    expect(batchMallocEnv(chosen, 'linux', '2.36')).toBeUndefined();
    // musl, macOS and Windows have no such settings.
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
    const none = 'unset/unset/unset';
    if (expected === undefined) expect(starts).toEqual([[none, String(run.pid)]]);
    // The same pid twice: the process was replaced, not forked, so nothing waits on a child.
    else
      expect(starts).toEqual([
        [none, String(run.pid)],
        [BATCH, String(run.pid)],
      ]);

    // Other commands start once, as they are; values the user chose are kept.
    expect(probe(dir, ['stats', '--store', store, '--json']).starts).toEqual([[none, expect.any(String)]]);
    const mine = { MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '131072' };
    const chosen = probe(dir, ['ingest', doc, '--store', store, '--json'], mine);
    expect(chosen.run.status).toBe(0);
    expect(chosen.starts).toEqual([['4/65536/131072', String(chosen.run.pid)]]);
  });
});
