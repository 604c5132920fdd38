import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import {
  type AttemptOutcome,
  backoffDelay,
  isRetryableStatus,
  parseRetryAfter,
  redactSecrets,
  retryDelay,
  sleep,
  withRetries,
} from '../../core/http-retry.ts';

describe('backoffDelay', () => {
  it('doubles from the base, caps, and jitters down by at most 25%', () => {
    expect(backoffDelay(0, { baseMs: 100 }, () => 0)).toBe(100);
    expect(backoffDelay(3, { baseMs: 100 }, () => 0)).toBe(800);
    expect(backoffDelay(10, { baseMs: 100, maxMs: 1000 }, () => 0)).toBe(1000);
    expect(backoffDelay(0, { baseMs: 100 }, () => 0.999)).toBeCloseTo(75.025);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  const h = (init: Record<string, string>) => new Headers(init);

  it('reads seconds, milliseconds and HTTP dates', () => {
    expect(parseRetryAfter(h({ 'retry-after': '2' }), 60_000, now)).toBe(2000);
    expect(parseRetryAfter(h({ 'retry-after': '0.5' }), 60_000, now)).toBe(500);
    expect(parseRetryAfter(h({ 'retry-after-ms': '250', 'retry-after': '9' }), 60_000, now)).toBe(250);
    expect(parseRetryAfter(h({ 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' }), 60_000, now)).toBe(7000);
  });

  it('caps long waits, floors past dates at zero, ignores garbage', () => {
    expect(parseRetryAfter(h({ 'retry-after': '3600' }), 60_000, now)).toBe(60_000);
    expect(parseRetryAfter(h({ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }), 60_000, now)).toBe(0);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }), 60_000, now)).toBeUndefined();
    expect(parseRetryAfter(h({}), 60_000, now)).toBeUndefined();
  });
});

describe('isRetryableStatus', () => {
  it('retries throttling and server errors only', () => {
    expect([408, 409, 429, 500, 502, 503, 529].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 422].some(isRetryableStatus)).toBe(false);
  });
});

describe('sleep', () => {
  it('rejects with ABORTED when the signal fires', async () => {
    const ctl = new AbortController();
    const p = sleep(60_000, ctl.signal);
    ctl.abort();
    await expect(p).rejects.toSatisfy((e: unknown) => isRlmError(e, 'ABORTED'));
    await expect(sleep(1, AbortSignal.abort())).rejects.toSatisfy((e: unknown) => isRlmError(e, 'ABORTED'));
  });
});

describe('retryDelay', () => {
  it("prefers the server's Retry-After (capped) over the backoff", () => {
    const none = () => 0;
    expect(retryDelay(2, new Headers({ 'retry-after': '3' }), {}, none)).toBe(3000);
    expect(retryDelay(2, new Headers({ 'retry-after': '3600' }), { maxRetryAfterMs: 5000 }, none)).toBe(5000);
    expect(retryDelay(2, new Headers(), { baseMs: 100 }, none)).toBe(400);
    expect(retryDelay(0, undefined, { baseMs: 100 }, none)).toBe(100);
  });
});

describe('withRetries', () => {
  const failure = (retryable: boolean, headers?: Headers): AttemptOutcome<string> => ({
    ok: false,
    retryable,
    error: new Error(retryable ? 'transient' : 'permanent'),
    ...(headers ? { headers } : {}),
  });

  it('retries transient failures, waiting as retryDelay says, until one succeeds', async () => {
    const waits: number[] = [];
    const outcomes = [failure(true, new Headers({ 'retry-after-ms': '70' })), failure(true)];
    const value = await withRetries(async (n) => outcomes[n] ?? { ok: true, value: `ok after ${n}` }, {
      maxRetries: 4,
      backoff: { baseMs: 10 },
      name: 'test',
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(value).toBe('ok after 2');
    expect(waits[0]).toBe(70);
    expect(waits[1]).toBeGreaterThanOrEqual(15);
    expect(waits[1]).toBeLessThanOrEqual(20);
  });

  it('throws the last error after maxRetries retries, and at once for a permanent failure', async () => {
    const calls: number[] = [];
    const noWait = { name: 'test', sleep: async () => {} };
    const transient = withRetries(
      async (n) => {
        calls.push(n);
        return failure(true);
      },
      { maxRetries: 2, ...noWait },
    );
    await expect(transient).rejects.toThrow('transient');
    expect(calls).toEqual([0, 1, 2]);
    calls.length = 0;
    const permanent = withRetries(
      async (n) => {
        calls.push(n);
        return failure(false);
      },
      { maxRetries: 2, ...noWait },
    );
    await expect(permanent).rejects.toThrow('permanent');
    expect(calls).toEqual([0]);
  });

  it('stops with ABORTED when the signal fires during the wait', async () => {
    const ctl = new AbortController();
    const run = withRetries(
      async () => {
        setTimeout(() => ctl.abort(), 5);
        return failure(true, new Headers({ 'retry-after': '60' }));
      },
      { maxRetries: 3, signal: ctl.signal, name: 'test' },
    );
    await expect(run).rejects.toSatisfy((e: unknown) => isRlmError(e, 'ABORTED'));
  });
});

describe('redactSecrets', () => {
  it('removes every occurrence of each key, but leaves placeholder keys under 8 characters', () => {
    expect(redactSecrets('bad key sk-abcdef123 (sk-abcdef123)', ['sk-abcdef123', undefined])).toBe(
      'bad key [redacted] ([redacted])',
    );
    expect(redactSecrets('a sexy text', ['x'])).toBe('a sexy text');
  });
});
