/** Types of batch-malloc.js (plain JavaScript, since bin/rlm.js loads it before anything compiled). */

/** Arenas glibc's malloc may use in a batch command (`MALLOC_ARENA_MAX`). */
export const ARENA_MAX: string;

/**
 * The environment a batch command should run with (`MALLOC_ARENA_MAX` set), or undefined when it runs
 * as it is: not Linux with glibc, or the number of arenas already chosen by the user.
 */
export function batchMallocEnv(
  env: Readonly<Record<string, string | undefined>>,
  platform: string,
  glibcVersion: string | undefined,
): Record<string, string | undefined> | undefined;

/** Replaces this process (`process.execve`) by itself with that environment, if it has one; else returns. */
export function execWithBatchMalloc(proc?: NodeJS.Process): void;
