/**
 * Every error rlm raises on purpose is an {@link RlmError} with a stable string `code`, so callers,
 * the CLI and the MCP server can branch on it without parsing messages.
 */
export type ErrorCode =
  | 'VALIDATION'
  | 'SYNTAX'
  | 'TIMEOUT'
  | 'MEMORY_LIMIT'
  | 'RUNTIME'
  | 'DEPTH_EXCEEDED'
  | 'BUDGET_EXCEEDED'
  | 'SCRIPT_EXHAUSTED'
  | 'STORE_CORRUPT'
  | 'STORE_LOCKED'
  | 'STORE_MISSING'
  | 'NOT_FOUND'
  | 'PROVIDER'
  | 'ABORTED'
  | 'BAD_INPUT'
  | 'BAD_OUTPUT'
  | 'ACCESS_DENIED';

/** The one error base class of rlm. `code` is stable; `message` is for people. */
export class RlmError extends Error {
  readonly code: ErrorCode;
  /** Extra machine-readable facts (file path, line, column, limit...). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RlmError';
    this.code = code;
    this.details = details;
  }
}

/** True when `err` is an {@link RlmError}, optionally with the given code. */
export function isRlmError(err: unknown, code?: ErrorCode): err is RlmError {
  return err instanceof RlmError && (code === undefined || err.code === code);
}
