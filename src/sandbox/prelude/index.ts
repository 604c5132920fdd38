/**
 * The in-isolate prelude, assembled. It runs in two stages so an isolate can be prepared before a
 * session needs it (see runtime.ts):
 *
 * 1. The script evaluates to a function of the output mirror (../mirror.ts); calling it captures the built-ins, defines the helpers and
 *    hardens the isolate, and returns `init`. No host object exists in the isolate yet.
 * 2. `init(hostRef, configJson, ...documents)` binds the host-call Reference, the session's config and
 *    the context documents, installs the model's globals and returns the entry points the host keeps
 *    References to: `[runBlock, collect, readVar]`.
 *
 * Nothing received in stage 2 is left reachable from a global: the Reference lives in closures only.
 */
import { readFileSync } from 'node:fs';
import { REMOVED_GLOBALS } from '../names.ts';

/**
 * One fragment of the prelude: plain JavaScript in a `.js` file beside this module, so the linter sees it
 * (the build copies these files next to the compiled module). Fragments are statements of one function
 * body, in the order below; each sees the declarations of the others.
 */
const fragment = (name: string): string => readFileSync(new URL(`./${name}.js`, import.meta.url), 'utf8');

/** Script name of the prelude in stack traces. */
export const PRELUDE_FILENAME = 'rlm-prelude.js';

/** Configuration `init` reads (passed as JSON). */
export interface PreludeConfig {
  maxOutputChars: number;
  marker: { before: string; after: string };
  /** Whether llm_query / llm_query_batched have a host behind them. */
  llm: boolean;
  /** Whether a chunk store backs peek(id), grep, search_chunks, get_chunk, neighbors. */
  store: boolean;
  /** `loaded`: documents are in the isolate; `host`: too large, the host serves them; `none`. */
  context: 'loaded' | 'host' | 'none';
  /** Shape of the `context` global when loaded. */
  contextShape: 'string' | 'array';
  /** The isolate's memory limit, MB: also what resizable ArrayBuffers may reserve in all (bounds.ts). */
  memoryMb: number;
}

export const PRELUDE_SOURCE = `(function (outputMirror) {
'use strict';
const REMOVED_GLOBALS = ${JSON.stringify(REMOVED_GLOBALS)};
const docs = [];
${fragment('intrinsics')}
${fragment('show')}
${fragment('context-text')}
${fragment('core')}
${fragment('mirror')}
${fragment('web')}
${fragment('harden')}
${fragment('bounds')}
return init;
})`;
