/**
 * Turning what comes back from the isolate into `BlockError`s with block-relative positions: the
 * runner's envelope and V8 compile errors.
 */
import { missingGlobalAdvice } from './advice.ts';
import type { RewrittenBlock } from './rewrite.ts';
import type { BlockError } from './types.ts';

/** What the prelude's runner returns for a block (JSON). */
export interface Envelope {
  stdout: string;
  final: string | null;
  /** Line and column as V8 reported them in the rewritten script (1-based both), 0 when unknown. */
  error: { name: string; message: string; line: number; column: number } | null;
}

/** Reads an envelope defensively: it comes from the isolate, which model code runs in. */
export function parseEnvelope(value: unknown): Envelope {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : null;
  const o = (parsed ?? {}) as Partial<Envelope>;
  return {
    stdout: typeof o.stdout === 'string' ? o.stdout : '',
    final: typeof o.final === 'string' ? o.final : null,
    error: o.error && typeof o.error === 'object' ? o.error : null,
  };
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function locate(error: BlockError, block: RewrittenBlock, line: number, column1: number): BlockError {
  const pos = block.mapPosition(line, Math.max(0, column1 - 1));
  error.line = pos.line;
  error.column = pos.column;
  return error;
}

function escapeFile(file: string): string {
  return file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** An error the block threw (or a thrown non-error, name `Uncaught`). */
export function thrownError(e: NonNullable<Envelope['error']>, block: RewrittenBlock): BlockError {
  // The prelude clips both already; this keeps the bound whatever the isolate sent.
  const name = typeof e.name === 'string' ? clip(e.name, 300) : 'Error';
  const text = typeof e.message === 'string' ? clip(e.message, 2100) : '';
  const error: BlockError = {
    code: 'RUNTIME',
    message:
      name === 'Uncaught'
        ? `Uncaught ${text}`
        : `${name}: ${text}${name === 'ReferenceError' ? missingGlobalAdvice(text) : ''}`,
  };
  return typeof e.line === 'number' && e.line > 0 ? locate(error, block, e.line, e.column ?? 1) : error;
}

/** V8 rejected the rewritten script (rare: acorn checked it first). Message ends in `[file:line:col]`. */
export function compileError(err: unknown, file: string, block: RewrittenBlock): BlockError {
  const message = errorMessage(err);
  const m = new RegExp(`\\s*\\[${escapeFile(file)}:(\\d+):(\\d+)\\]$`).exec(message);
  const error: BlockError = {
    code: err instanceof Error && err.name === 'SyntaxError' ? 'SYNTAX' : 'RUNTIME',
    message: `${err instanceof Error ? err.name : 'Error'}: ${m ? message.slice(0, m.index) : message}`,
  };
  return m ? locate(error, block, Number(m[1]), Number(m[2])) : error;
}
