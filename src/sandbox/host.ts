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
  /**
   * Chunks of the document in the chunk index; null for a run's `--context` file until its index is built
   * (the first search_chunks, get_chunk or neighbors builds it: chunking is what costs, reading does not).
   */
  chunks: number | null;
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

/**
 * The text of a context document the host does not keep: a run's `--context` file, read again from the
 * file when it is needed (runtime/context-files.ts; the file is checked to be the one the run read).
 */
export interface TextSource {
  /** The same key means the same text: an isolate process that holds one need not receive it again. */
  readonly key: string;
  /** Length in UTF-16 code units. */
  readonly chars: number;
  /** How {@link TextSource.read} gives the text: UTF-8, or UTF-16LE for text with lone surrogates. */
  readonly encoding: 'utf8' | 'utf16le';
  /** Its size in that encoding. */
  readonly bytes: number;
  /**
   * The text's bytes, in pieces; a piece is valid until the next is asked for. `scratch`, when given, is
   * where pieces are read (a caller reading many texts allocates one buffer for all).
   */
  read(scratch?: Buffer): AsyncIterable<Uint8Array>;
  /** The text as one string. */
  string(): Promise<string>;
  /** sha256 of the text's UTF-8, in hex (computed once). */
  hash(): Promise<string>;
}

/** A context document that is a store document too: a run's `--context` file (runtime/context-files.ts). */
export interface ContextFileRef {
  /** Its store document id (what the index gives it when built). */
  id: string;
  /** The path list_documents() shows. */
  path: string;
  /** Its absolute path (never shown to model code). */
  file: string;
  /** ISO time of the file's last change. */
  modified: string;
  /** Its text, read from the file when a session needs it. */
  text: TextSource;
}

/** What `list_documents()` returns, or the function that makes it (computed on first use). */
export type DocumentList = readonly DocumentEntry[] | (() => Promise<readonly DocumentEntry[]>);

export interface SandboxHost {
  /**
   * The context as documents. Loaded into the isolate once when it fits `maxContextChars`. Absent when
   * the context is `contextFiles`.
   */
  context?: string | string[];
  /** A chunk graph behind `peek(id)`, `search_chunks`, `get_chunk`, `neighbors`, `grep`. */
  store?: StoreSource;
  /**
   * The context as files, instead of `context` (a run's --context files): the host holds none of their
   * text; the isolate process reads it once, and grep, `peek(id)` and document filters read it there, by
   * the files' store document ids, while only the chunk functions build the index. One file is `context`
   * as one string, several an array.
   */
  contextFiles?: readonly ContextFileRef[];
  /** What `list_documents()` returns; absent → it lists `doc:N` entries of `context`. */
  documents?: DocumentList;
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

/**
 * The context as strings, whichever way the host gives it: `context`, or the text of `contextFiles` read
 * now (one file is one string). For sandboxes other than the isolate session (tests, embedders).
 */
export async function contextStrings(host: SandboxHost): Promise<string | string[] | undefined> {
  if (host.context !== undefined || host.contextFiles === undefined) return host.context;
  const texts = await Promise.all(host.contextFiles.map((f) => f.text.string()));
  return texts.length === 1 ? texts[0] : texts;
}
