// glibc's malloc settings for the commands that write a store in batches for minutes (`rlm ingest`,
// `rlm repair`, `rlm claude ingest`). Each batch allocates and frees blocks of every size, a few of them
// of 1-8 MiB (index arrays, postings, a segment's text), while long-lived memory keeps growing between them.
// - Arenas. glibc gives threads that allocate at the same time arenas of their own (up to 8 a core), and
//   an arena's freed memory goes back to the system only from its top. An ingest chunks on a worker thread
//   and reads files, compresses and collects garbage on others: the holes left in those arenas stayed
//   resident, and how many there were changed from run to run. With one arena, what one thread frees
//   another reuses. Measured (the generated corpora of `npm run bench -- scale`), peak RSS: 100 MB ingest
//   295-322 -> 254-263 MB, 1 GB 324-350 -> 282-292 MB; CPU time the same within this machine's noise.
// - Block sizes. By default malloc raises the size from which it maps a block on its own to the largest
//   block freed so far (up to 32 MiB), and keeps twice that free at the top of its heap. The longer an
//   ingest, the larger the largest block it met: a 1 GB ingest ended with its big transient blocks carved
//   out of the heap between long-lived ones, and its RSS rose with its length. Fixed at 1 MiB, blocks that
//   large are mapped and unmapped whole; 4 MiB of free top is kept, so a batch's smaller blocks do not make
//   the heap shrink and grow again. Measured on the 1 GB ingest: 293 -> 280 MB, user CPU time the same,
//   system time +8 s of 330 s. With a 4 MiB threshold the peak stayed at 285-288 MB; with 128 KiB of
//   free top (malloc's default once a threshold is fixed) the CPU time rose by 9-18%.
// glibc reads these once, when the process starts, so a batch command runs itself again with them set:
// process.execve replaces this process (same pid, same open files and stdin); nothing has run yet.
// Keep this file plain JavaScript that Node 18 parses, like bin/rlm.js that calls it.

/**
 * What a batch command sets, each by its environment variable unless the user chose a value (by that
 * variable or by its name in `GLIBC_TUNABLES`).
 */
export const BATCH_MALLOC = [
  { env: 'MALLOC_ARENA_MAX', tunable: 'glibc.malloc.arena_max', value: '1' },
  { env: 'MALLOC_MMAP_THRESHOLD_', tunable: 'glibc.malloc.mmap_threshold', value: String(1 << 20) },
  { env: 'MALLOC_TRIM_THRESHOLD_', tunable: 'glibc.malloc.trim_threshold', value: String(4 << 20) },
];

/**
 * The environment a batch command should run with, or undefined when it runs as it is: not Linux with
 * glibc, or every setting already chosen.
 */
export function batchMallocEnv(env, platform, glibcVersion) {
  if (platform !== 'linux' || !glibcVersion) return undefined;
  const missing = BATCH_MALLOC.filter(
    (s) => env[s.env] === undefined && !(env.GLIBC_TUNABLES?.includes(`${s.tunable}=`) ?? false),
  );
  if (missing.length === 0) return undefined;
  const out = { ...env };
  for (const s of missing) out[s.env] = s.value;
  return out;
}

/** Runs this process again with {@link batchMallocEnv}'s environment, if it has one; returns if not. */
export function execWithBatchMalloc(proc = process) {
  if (typeof proc.execve !== 'function') return;
  const glibc = proc.platform === 'linux' ? proc.report?.getReport().header.glibcVersionRuntime : undefined;
  const env = batchMallocEnv(proc.env, proc.platform, glibc);
  if (env === undefined) return;
  try {
    proc.execve(proc.execPath, [proc.execPath, ...proc.execArgv, ...proc.argv.slice(1)], env);
  } catch {
    // Not replaced (a sandbox that refuses execve, say): the command runs as it is.
  }
}
