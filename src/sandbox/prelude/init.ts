/*
 * The prelude's second stage, run when a session takes this isolate: binds the host, the config and the
 * documents, installs the model's globals (read-only) and returns the host's entry points.
 */

import { allowStringsOf } from './coerce.ts';
import type { PreludeConfig } from './config.ts';
import { consoleObject, print } from './console.ts';
import { get_chunk, grep, list_documents, neighbors, peek, search_chunks } from './context-helpers.ts';
import { FINAL, FINAL_VAR } from './final.ts';
import { bindHost, type HostReference } from './host-call.ts';
import { $Error, defineProperty, freeze, G, jsonParse, StringSlice } from './intrinsics.ts';
import { configureOutput } from './output.ts';
import { defineGlobals } from './replace.ts';
import { collect, readVar, runBlock } from './runner.ts';
import { bindSession, docs } from './session-state.ts';
import { llm_query, llm_query_batched, rlm_query, rlm_query_batched } from './sub-calls.ts';

/** The entry points the host keeps References to, in this order. */
export type Entries = [typeof runBlock, typeof collect, typeof readVar];

/**
 * `layoutJson` places each document in the blocks that follow (`[block, start, end]`): a document is a
 * slice of its block, which V8 makes without copying (a sliced string over the block's external string).
 */
export function init(
  ref: HostReference,
  configJson: string,
  layoutJson: string,
  ...blocks: string[]
): Entries {
  bindHost(ref);
  const config = jsonParse(configJson) as PreludeConfig;
  const layout = jsonParse(layoutJson) as [number, number, number][];
  const documents: string[] = [];
  for (let i = 0; i < layout.length; i++) {
    const place = layout[i]!;
    documents[i] = StringSlice(blocks[place[0]]!, place[1], place[2]);
  }
  bindSession(config, documents);
  for (let i = 0; i < documents.length; i++) allowStringsOf((documents[i] as string).length);
  configureOutput(config.maxOutputChars, config.marker);
  const helpers: Record<string, unknown> = {
    peek: peek,
    grep: grep,
    search_chunks: search_chunks,
    get_chunk: get_chunk,
    neighbors: neighbors,
    llm_query: llm_query,
    llm_query_batched: llm_query_batched,
    rlm_query: rlm_query,
    rlm_query_batched: rlm_query_batched,
    list_documents: list_documents,
    FINAL: FINAL,
    FINAL_VAR: FINAL_VAR,
    print: print,
    console: consoleObject,
  };
  defineGlobals(helpers, true);
  defineContext(config);
  return [runBlock, collect, readVar];
}

/**
 * `context`: the documents when they are loaded. When they are not (a store, or a text too large for the
 * isolate), any use of it throws an error that names what to use, instead of "cannot read properties of
 * undefined".
 */
function defineContext(config: PreludeConfig): void {
  if (config.context === 'loaded' || (config.context === 'none' && !config.store)) {
    const value =
      config.context === 'none' ? undefined : config.contextShape === 'string' ? docs[0] : freeze(docs);
    defineGlobals({ context: value }, true);
    return;
  }
  const message = config.store
    ? 'context is not loaded: the text is in a chunk store. Use list_documents(), peek(DOC_ID) or ' +
      'peek(DOC_ID, start, end), grep and search_chunks'
    : 'context is too large to load into the sandbox. Use peek(start, end), grep(pattern) and list_documents()';
  defineProperty(G, 'context', {
    get: function context() {
      throw new $Error(message);
    },
    enumerable: false,
    configurable: false,
  });
}
