/** The session's configuration, as the host sends it to the prelude's `init` (JSON). */
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
  /**
   * The loaded documents' store ids and shown paths, when they are a run's --context files (grep, peek
   * and document filters take them); null otherwise (ids `doc:N`). Always present, so no lookup of it
   * ever reaches a prototype model code may have changed.
   */
  documents: { id: string; path: string }[] | null;
  /** The isolate's memory limit, MB: also what resizable ArrayBuffers may reserve in all (buffer-guard.ts). */
  memoryMb: number;
}
