/** Names shared by validation, the REPL rewrite and the in-isolate prelude. */

/** Globals the sandbox gives the model (CONTRACTS.md, "The sandbox's globals"). They are read-only in the isolate. */
export const HELPER_NAMES = [
  'context',
  'peek',
  'grep',
  'search_chunks',
  'get_chunk',
  'neighbors',
  'llm_query',
  'llm_query_batched',
  'rlm_query',
  'rlm_query_batched',
  'list_documents',
  'FINAL',
  'FINAL_VAR',
  'print',
  'console',
] as const;

/** Identifiers starting with this are the rewrite's own; model code may not use them. */
export const INTERNAL_PREFIX = '__rlm';

/** Parameter of the block wrapper through which hoisted functions reach the global object. */
export const GLOBAL_PARAM = '__rlm$g';

/**
 * Globals deleted from the isolate and rejected by validation: no use here, only attack surface.
 * FinalizationRegistry and WeakRef would let code run between blocks, outside any time limit. BigInt
 * arithmetic and conversion on huge values (`'' + 10n ** 30000000n`) are single C++ calls the CPU
 * limit cannot stop, so BigInt goes with every way to make one (literals are rejected by validation,
 * DataView's BigInt accessors deleted by the prelude).
 */
export const FORBIDDEN_GLOBALS = [
  'WebAssembly',
  'SharedArrayBuffer',
  'Atomics',
  'Proxy',
  'Reflect',
  'FinalizationRegistry',
  'WeakRef',
  'BigInt',
  'BigInt64Array',
  'BigUint64Array',
] as const;

/**
 * Also deleted from the isolate: `eval` and `Function` (validation has dedicated rules for them), and
 * `gc`, which V8 puts on every context of a process started with --expose-gc: `gc({execution: 'async'})`
 * settles from a task after the block has ended, so its callbacks would run between blocks, outside any
 * time limit. The isolate process is started without it (process/held-docs.ts); V8's `gc` cannot be
 * deleted, so were it there again, no session would start. Not rejected by validation: a variable may be
 * called `gc`.
 */
export const REMOVED_GLOBALS = [...FORBIDDEN_GLOBALS, 'eval', 'Function', 'gc'] as const;

/** Items of one batched sub-call: far more than a run's sub-call budget (500 by default) allows. */
export const MAX_BATCH_ITEMS = 10_000;
