/** Types of batch-malloc.js (plain JavaScript, since bin/rlm.js loads it before anything compiled). */

/** One glibc malloc setting a batch command makes: its environment variable, its tunable, its value. */
export interface BatchMallocSetting {
  env: string;
  tunable: string;
  value: string;
}

/** What a batch command sets (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`). */
export const BATCH_MALLOC: readonly BatchMallocSetting[];

/**
 * The environment a batch command should run with (the settings the user did not choose added), or
 * undefined when it runs as it is: not Linux with glibc, or every setting already chosen by the user.
 */
export function batchMallocEnv(
  env: Readonly<Record<string, string | undefined>>,
  platform: string,
  glibcVersion: string | undefined,
): Record<string, string | undefined> | undefined;

/** Replaces this process (`process.execve`) by itself with that environment, if it has one; else returns. */
export function execWithBatchMalloc(proc?: NodeJS.Process): void;
