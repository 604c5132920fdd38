/**
 * Turning `answer()` input into what a session sees: the `context` value, an optional chunk store, and the
 * measured {@link ContextShape} the prompt states. Paths are read (only read: the first model request
 * waits for nothing else) and their text is the `context`, one string per file; the chunk index behind
 * search_chunks and the other chunk functions is built the first time model code needs it
 * (lazy-index.ts). A store folder is opened and only read.
 */

import { RlmError } from '../../core/errors.ts';
import type { ChunkReader, IngestReport } from '../../memory/types.ts';
import {
  type ContextShape,
  estimateTokens,
  type LeftOut,
  NO_CONTEXT,
  PROMPT_DOCUMENTS,
} from '../prompts/shape.ts';
import { displayPaths, storeDocuments } from '../sandbox/documents.ts';
import type { ContextFileRef, DocumentEntry, StoreSource } from '../sandbox/host.ts';
import type { ContextFile } from './context-files.ts';
import { LazyIndex } from './lazy-index.ts';
import { sampleText } from './text-sample.ts';

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
  /** For paths, when `context` is their text: which store document each text is (see SandboxHost). */
  contextFiles?: ContextFileRef[];
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

/** Documents whose text an earlier one has: texts of equal length are compared, nothing is hashed. */
function countDuplicates(texts: readonly string[]): number {
  const byLength = new Map<number, string[]>();
  let duplicates = 0;
  for (const t of texts) {
    const same = byLength.get(t.length);
    if (same === undefined) byLength.set(t.length, [t]);
    else if (same.includes(t)) duplicates++;
    else same.push(t);
  }
  return duplicates;
}

/** The shape of a plain text or document list. */
export function textShape(context: string | string[] | undefined, maxContextChars: number): ContextShape {
  if (context === undefined) return NO_CONTEXT;
  const chars = totalChars(context);
  const limit = chars <= maxContextChars ? {} : { isolateLimit: maxContextChars };
  const first = typeof context === 'string' ? context : context[0];
  const sample = first === undefined || first === '' ? {} : { sample: sampleText(first) };
  if (typeof context === 'string') {
    return {
      kind: 'string',
      chars,
      tokens: estimateTokens(chars),
      documents: 1,
      chunks: 0,
      inIsolate: chars <= maxContextChars,
      ...limit,
      ...sample,
    };
  }
  const duplicates = countDuplicates(context);
  return {
    kind: 'documents',
    chars,
    tokens: estimateTokens(chars),
    documents: context.length,
    chunks: 0,
    documentChars: context.slice(0, PROMPT_DOCUMENTS).map((d) => d.length),
    inIsolate: chars <= maxContextChars,
    ...limit,
    ...sample,
    ...(duplicates > 0 ? { duplicates } : {}),
  };
}

/** Names of files shown as examples of what was left out. */
const LEFT_OUT_EXAMPLES = 3;

/**
 * What reading paths left out, from the ingest report; undefined when nothing was. `binaryNote` starts
 * every binary-file note (passed in: the module that defines it loads with the store, not with `rlm`).
 */
function leftOutOf(
  report: Pick<IngestReport, 'notes' | 'passedOver'>,
  binaryNote: string,
): LeftOut | undefined {
  const binary = report.notes.filter((n) => n.note.startsWith(binaryNote));
  const unreadable = report.notes.filter(
    (n) => !n.note.startsWith(binaryNote) && /skipped|unreadable|vanished/.test(n.note),
  );
  const name = (p: string) => p.replace(/\\/g, '/').split('/').pop() ?? p;
  const passed = report.passedOver ?? { hidden: 0, folders: 0, ignored: 0, excluded: 0 };
  const out: LeftOut = {
    binary: binary.length,
    binaryExamples: binary.slice(0, LEFT_OUT_EXAMPLES).map((n) => name(n.path)),
    unreadable: unreadable.length,
    unreadableExamples: unreadable.slice(0, LEFT_OUT_EXAMPLES).map((n) => name(n.path)),
    hidden: passed.hidden,
    ignored: passed.ignored + passed.folders,
    excluded: passed.excluded,
  };
  return out.binary + out.unreadable + out.hidden + out.ignored + out.excluded > 0 ? out : undefined;
}

/** The first chunks of the first document, enough to sample how a store's text looks. */
async function storeSample(
  store: ChunkReader,
  documents: readonly DocumentEntry[],
): Promise<ContextShape['sample']> {
  const first = documents.find((d) => d.chunks > 0);
  if (first === undefined) return undefined;
  let text = '';
  for (let i = 0; i < first.chunks && text.length < 64 * 1024; i++)
    text += (await store.getChunk(`${first.id}:${i}`))?.text ?? '';
  return text === '' ? undefined : sampleText(text);
}

async function storeShape(
  store: ChunkReader,
  context: string | string[] | undefined,
  maxContextChars: number,
  documents: readonly DocumentEntry[],
): Promise<ContextShape> {
  const s = await store.stats();
  // In the units list_documents() and every offset use (UTF-16 code units), and summing to the total.
  const chars = context === undefined ? documents.reduce((n, d) => n + d.chars, 0) : totalChars(context);
  const duplicates = documents.filter((d) => d.duplicateOf !== undefined).length;
  const sample =
    context === undefined
      ? await storeSample(store, documents)
      : sampleText(typeof context === 'string' ? context : (context[0] ?? ''));
  return {
    kind: 'store',
    chars,
    tokens: s.tokens,
    documents: s.documents,
    chunks: s.chunks,
    documentList: documents
      .slice(0, PROMPT_DOCUMENTS)
      .map((d) => ({ path: d.path, chars: d.chars, chunks: d.chunks })),
    inIsolate: context !== undefined && chars <= maxContextChars,
    ...(sample === undefined || sample.lines.length === 0 ? {} : { sample }),
    ...(duplicates > 0 ? { duplicates } : {}),
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
    const { openStore } = await import('../../memory/open.ts');
    const opened = await openStore(store);
    const documents = await storeDocuments(opened);
    return {
      ...(context === undefined ? {} : { context }),
      store: opened,
      documents,
      shape: await storeShape(opened, context, maxContextChars, documents),
      close: () => opened.close(),
    };
  }
  if (store !== undefined) {
    const documents = await storeDocuments(store);
    return {
      ...(context === undefined ? {} : { context }),
      store,
      documents,
      shape: await storeShape(store, context, maxContextChars, documents),
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
  const { BINARY_NOTE } = await import('../../memory/ingest/files.ts');
  const { files, notes, passedOver } = await readContextFiles(paths, signal);
  if (files.length === 0) {
    const why = notes.map((n) => `${n.path}: ${n.note}`).join('; ');
    throw new RlmError('BAD_INPUT', `no readable text in ${paths.join(', ')}${why ? ` (${why})` : ''}`);
  }
  const texts = files.map((f) => f.text);
  const context = given ?? (texts.length === 1 ? (texts[0] as string) : texts);
  const index = new LazyIndex(files);
  const shape = filesShape(files, context, maxContextChars);
  const leftOut = leftOutOf({ notes, passedOver }, BINARY_NOTE);
  const shown = displayPaths(files.map((f) => f.path));
  const refs = files.map((f, i) => ({ id: f.id, path: shown[i] as string, file: f.path }));
  return {
    context,
    store: index.load,
    index,
    ...(given === undefined ? { contextFiles: refs } : {}),
    shape: leftOut === undefined ? shape : { ...shape, leftOut },
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
