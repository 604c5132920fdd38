/**
 * Sandbox limits: defaults and their resolution against a session's context. Every limit is per block
 * except the memory limit, which is per isolate (the session's heap, context included).
 *
 * | limit            | default                                  | on breach                                   |
 * |------------------|------------------------------------------|---------------------------------------------|
 * | `cpuMs`          | 5000                                     | TIMEOUT; the session survives, unless the    |
 * |                  |                                          | block does not stop: its process is killed    |
 * |                  |                                          | (reset, see session.ts)                      |
 * | `wallMs`         | 60000                                    | TIMEOUT; pending host calls fail, and the    |
 * |                  |                                          | process is killed if it does not stop (reset) |
 * | `memoryMb`       | 128 + 4 × context MB, at most 4096       | MEMORY_LIMIT; the isolate is rebuilt (reset); |
 * |                  |                                          | resizable ArrayBuffers reserve against it    |
 * | `maxOutputChars` | 20000                                    | head and tail kept around a marker           |
 * | `maxHostCalls`   | 1000                                     | the call throws inside the block             |
 * | `maxContextChars`| 2^29 - 24 characters (V8's longest       | `context` is not loaded into the isolate;    |
 * |                  | string, 512 MiB)                         | the helpers serve it from the host           |
 *
 * `cpuMs` is isolated-vm's execution timeout: time the isolate spends running, which excludes the time
 * it waits for host calls (llm_query, store search) — those count against `wallMs` only.
 */
import { RlmError } from '../../core/errors.ts';
import type { SandboxLimits } from './types.ts';

/** Limits with every field set. */
export type ResolvedLimits = Required<SandboxLimits>;

export const DEFAULT_CPU_MS = 5000;
export const DEFAULT_WALL_MS = 60_000;
export const DEFAULT_MAX_OUTPUT_CHARS = 20_000;
export const DEFAULT_MAX_HOST_CALLS = 1000;
/**
 * Largest context loaded into the isolate as `context`: V8's longest string (`String::kMaxLength` on 64-bit
 * builds, 2^29 - 24 UTF-16 units, 512 MiB of characters), so a single file that can be one string at all
 * is one here. The isolate's heap grows with it ({@link defaultMemoryMb}: 2,176 MB at this size, within
 * the 4 GB cap), so what fits in a string fits in the isolate.
 */
export const DEFAULT_MAX_CONTEXT_CHARS = 2 ** 29 - 24;
/** Heap for the model's own data, before the context's share is added. */
export const BASE_MEMORY_MB = 128;
/** isolated-vm refuses less than 8 MB; below 32 MB V8 tends to fail hard rather than cleanly. */
const MIN_MEMORY_MB = 32;
const MAX_MEMORY_MB = 4096;

const MB = 1024 * 1024;
/** Node timers and isolated-vm timeouts take at most a signed 32-bit millisecond count. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Default heap for a context of `contextChars` characters: room for the context itself (held outside
 * the heap but counted against the limit) plus copies the model makes of it (slices, splits, lowercased
 * versions), hence four times its size.
 */
export function defaultMemoryMb(contextChars: number): number {
  return Math.min(MAX_MEMORY_MB, BASE_MEMORY_MB + Math.ceil((4 * contextChars) / MB));
}

function positiveInt(value: number | undefined, fallback: number, name: string, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < min) {
    throw new RlmError('VALIDATION', `sandbox limit ${name} must be a number >= ${min}, got ${value}`, {
      limit: name,
    });
  }
  return Math.floor(value);
}

/**
 * Fills in defaults and checks the values. `contextChars` is the total size of the context the session
 * will load, used to size the default memory limit.
 * @throws RlmError VALIDATION for a non-positive or non-numeric limit.
 */
export function resolveLimits(limits: SandboxLimits = {}, contextChars = 0): ResolvedLimits {
  const maxContextChars = positiveInt(
    limits.maxContextChars,
    DEFAULT_MAX_CONTEXT_CHARS,
    'maxContextChars',
    0,
  );
  const loaded = contextChars <= maxContextChars ? contextChars : 0;
  return {
    cpuMs: Math.min(MAX_TIMER_MS, positiveInt(limits.cpuMs, DEFAULT_CPU_MS, 'cpuMs')),
    wallMs: Math.min(MAX_TIMER_MS, positiveInt(limits.wallMs, DEFAULT_WALL_MS, 'wallMs')),
    memoryMb: Math.min(
      MAX_MEMORY_MB,
      positiveInt(limits.memoryMb, defaultMemoryMb(loaded), 'memoryMb', MIN_MEMORY_MB),
    ),
    maxOutputChars: positiveInt(limits.maxOutputChars, DEFAULT_MAX_OUTPUT_CHARS, 'maxOutputChars', 100),
    maxHostCalls: positiveInt(limits.maxHostCalls, DEFAULT_MAX_HOST_CALLS, 'maxHostCalls', 0),
    maxContextChars,
  };
}
