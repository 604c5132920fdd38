/**
 * The in-isolate prelude, as the host loads it. Its sources are the typed modules of this folder
 * (main.ts is the entry), bundled into one script, `rlm-prelude.js`, by ../../../build-prelude.ts: at
 * build time into dist/, and beside these sources for tests and benchmarks. It runs in two stages so an
 * isolate can be prepared before a session needs it (see ../isolate.ts):
 *
 * 1. The script evaluates to the first stage (main.ts), a function of the output mirror (../mirror.ts):
 *    calling it defines the helpers and hardens the isolate, and returns `init`. The built-ins the
 *    prelude relies on were captured when the script ran. No host object exists in the isolate yet.
 * 2. `init(hostRef, configJson, ...documents)` (init.ts) binds the host-call Reference, the session's
 *    config and the context documents, installs the model's globals and returns the entry points the
 *    host keeps References to: `[runBlock, collect, readVar]` (runner.ts).
 *
 * Nothing received in stage 2 is left reachable from a global: the Reference lives in closures only.
 */
import { readFileSync } from 'node:fs';
import { RlmError } from '../../../core/errors.ts';

export type { PreludeConfig } from './config.ts';

/** Script name of the prelude in stack traces: the bundle's file name. */
export const PRELUDE_FILENAME = 'rlm-prelude.js';

function readBundle(): string {
  const file = new URL(`./${PRELUDE_FILENAME}`, import.meta.url);
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new RlmError(
      'RUNTIME',
      `the sandbox prelude ${file.pathname} is missing: run \`npm run build\` (an installed package ships it; ` +
        'a checkout builds it with `node build-prelude.ts`)',
      {},
      { cause: err },
    );
  }
}

/** The prelude's script. */
export const PRELUDE_SOURCE = readBundle();
