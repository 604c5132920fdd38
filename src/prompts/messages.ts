/**
 * The user-side messages of a run: the opening request, block output feedback and the nudges the loop
 * sends when a reply does not move the run forward. Kept beside the system prompts so all model-facing
 * wording lives in one place.
 */
import type { ContextShape } from './shape.ts';

/** One block's outcome, as the loop reports it back. */
export interface BlockFeedback {
  /** 1-based position of the block in the reply. */
  index: number;
  stdout: string;
  error: { code: string; message: string; line?: number; column?: number } | null;
  /** True when a fatal limit reset the session during this block. */
  reset: boolean;
}

/** Opening user message. `inlineContext` is the whole (short) context of a sub-call, shown to save a turn. */
export function firstMessage(question: string, shape: ContextShape, inlineContext?: string): string {
  const lines = [question.trim()];
  if (inlineContext !== undefined) {
    lines.push('', `The context in full (${shape.chars} characters, also in \`context\`):`, inlineContext);
  }
  return lines.join('\n');
}

/** Added to a block rejected before it ran: a model otherwise assumes its first lines took effect. */
const NOT_RUN_NOTE =
  'The block was rejected before running: none of its code ran and none of its declarations exist.';

function describeError(err: NonNullable<BlockFeedback['error']>): string {
  const where =
    err.line === undefined ? '' : ` at line ${err.line}${err.column === undefined ? '' : `:${err.column}`}`;
  const rejected = err.code === 'VALIDATION' || err.code === 'SYNTAX' ? `\n${NOT_RUN_NOTE}` : '';
  return `Error (${err.code}${where}): ${err.message}${rejected}`;
}

/**
 * The user message after a turn: one section per block that ran, then any notes from the loop (no action,
 * missing variable), then the turn count so the model can pace itself.
 */
export function turnFeedback(
  blocks: BlockFeedback[],
  notes: string[],
  turn: number,
  maxTurns: number,
): string {
  const parts: string[] = [];
  for (const b of blocks) {
    const body: string[] = [];
    if (b.stdout.length > 0) body.push(b.stdout);
    if (b.error !== null) body.push(describeError(b.error));
    if (b.reset) body.push('The session was reset by a fatal limit: variables from earlier blocks are gone.');
    if (body.length === 0) body.push('(no output)');
    parts.push(`[block ${b.index}]\n${body.join('\n')}`);
  }
  parts.push(...notes, `[turn ${turn} of ${maxTurns}]`);
  return parts.join('\n\n');
}

/** Note for a reply with neither a ```repl block nor FINAL. */
export const NO_ACTION_NOTE =
  'Your reply had no ```repl block and no FINAL(...). Continue with code in a ```repl block, or finish with ' +
  'FINAL(answer).';

/** Sent when FINAL_VAR names a variable the session does not have. */
export function missingVariableMessage(name: string): string {
  return (
    `FINAL_VAR(${name}): there is no variable named \`${name}\` in the session. Define it in a \`\`\`repl ` +
    'block first, or finish with FINAL(answer).'
  );
}

/**
 * Sent when FINAL(name) in reply text names no variable and a word the run never showed: most likely a
 * typo of a variable, so the run goes on instead of answering with the name.
 */
export function unknownFinalNameMessage(name: string, near: string | undefined): string {
  const hint = near === undefined ? '' : ` Did you mean \`${near}\`?`;
  return (
    `FINAL(${name}): there is no variable named \`${name}\` in the session, and the word appears nowhere in the ` +
    `question or the outputs, so it looks like a typo; the run did not end.${hint} Finish with a variable that ` +
    `exists, or quote the text: FINAL("${name}").`
  );
}

/** The one extra request after the last turn: no more code runs. */
export const LAST_CALL_MESSAGE =
  'You have used all your turns. Reply now with your best final answer as FINAL(answer). No more code will run.';

/** Sent when FINAL's answer is longer than the run allows. */
export function answerTooLongMessage(chars: number, max: number): string {
  return (
    `FINAL: the answer is ${chars} characters; answers are at most ${max}. The run did not end: give a ` +
    'shorter answer (a summary, counts, the first items), or keep the details in a variable and say what it holds.'
  );
}

/** Sent when a sub-RLM's FINAL answer does not match the schema its caller asked for. */
export function schemaMismatchMessage(problems: string): string {
  return (
    `FINAL: the answer does not match the JSON Schema the request asked for: ${problems}. The run did not ` +
    'end: call FINAL again with JSON that matches it.'
  );
}

/** Sent for a ```js (or similar) fence, which never runs. */
export function ignoredFenceNote(lang: string, line: number): string {
  return (
    `The \`\`\`${lang} block at line ${line} of your reply did not run: only \`\`\`repl blocks run. ` +
    'Put code to run in a ```repl block.'
  );
}

/** Sent when a reply was longer than the parser reads. */
export function replyTruncatedNote(max: number): string {
  return `Your reply was longer than ${max} characters; only its start was read. Keep replies short.`;
}
