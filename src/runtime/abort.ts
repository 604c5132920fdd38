/**
 * Cancellation helpers. A run has one AbortSignal that fires on the caller's signal or when a budget trips;
 * every await on something slow (a model, a sandbox block, a semaphore) races it so the run stops promptly
 * even when the awaited thing ignores signals.
 */
import { isRlmError, RlmError } from '../../core/errors.ts';

/** The error a run's signal was aborted with: the budget error that tripped it, or ABORTED. */
export function abortError(signal: AbortSignal): RlmError {
  const reason: unknown = signal.reason;
  if (isRlmError(reason)) return reason;
  return new RlmError('ABORTED', 'the run was cancelled', {}, { cause: reason });
}

/** Throws {@link abortError} when the signal has fired. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

/** Settles like `work`, or rejects with {@link abortError} as soon as `signal` fires, whichever is first. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** A controller that aborts when any of `parents` does, with the parent's reason. */
export function linkedController(...parents: (AbortSignal | undefined)[]): AbortController {
  const ctl = new AbortController();
  for (const p of parents) {
    if (p === undefined) continue;
    if (p.aborted) {
      ctl.abort(p.reason);
      break;
    }
    p.addEventListener('abort', () => ctl.abort(p.reason), { once: true, signal: ctl.signal });
  }
  return ctl;
}
