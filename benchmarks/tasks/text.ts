/**
 * Building a context line by line up to a token target. Lines are counted as they are added (the
 * tokenizer caches pieces, so repetitive synthetic text counts fast) and joined in blocks, so a 10M-token
 * context never exists as millions of loose strings plus a copy at the same time for long.
 */
import { countTokens } from '../../memory/ingest/tokens.ts';

const BLOCK_LINES = 4096;

/** Accumulates lines and tracks an estimate of their tokens (each line counted with its newline). */
export class LineBuilder {
  #blocks: string[] = [];
  #current: string[] = [];
  /** Estimated tokens so far. */
  tokens = 0;
  /** Lines so far. */
  lines = 0;

  /** Adds one line (without its newline). */
  push(line: string): void {
    this.#current.push(line);
    // Counting with the newline keeps "?\n"-style merged pieces right; the estimate is within a few tokens.
    this.tokens += countTokens(`${line}\n`);
    this.lines++;
    if (this.#current.length >= BLOCK_LINES) this.#flush();
  }

  /** The text so far, lines joined with `\n`. */
  finish(): string {
    this.#flush();
    const text = this.#blocks.join('\n');
    this.#blocks = [text];
    return text;
  }

  #flush(): void {
    if (this.#current.length === 0) return;
    this.#blocks.push(this.#current.join('\n'));
    this.#current = [];
  }
}

/** Tokens of a context: one text or documents summed. */
export function contextTokens(context: string | string[]): number {
  if (typeof context === 'string') return countTokens(context);
  let n = 0;
  for (const d of context) n += countTokens(d);
  return n;
}

/** `8k` style label of a token count (binary k/m, as the paper's 2^13..2^20 axes). */
export function sizeLabel(tokens: number): string {
  if (tokens >= 1024 * 1024 && tokens % (1024 * 1024) === 0) return `${tokens / (1024 * 1024)}m`;
  if (tokens >= 1024 && tokens % 1024 === 0) return `${tokens / 1024}k`;
  return String(tokens);
}
