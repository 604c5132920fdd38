/**
 * Turning `answer()` input into what a session sees: the `context` value, an optional chunk store, and the
 * measured {@link ContextShape} the prompt states. Paths are read (only read and measured: the first model
 * request waits for nothing else) and are the context, one string per file, which the session's isolate
 * process reads from the files (the host keeps none of their text); the chunk index behind search_chunks
 * and the other chunk functions is built the first time model code needs it (lazy-index.ts). A store
 * folder is opened and only read.
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
import { displayPaths, fileDocuments, storeDocuments } from '../sandbox/documents.ts';
import type { ContextFileRef, DocumentEntry, DocumentList, StoreSource } from '../sandbox/host.ts';
import type { ContextFile } from './context-files.ts';
import type { LazyIndex } from './lazy-index.ts';
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
  /** For paths (without a `context` of the caller's): the files that are the context (see SandboxHost). */
  contextFiles?: ContextFileRef[];
  shape: ContextShape;
  /** What `list_documents()` returns, for a store or read paths. */
  documents?: DocumentList;
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
  const first = documents.find((d) => (d.chunks ?? 0) > 0);
  if (first === undefined) return undefined;
  let text = '';
  for (let i = 0; i < (first.chunks ?? 0) && text.length < 64 * 1024; i++)
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
    // As list_documents() counts them: a file stored in parts is one.
    documents: documents.length,
    chunks: s.chunks,
    documentList: documents
      .slice(0, PROMPT_DOCUMENTS)
      .map((d) => ({ path: d.path, chars: d.chars, chunks: d.chunks ?? 0 })),
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
 * Reads `paths` for a run: they are the context (one string for one file, else one per document), which
 * the session's isolate process reads from the files, and their index waits for the first call that needs
 * it. The prompt gets sizes, paths and a token estimate, which measuring the files alone gives.
 */
async function loadPaths(
  paths: string[],
  given: string | string[] | undefined,
  maxContextChars: number,
  signal: AbortSignal | undefined,
): Promise<LoadedInput> {
  // Loaded here, not with the library: `import 'rlm'` reads no file code until a run is given paths.
  const { readContextFiles } = await import('./context-files.ts');
  const { LazyIndex } = await import('./lazy-index.ts');
  const { BINARY_NOTE } = await import('../../memory/ingest/read-document.ts');
  const { files, head, notes, passedOver } = await readContextFiles(paths, signal);
  if (files.length === 0) {
    const why = notes.map((n) => `${n.path}: ${n.note}`).join('; ');
    throw new RlmError('BAD_INPUT', `no readable text in ${paths.join(', ')}${why ? ` (${why})` : ''}`);
  }
  const index = new LazyIndex(files);
  const shown = displayPaths(files.map((f) => f.path));
  const refs: ContextFileRef[] = files.map((f, i) => ({
    id: f.id,
    path: shown[i] as string,
    file: f.path,
    modified: new Date(f.text.identity.mtimeMs).toISOString(),
    text: f.source,
  }));
  const shape =
    given === undefined
      ? await filesShape(files, refs, head, maxContextChars)
      : { ...textShape(given, maxContextChars), documentList: documentRows(refs), searchable: true };
  const leftOut = leftOutOf({ notes, passedOver }, BINARY_NOTE);
  return {
    ...(given === undefined ? { contextFiles: refs } : { context: given }),
    store: index.load,
    index,
    documents: () => fileDocuments(refs, index.ready),
    shape: leftOut === undefined ? shape : { ...shape, leftOut },
    close: () => index.close(),
  };
}

/** The prompt's rows of the first documents: paths and sizes (chunks come with the index). */
function documentRows(refs: readonly ContextFileRef[]): { path: string; chars: number }[] {
  return refs.slice(0, PROMPT_DOCUMENTS).map((f) => ({ path: f.path, chars: f.text.chars }));
}

/** The prompt's view of read files: their sizes and paths, tokens estimated; chunks come with the index. */
async function filesShape(
  files: readonly ContextFile[],
  refs: readonly ContextFileRef[],
  head: string,
  maxContextChars: number,
): Promise<ContextShape> {
  const chars = files.reduce((n, f) => n + f.text.chars, 0);
  const one = files.length === 1;
  const { countDuplicateFiles } = await import('./context-files.ts');
  const duplicates = one ? 0 : await countDuplicateFiles(files);
  return {
    kind: one ? 'string' : 'documents',
    chars,
    tokens: estimateTokens(chars),
    documents: files.length,
    chunks: 0,
    ...(one ? {} : { documentChars: files.slice(0, PROMPT_DOCUMENTS).map((f) => f.text.chars) }),
    inIsolate: chars <= maxContextChars,
    ...(chars <= maxContextChars ? {} : { isolateLimit: maxContextChars }),
    ...(head === '' ? {} : { sample: sampleText(head) }),
    ...(duplicates > 0 ? { duplicates } : {}),
    documentList: documentRows(refs),
    searchable: true,
  };
}
