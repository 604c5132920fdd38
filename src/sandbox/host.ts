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
}

/** Per-call choices beside the item. */
export interface SubCallOptions {
  /** Default `llm`. */
  kind?: SubCallKind;
  model?: string;
}

/** A document of a multi-document or store context, as `list_documents()` returns it. */
export interface DocumentEntry {
  /** `doc:N` for a document list, the store's document id for a store. */
  id: string;
  /** The file's path, or a name for a text given without one. */
  path: string;
  title?: string;
  chars: number;
  chunks: number;
  /** ISO time of the file's last change, when known. */
  modified: string | null;
}

/**
 * A chunk graph, or a function that gives one: a run's `--context` files are indexed only when model code
 * first needs chunks (runtime/lazy-index.ts), and the bridge calls it then. The function is called again
 * for every later need, so it must give the same store (or build it once).
 */
export type StoreSource = ChunkReader | (() => Promise<ChunkReader>);

export interface SandboxHost {
  /** The context as documents. Loaded into the isolate once when it fits `maxContextChars`. */
  context?: string | string[];
  /** A chunk graph behind `peek(id)`, `search_chunks`, `get_chunk`, `neighbors`, `grep`. */
  store?: StoreSource;
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
