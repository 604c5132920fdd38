/**
 * The one retry policy for every HTTP client in rlm: the `openai:` chat provider and the OpenAI-compatible
 * embedder (plain `fetch`, through {@link postJson}) and the `anthropic:` provider (the SDK, told to make
 * one attempt per call: `maxRetries: 0`). Each client makes single attempts; this module decides whether
 * and when to try again:
 *
 * - retry 408, 409, 429 and 5xx (529 "overloaded" included), network errors and timeouts; nothing else;
 * - wait what the server asks through `retry-after-ms` or `retry-after` (seconds or an HTTP date), capped at
 *   `maxRetryAfterMs` (60 s) so a server asking for an hour cannot stall a run;
 * - otherwise back off exponentially from `baseMs` (500 ms), doubling up to `maxMs` (8 s), minus up to 25%
 *   jitter;
 * - an abort of the caller's signal ends the wait at once with ABORTED;
 * - error messages never carry the API key ({@link redactSecrets}).
 *
 * It lives beside `errors.ts`, below both `src/` and `memory/`, because both use it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { RlmError } from './errors.ts';
import type { ResponseHeaders } from './http-request.ts';

/** How long to wait between attempts. All values in milliseconds. */
export interface BackoffOptions {
  /** Delay before the first retry, before jitter (default 500). */
  baseMs?: number;
  /** Ceiling of the computed backoff (default 8000). */
  maxMs?: number;
  /** Ceiling for a server-sent `Retry-After`; a server asking for an hour must not stall a run (default 60000). */
  maxRetryAfterMs?: number;
}

const DEFAULT_BACKOFF: Required<BackoffOptions> = {
  baseMs: 500,
  maxMs: 8000,
  maxRetryAfterMs: 60_000,
};

/**
 * Delay before retry number `attempt` (0 = first retry): `base * 2^attempt`, capped, minus up to 25%
 * jitter so that many clients throttled together do not retry in lockstep.
 */
export function backoffDelay(
  attempt: number,
  opts: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const base = opts.baseMs ?? DEFAULT_BACKOFF.baseMs;
  const max = opts.maxMs ?? DEFAULT_BACKOFF.maxMs;
  const raw = Math.min(base * 2 ** attempt, max);
  return raw * (1 - random() * 0.25);
}

/**
 * The wait a response asks for through `retry-after-ms` or `retry-after` (delta-seconds or an HTTP
 * date), capped at `maxMs`. Undefined when there is no usable header, so the caller falls back to
 * its own backoff.
 */
export function parseRetryAfter(
  headers: ResponseHeaders,
  maxMs: number = DEFAULT_BACKOFF.maxRetryAfterMs,
  now: number = Date.now(),
): number | undefined {
  let ms: number | undefined;
  const millis = headers.get('retry-after-ms');
  if (millis !== null && millis.trim() !== '') {
    const n = Number(millis);
    if (Number.isFinite(n)) ms = n;
  }
  const value = headers.get('retry-after');
  if (ms === undefined && value !== null && value.trim() !== '') {
    const seconds = Number(value);
    if (Number.isFinite(seconds)) {
      ms = seconds * 1000;
    } else {
      const at = Date.parse(value);
      if (!Number.isNaN(at)) ms = at - now;
    }
  }
  if (ms === undefined) return undefined;
  // A date in the past means "now"; a negative delta is nonsense but harmless the same way.
  return Math.min(Math.max(ms, 0), maxMs);
}

/** HTTP statuses worth another attempt: timeouts, conflicts, rate limits and server errors (incl. 529). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * `text` with every occurrence of each secret replaced by `[redacted]`. Some servers echo the key back in
 * their error bodies. Secrets under 8 characters are left alone: a placeholder key such as `x` would shred
 * ordinary words, and is no secret.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 8) out = out.split(secret).join('[redacted]');
  }
  return out;
}

/** How long to wait before retry number `attempt` (0 = first retry) after a failure with these headers. */
export function retryDelay(
  attempt: number,
  headers: ResponseHeaders | undefined,
  opts: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const asked = headers && parseRetryAfter(headers, opts.maxRetryAfterMs ?? DEFAULT_BACKOFF.maxRetryAfterMs);
  return asked ?? backoffDelay(attempt, opts, random);
}

/** What one attempt of {@link withRetries} produced. */
export type AttemptOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: Error; retryable: boolean; headers?: ResponseHeaders };

/** Options of {@link withRetries}. */
export interface RetryOptions {
  /** Attempts after the first one. */
  maxRetries: number;
  backoff?: BackoffOptions;
  signal?: AbortSignal | undefined;
  /** Names the caller in the ABORTED error. */
  name: string;
  /** Seam for tests (default: the abortable {@link sleep}). */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or `maxRetries` retries are used up, waiting
 * {@link retryDelay} between attempts. Throws the last failure's error.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<AttemptOutcome<T>>,
  opts: RetryOptions,
): Promise<T> {
  const wait = opts.sleep ?? ((ms: number, signal: AbortSignal | undefined) => sleep(ms, signal, opts.name));
  for (let n = 0; ; n++) {
    if (opts.signal?.aborted) throw abortedError(opts.name);
    const outcome = await attempt(n);
    if (outcome.ok) return outcome.value;
    if (!outcome.retryable || n >= opts.maxRetries) throw outcome.error;
    await wait(retryDelay(n, outcome.headers, opts.backoff), opts.signal);
  }
}

/** The error every HTTP client raises when the caller's signal fires. */
export function abortedError(provider: string): RlmError {
  return new RlmError('ABORTED', `${provider}: request aborted`);
}

/** Sleeps `ms`, rejecting with ABORTED as soon as `signal` fires. */
export async function sleep(ms: number, signal?: AbortSignal, provider = 'model'): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : {});
  } catch (err) {
    if (signal?.aborted) throw abortedError(provider);
    throw err;
  }
}
