/**
 * What the sandbox may ask of the host. The bridge exposes exactly these operations to model code, with
 * arguments and results copied across the isolate boundary; nothing else of the host is reachable.
 */
import type { ChunkReader } from '../../memory/types.ts';

/** `llm`: one plain completion (`llm_query`); `rlm`: a sub-RLM with its own REPL (`rlm_query`). */
export type SubCallKind = 'llm' | 'rlm';

/** One sub-call as model code wrote it: a prompt, the text it is about, and optionally a model spec. */
export interface SubCallItem {
  prompt: string;
  context?: string;
  /** One of the run's configured model specs; default the sub-model. */
  model?: string;
  /**
   * A JSON Schema the answer must match (structured output). The answer is then the JSON text of the
   * checked value, or a string starting "Error:" when the sub-model's replies did not fit it.
   */
  schema?: unknown;
}

/** Per-call choices beside the item. */
export interface SubCallOptions {
  /** Default `llm`. */
  kind?: SubCallKind;
  model?: string;
  /** See {@link SubCallItem.schema}. */
  schema?: unknown;
}

/** A document of a multi-document or store context, as `list_documents()` returns it. */
export interface DocumentEntry {
  /** `doc:N` for a document list, the store's document id for a store. */
  id: string;
  /** The file's path, or a name for a text given without one. */
  path: string;
  title?: string;
  /** Length of the text in UTF-16 code units: what `.length`, offsets and `peek` ranges count. */
  chars: number;
  chunks: number;
  /** ISO time of the file's last change, when known. */
  modified: string | null;
  /** The start of the text's sha256, in hex (equal hashes, equal texts), when known. */
  hash?: string;
  /** The id of an earlier document with the very same text (a copy, an alias), when there is one. */
  duplicateOf?: string;
}

/**
 * A chunk graph, or a function that gives one: a run's `--context` files are indexed only when model code
 * first needs chunks (runtime/lazy-index.ts), and the bridge calls it then. The function is called again
 * for every later need, so it must give the same store (or build it once).
 */
export type StoreSource = ChunkReader | (() => Promise<ChunkReader>);

/** A context document that is a store document too: a run's `--context` file (runtime/context-files.ts). */
export interface ContextFileRef {
  /** Its store document id (what the index gives it when built). */
  id: string;
  /** The path list_documents() shows. */
  path: string;
  /** Its absolute path (a document filter may name it). */
  file: string;
}

export interface SandboxHost {
  /** The context as documents. Loaded into the isolate once when it fits `maxContextChars`. */
  context?: string | string[];
  /** A chunk graph behind `peek(id)`, `search_chunks`, `get_chunk`, `neighbors`, `grep`. */
  store?: StoreSource;
  /**
   * The store documents the context's texts are, in order (a run's `--context` files, when `context` is
   * their text): grep, `peek(id)` and document filters read them in the context, and only the chunk
   * functions build the index.
   */
  contextFiles?: readonly ContextFileRef[];
  /** What `list_documents()` returns; absent → it lists `doc:N` entries of `context`. */
  documents?: readonly DocumentEntry[];
  /** Sub-calls; absent → `llm_query` / `rlm_query` report that no model is configured. */
  llmQuery?: (
    prompt: string,
    context: string | undefined,
    signal: AbortSignal,
    opts?: SubCallOptions,
  ) => Promise<string>;
  /** Many sub-calls at once; answers in order, a failed item as a string starting "Error:". */
  llmQueryBatched?: (items: SubCallItem[], signal: AbortSignal, opts?: SubCallOptions) => Promise<string[]>;
}
