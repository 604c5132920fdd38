/**
 * Turning `answer()` input into what a session sees: the `context` value, an optional chunk store, and the
 * measured {@link ContextShape} the prompt states. Paths are read (only read: the first model request
 * waits for nothing else) and their text is the `context`, one string per file; the chunk index behind
 * search_chunks and the other chunk functions is built the first time model code needs it
 * (lazy-index.ts). A store folder is opened and only read.
 */

import { RlmError } from '../../core/errors.ts';
import type { ChunkReader } from '../../memory/types.ts';
import { type ContextShape, estimateTokens, NO_CONTEXT, PROMPT_DOCUMENTS } from '../prompts/shape.ts';
import { displayPaths, storeDocuments } from '../sandbox/documents.ts';
import type { DocumentEntry, StoreSource } from '../sandbox/host.ts';
import type { ContextFile } from './context-files.ts';
import { LazyIndex } from './lazy-index.ts';

/** What the caller asks about. At most one of `paths` and `store`. */
export interface AnswerInput {
  question: string;
  /** The context itself: one text, or several documents. */
  context?: string | string[];
  /** Files or folders to read for this run (ingested into a temporary in-memory store). */
  paths?: string[];
  /** A store folder (opened read-only) or an open store. */
  store?: string | ChunkReader;
  /** Cancels this run (in addition to the instance's signal). */
  signal?: AbortSignal;
}

/** The loaded input of one run. */
export interface LoadedInput {
  context?: string | string[];
  /** A store, or for paths the function that builds their index on first use. */
  store?: StoreSource;
  /** The index of the paths, when paths were given: `built` tells whether anything needed it. */
  index?: LazyIndex;
  shape: ContextShape;
  /** What `list_documents()` returns, for a store or ingested paths. */
  documents?: DocumentEntry[];
  /** Releases what loading opened (not a store the caller passed in). */
  close(): Promise<void>;
}

/** Default in-isolate context size: the sandbox's default `maxContextChars`, defined once there. */
export { DEFAULT_MAX_CONTEXT_CHARS } from '../sandbox/limits.ts';

const totalChars = (c: string | string[]): number =>
  typeof c === 'string' ? c.length : c.reduce((n, d) => n + d.length, 0);

/** The shape of a plain text or document list. */
export function textShape(context: string | string[] | undefined, maxContextChars: number): ContextShape {
  if (context === undefined) return NO_CONTEXT;
  const chars = totalChars(context);
  const limit = chars <= maxContextChars ? {} : { isolateLimit: maxContextChars };
  if (typeof context === 'string') {
    return {
      kind: 'string',
      chars,
      tokens: estimateTokens(chars),
      documents: 1,
      chunks: 0,
      inIsolate: chars <= maxContextChars,
      ...limit,
    };
  }
  return {
    kind: 'documents',
    chars,
    tokens: estimateTokens(chars),
    documents: context.length,
    chunks: 0,
    documentChars: context.slice(0, PROMPT_DOCUMENTS).map((d) => d.length),
    inIsolate: chars <= maxContextChars,
    ...limit,
  };
}

function storeShape(
  store: ChunkReader,
  context: string | string[] | undefined,
  maxContextChars: number,
  documents: readonly DocumentEntry[],
): ContextShape {
  const s = store.stats();
  const chars = context === undefined ? 0 : totalChars(context);
  return {
    kind: 'store',
    chars: context === undefined ? s.bytes : chars,
    tokens: s.tokens,
    documents: s.documents,
    chunks: s.chunks,
    documentList: documents
      .slice(0, PROMPT_DOCUMENTS)
      .map((d) => ({ path: d.path, chars: d.chars, chunks: d.chunks })),
    inIsolate: context !== undefined && chars <= maxContextChars,
  };
}

/** Loads the input; throws BAD_INPUT for contradictory or malformed input. */
export async function loadInput(input: AnswerInput, maxContextChars: number): Promise<LoadedInput> {
  if (typeof input.question !== 'string' || input.question.trim() === '') {
    throw new RlmError('BAD_INPUT', 'the question is empty');
  }
  const { context, paths, store } = input;
  if (
    context !== undefined &&
    typeof context !== 'string' &&
    !(Array.isArray(context) && context.every((d) => typeof d === 'string'))
  ) {
    throw new RlmError('BAD_INPUT', 'context must be a string or an array of strings');
  }
  if (paths !== undefined && store !== undefined)
    throw new RlmError('BAD_INPUT', 'give paths or a store, not both');
  const noop = async (): Promise<void> => {};

  if (paths !== undefined && paths.length > 0)
    return loadPaths(paths, context, maxContextChars, input.signal);
  if (typeof store === 'string') {
    const { ChunkStore } = await import('../../memory/files/store.ts');
    const opened = await ChunkStore.open(store);
    const documents = storeDocuments(opened);
    return {
      ...(context === undefined ? {} : { context }),
      store: opened,
      documents,
      shape: storeShape(opened, context, maxContextChars, documents),
      close: () => opened.close(),
    };
  }
  if (store !== undefined) {
    const documents = storeDocuments(store);
    return {
      ...(context === undefined ? {} : { context }),
      store,
      documents,
      shape: storeShape(store, context, maxContextChars, documents),
      close: noop,
    };
  }
  return {
    ...(context === undefined ? {} : { context }),
    shape: textShape(context, maxContextChars),
    close: noop,
  };
}

/**
 * Reads `paths` for a run: their text is the context (one string for one file, else one per document) and
 * their index waits for the first call that needs it. The prompt gets sizes, paths and a token estimate,
 * which reading alone gives.
 */
async function loadPaths(
  paths: string[],
  given: string | string[] | undefined,
  maxContextChars: number,
  signal: AbortSignal | undefined,
): Promise<LoadedInput> {
  // Loaded here, not with the library: `import 'rlm'` reads no file code until a run is given paths.
  const { readContextFiles } = await import('./context-files.ts');
  const { files, notes } = await readContextFiles(paths, signal);
  if (files.length === 0) {
    const why = notes.map((n) => `${n.path}: ${n.note}`).join('; ');
    throw new RlmError('BAD_INPUT', `no readable text in ${paths.join(', ')}${why ? ` (${why})` : ''}`);
  }
  const texts = files.map((f) => f.text);
  const context = given ?? (texts.length === 1 ? (texts[0] as string) : texts);
  const index = new LazyIndex(files);
  return {
    context,
    store: index.load,
    index,
    shape: filesShape(files, context, maxContextChars),
    close: () => index.close(),
  };
}

/** The prompt's view of read files: their sizes and paths, tokens estimated; chunks come with the index. */
function filesShape(
  files: readonly ContextFile[],
  context: string | string[],
  maxContextChars: number,
): ContextShape {
  const shown = displayPaths(files.map((f) => f.path));
  return {
    ...textShape(context, maxContextChars),
    documentList: files
      .slice(0, PROMPT_DOCUMENTS)
      .map((f, i) => ({ path: shown[i] as string, chars: f.text.length })),
    searchable: true,
  };
}
