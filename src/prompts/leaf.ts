/**
 * The leaf prompt: a call at depth = maxDepth is a plain completion with no REPL. It only has to read the
 * text it was given and answer the program that asked.
 */

/** System prompt of a plain (leaf) completion. */
export const LEAF_PROMPT =
  'You answer one focused request from a program that analyses a large text piece by piece. Use only the text ' +
  'in the request. Answer directly, without preamble, in exactly the form the request asks for (JSON only, a ' +
  'number, a line per item): the program parses it. When the text does not contain what is asked, give that ' +
  'form\'s empty answer (`[]`, 0, "none"), or say so in one line.';

/** Appended to a request that asks for structured output: the schema the host will check the reply against. */
export const SCHEMA_INSTRUCTION =
  'Reply with JSON only: no prose and no code fence. The reply must match this JSON Schema:\n';

/** The follow-up when a reply did not match: what was wrong, and the one more try it gets. */
export function schemaRetry(problems: string): string {
  return `Your reply did not match the schema: ${problems}\nReply again with JSON only that matches it.`;
}

/** Separator between a leaf request and its context argument. */
export const LEAF_CONTEXT_HEADER = '\n\n--- Text ---\n';
