// glibc's malloc gives threads that allocate at the same time arenas of their own (up to 8 a core), and an
// arena's freed memory goes back to the system only from its top. An ingest runs its chunking on a worker
// thread and its file reads, compression and V8's collector on other threads, all of them allocating and
// freeing blocks of every size for minutes: the holes left in those arenas stayed resident, and how many
// there were changed from run to run. With one arena, what one thread frees another reuses. Measured on
// the same code (the generated corpora of `npm run bench -- scale`), peak RSS: 100 MB ingest 295-322 ->
// 254-263 MB, 1 GB 324-350 -> 282-292 MB, 335 MB 303-308 -> 266-273 MB; CPU time the same within the
// noise of this machine (the threads rarely allocate at once).
// glibc reads the setting once, when the process starts, so a batch command runs itself again with it set:
// process.execve replaces this process (same pid, same open files and stdin); nothing has run yet.
// Keep this file plain JavaScript that Node 18 parses, like bin/rlm.js that calls it.

/** Arenas malloc may use in a batch command. */
export const ARENA_MAX = '1';

/**
 * The environment a batch command should run with, or undefined when it runs as it is: not Linux with
 * glibc, or the number of arenas already chosen (`MALLOC_ARENA_MAX`, or `GLIBC_TUNABLES`'s arena_max).
 */
export function batchMallocEnv(env, platform, glibcVersion) {
  if (platform !== 'linux' || !glibcVersion) return undefined;
  if (env.MALLOC_ARENA_MAX !== undefined) return undefined;
  if (env.GLIBC_TUNABLES?.includes('glibc.malloc.arena_max')) return undefined;
  return { ...env, MALLOC_ARENA_MAX: ARENA_MAX };
}

/**
 * The young generation's maximum for the re-run (V8 reads it only at start): semi-spaces of 4 MiB, the
 * size core/batch-heap.ts lets a batch grow them to (8 MiB of new space). Stopping their growth with a
 * flag at run time is not always heeded by V8 13 (seen to reach 22-26 MiB now and then); the maximum is.
 */
export const YOUNG_MAX_FLAG = '--max-semi-space-size=4';

/** Runs this process again with {@link batchMallocEnv}'s environment, if it has one; returns if not. */
export function execWithBatchMalloc(proc = process) {
  if (typeof proc.execve !== 'function') return;
  const glibc = proc.platform === 'linux' ? proc.report?.getReport().header.glibcVersionRuntime : undefined;
  const env = batchMallocEnv(proc.env, proc.platform, glibc);
  if (env === undefined) return;
  try {
    proc.execve(proc.execPath, [proc.execPath, ...proc.execArgv, YOUNG_MAX_FLAG, ...proc.argv.slice(1)], env);
  } catch {
    // Not replaced (a sandbox that refuses execve, say): the command runs as it is.
  }
}
