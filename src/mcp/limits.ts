/**
 * Size limits of what an MCP client may send. The server runs on the user's machine with the user's keys,
 * so a runaway client must get a clear refusal instead of exhausting memory or money.
 */

/** Limits on tool arguments and on the transports carrying them. */
export interface McpLimits {
  /** Characters of a question. */
  maxQuestionChars: number;
  /** Characters of inline `context`, summed over all documents. */
  maxContextChars: number;
  /** Documents in an inline `context` array. */
  maxContextDocuments: number;
  /** Entries of a `paths` argument. */
  maxPaths: number;
  /**
   * Bytes of the files an `rlm_answer` call's `paths` name, all together. Loading is slow (tens of
   * seconds for 100 MB) and happens per call; more than this belongs in a store built once.
   */
  maxPathsBytes: number;
  /** Bytes of the files one `rlm_ingest` call reads (a store is built to be large, but not of `/`). */
  maxIngestBytes: number;
  /** Files and folders looked at while walking `paths` (bounds a call naming `/`). */
  maxPathsEntries: number;
  /** Characters of a search query or grep pattern. */
  maxQueryChars: number;
  /** Largest `max_depth` a caller may ask for. */
  maxDepth: number;
  /** Largest `max_iterations` a caller may ask for. */
  maxIterations: number;
  /** Largest `k` (search) or `limit` (grep). */
  maxResults: number;
  /** Largest `max_chars` of one `rlm_grep` result. */
  maxGrepChars: number;
  /** Ids one `rlm_peek` call may read. */
  maxPeekIds: number;
  /**
   * Bytes of one JSON-RPC message a transport reads. Kept well above `maxContextChars` (JSON escapes and
   * UTF-8 make bytes outnumber characters) so an oversized context meets the readable argument check
   * rather than a transport that drops the connection.
   */
  maxMessageBytes: number;
  /** Array elements plus object members of one tool call's arguments. */
  maxInputElements: number;
  /** Nesting depth of a JSON-RPC message read over HTTP, checked before it is parsed. */
  maxJsonDepth: number;
  /**
   * Characters of an answer repeated in a result's text content. The whole answer is always in the
   * structured content; a longer one appears in the text only up to this point, so one result never
   * carries a large answer twice (a 5 M-character answer sent twice overflowed the SDK client's buffer).
   */
  maxTextAnswerChars: number;
  /** Longest silence between progress notifications of a run whose caller asked for progress. */
  heartbeatMs: number;
  /**
   * `rlm_answer` runs at once; further calls wait their turn (cancellable, with progress). Each run holds
   * an isolate process (some 90 MB) and its sub-RLMs one each: 20 calls at once, from a runaway client,
   * held 56 processes and 3.2 GB.
   */
  maxConcurrentRuns: number;
}

const MiB = 1024 * 1024;

/** The defaults: 50 MiB of inline context, as many characters as a large codebase. */
export const DEFAULT_LIMITS: Readonly<McpLimits> = {
  maxQuestionChars: 100_000,
  maxContextChars: 50 * MiB,
  maxContextDocuments: 10_000,
  maxPaths: 1_000,
  maxPathsBytes: 32 * MiB,
  maxIngestBytes: 1024 * MiB,
  maxPathsEntries: 20_000,
  maxQueryChars: 10_000,
  maxDepth: 5,
  maxIterations: 100,
  maxResults: 1_000,
  maxGrepChars: 200_000,
  maxPeekIds: 50,
  maxMessageBytes: 256 * MiB,
  maxInputElements: 100_000,
  maxJsonDepth: 64,
  maxTextAnswerChars: 100_000,
  heartbeatMs: 3_000,
  maxConcurrentRuns: 4,
};

/** A character count for refusal messages, digits grouped so the limit reads at a glance. */
export function describeChars(n: number): string {
  return `${n.toLocaleString('en-US')} characters`;
}

/** A byte count for refusal messages, in MiB when it is a whole number of them. */
export function describeBytes(n: number): string {
  return n % MiB === 0 && n > 0 ? `${n / MiB} MiB` : `${n.toLocaleString('en-US')} bytes`;
}
