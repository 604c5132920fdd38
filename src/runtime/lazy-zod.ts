/**
 * zod, loaded the first time a caller needs it (a structured sub-call's schema, a scripted model's rules
 * file) rather than with every run: loading it costs about as much CPU as the rest of a run's code before
 * its first model request. Synchronous (`require`, which Node 24 gives ESM too), so the checks that use it
 * stay synchronous.
 */
import { createRequire } from 'node:module';
import type * as Z from 'zod';

let loaded: typeof Z | undefined;

/** The zod module. */
export function zod(): typeof Z {
  loaded ??= createRequire(import.meta.url)('zod') as typeof Z;
  return loaded;
}
