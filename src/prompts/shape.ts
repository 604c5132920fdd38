/**
 * What the prompts say about the context and the run's limits. The runtime measures these facts; the
 * prompt builders only phrase them, so the wording can be snapshot-tested without a real context.
 */

/** How the context reaches the model's code. */
type ContextKind = 'none' | 'string' | 'documents' | 'store';

/** Size and shape of the context, as stated in the system prompt. */
export interface ContextShape {
  kind: ContextKind;
  /** Total characters (UTF-16 code units) over all documents. */
  chars: number;
  /** Estimated tokens (exact for stores, ~chars/4 otherwise). */
  tokens: number;
  /** Number of documents (1 for a single string, 0 when there is no context). */
  documents: number;
  /** Chunks in the attached store; 0 when there is none. */
  chunks: number;
  /** Character length of the first documents, for a quick sense of the layout. */
  documentChars?: number[];
  /**
   * The first documents by path (or name), for multi-document and store contexts; bounded. `chunks` is
   * known for a store, not for files whose index is built on first use.
   */
  documentList?: { path: string; chars: number; chunks?: number }[];
  /** True when search_chunks and the chunk functions work although `chunks` is 0: files indexed on first use. */
  searchable?: boolean;
  /** True when the text is loaded in the sandbox as the `context` variable. */
  inIsolate: boolean;
  /** The longest context the sandbox loads as `context` (characters), stated when this one is longer. */
  isolateLimit?: number;
  /** The beginning of the text (of the first document): what its records look like. */
  sample?: TextSample;
  /** Documents whose text is the same as an earlier document's (`duplicateOf` in list_documents()). */
  duplicates?: number;
  /** What reading the given paths left out. */
  leftOut?: LeftOut;
}

/** The shape of a text's beginning (measured by src/runtime/text-sample.ts). */
export interface TextSample {
  /** The first non-blank lines, each cut short. */
  lines: string[];
  /** Characters the figures below were measured on (the whole text when it is shorter). */
  window: number;
  /** Runs of blank lines in the window: how many blank-line-separated blocks follow the first. */
  blankRuns: number;
  /** Line starts that recur in the window, most frequent first, with how many lines start so. */
  starts: { start: string; lines: number }[];
}

/** Files and folders that reading the paths did not take into the context. */
export interface LeftOut {
  /** Binary files skipped, and the names of a few. */
  binary: number;
  binaryExamples: string[];
  /** Other files not read (unreadable, special files, broken links), and the names of a few. */
  unreadable: number;
  unreadableExamples: string[];
  /** Paths passed over on purpose: dot-files and folders, ignore files and node_modules, --exclude. */
  hidden: number;
  ignored: number;
  excluded: number;
}

/** Limits the model should plan around. */
export interface PromptLimits {
  /** Depth of the run the prompt is for (0 = root). */
  depth: number;
  maxDepth: number;
  /** Turns this run may take. */
  maxIterations: number;
  /** Characters of output the model sees per block. */
  maxOutputCharsPerBlock: number;
  /** Characters one sub-call can read (prompt plus context for a plain completion). */
  maxSubCallChars: number;
  /** Sub-calls in flight at once for `llm_query_batched`. */
  subCallConcurrency: number;
  /** Longest answer FINAL may give, in characters. */
  maxAnswerChars: number;
  /** Model specs a sub-call may pick, the default (the sub-model) first. */
  models?: string[];
}

/** How many documents the prompt lists by name; `list_documents()` gives them all. */
export const PROMPT_DOCUMENTS = 20;

/** The empty context (a sub-call without a context argument). */
export const NO_CONTEXT: ContextShape = {
  kind: 'none',
  chars: 0,
  tokens: 0,
  documents: 0,
  chunks: 0,
  inIsolate: false,
};

/** Rough token estimate used when no tokenizer count is at hand: ~4 characters per token for prose. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
