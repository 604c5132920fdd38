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
import { REMOVED_GLOBALS } from '../names.ts';
import { BOUNDS_SOURCE } from './bounds.ts';
import { CONTEXT_SOURCE } from './context-text.ts';
import { CORE_SOURCE } from './core.ts';
import { HARDEN_SOURCE } from './harden.ts';
import { INTRINSICS_SOURCE } from './intrinsics.ts';
import { MIRROR_SOURCE } from './mirror.ts';
import { SHOW_SOURCE } from './show.ts';
import { WEB_SOURCE } from './web.ts';

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
${INTRINSICS_SOURCE}
${SHOW_SOURCE}
${CONTEXT_SOURCE}
${CORE_SOURCE}
${MIRROR_SOURCE}
${WEB_SOURCE}
${HARDEN_SOURCE}
${BOUNDS_SOURCE}
return init;
})`;
