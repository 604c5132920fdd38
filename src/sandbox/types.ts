/**
 * The sandbox seam: the RLM loop and `rlm exec` only see this interface, so the loop can be tested with
 * a double and the isolated-vm implementation stays in one place.
 */

export interface SandboxLimits {
  /** CPU time per block, ms (default 5000). */
  cpuMs?: number;
  /** Wall-clock per block including awaited host calls, ms (default 60000). */
  wallMs?: number;
  /** Isolate heap limit, MB (default: 128 + 4 × the context size in MB, capped at 4096). */
  memoryMb?: number;
  /** Characters of output kept per block (head and tail, default 20000). */
  maxOutputChars?: number;
  /** Host calls allowed per block (default 1000). */
  maxHostCalls?: number;
  /** Largest context loaded into the isolate as `context`, in chars (default 2^29 - 24, V8's longest string). */
  maxContextChars?: number;
}

export type SandboxErrorCode = 'SYNTAX' | 'VALIDATION' | 'TIMEOUT' | 'MEMORY_LIMIT' | 'RUNTIME' | 'ABORTED';

export interface BlockError {
  code: SandboxErrorCode | string;
  message: string;
  /** 1-based line and 0-based column relative to the block, when known. */
  line?: number;
  column?: number;
  /** The validation rule that rejected the block (code VALIDATION). */
  rule?: string;
}

export interface BlockResult {
  ok: boolean;
  /** print/console output, plus the shown value of a final expression statement. Truncated per limits. */
  stdout: string;
  /** Set when the block called FINAL / FINAL_VAR. */
  final: string | null;
  error: BlockError | null;
  stats: { cpuMs: number; wallMs: number; hostCalls: number };
  /** True when a fatal limit destroyed the session: variables from earlier blocks are gone. */
  reset: boolean;
}

export interface Sandbox {
  /** Runs one block in the persistent session. Never throws for the model's mistakes. */
  run(code: string, signal?: AbortSignal): Promise<BlockResult>;
  /** Reads a top-level variable as a string (for FINAL_VAR written in reply text); undefined if missing. */
  readVariable(name: string): Promise<string | undefined>;
  dispose(): void;
}
