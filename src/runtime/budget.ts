/**
 * Run-wide limits and accounting, shared by the root and every sub-call of one run. When a limit is
 * crossed the budget "trips": it records the error and calls `onTrip`, which aborts the run's signal, so
 * model code cannot catch the failure and carry on. Limits live on the host; nothing the model writes or
 * reads can change them.
 */
import { RlmError } from '../../core/errors.ts';
import type { Usage } from './model.ts';

/** Which limit tripped. */
export type BudgetKind = 'subCalls' | 'tokens' | 'cost' | 'wallTime';

/** Run-wide limits; `Infinity` means unlimited. */
export interface BudgetLimits {
  maxSubCalls: number;
  /** Input plus output tokens over all calls. */
  maxTokens: number;
  maxCostUsd: number;
  maxWallMs: number;
}

/** Usage of one model (by spec) over the run. */
export interface ModelUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** False when at least one call had no known price (its cost counted as 0). */
  costKnown: boolean;
}

/** Accounting for one run. */
export class Budget {
  readonly limits: Readonly<BudgetLimits>;
  inputTokens = 0;
  outputTokens = 0;
  costUsd = 0;
  /** Sub-calls actually made (cache hits and refused calls excluded). */
  subCalls = 0;
  readonly byModel = new Map<string, ModelUsage>();
  #tripped: RlmError | null = null;
  readonly #onTrip: (err: RlmError) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(limits: BudgetLimits, onTrip: (err: RlmError) => void) {
    this.limits = limits;
    this.#onTrip = onTrip;
  }

  /** The error of the limit that tripped, or null. */
  get tripped(): RlmError | null {
    return this.#tripped;
  }

  /** Starts the wall-clock limit; the timer does not keep the process alive. */
  startClock(): void {
    if (!Number.isFinite(this.limits.maxWallMs)) return;
    this.#timer = setTimeout(
      () => this.#trip('wallTime', `wall-time budget of ${this.limits.maxWallMs} ms exceeded`),
      this.limits.maxWallMs,
    );
    this.#timer.unref?.();
  }

  /** Stops the wall-clock timer (end of run). */
  stopClock(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Adds one model call's usage; trips when tokens or cost cross their limit. */
  recordCall(spec: string, usage: Usage, costUsd: number, costKnown: boolean): void {
    this.inputTokens += usage.inputTokens;
    this.outputTokens += usage.outputTokens;
    this.costUsd += costUsd;
    const m = this.byModel.get(spec) ?? {
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      costKnown: true,
    };
    m.calls++;
    m.inputTokens += usage.inputTokens;
    m.outputTokens += usage.outputTokens;
    m.costUsd += costUsd;
    m.costKnown &&= costKnown;
    this.byModel.set(spec, m);
    const tokens = this.inputTokens + this.outputTokens;
    if (tokens > this.limits.maxTokens) {
      this.#trip('tokens', `token budget of ${this.limits.maxTokens} exceeded (${tokens} used)`);
    } else if (this.costUsd > this.limits.maxCostUsd) {
      this.#trip(
        'cost',
        `cost budget of $${this.limits.maxCostUsd} exceeded ($${this.costUsd.toFixed(4)} spent)`,
      );
    }
  }

  /** Counts a sub-call about to be made; trips and throws when it would exceed the limit. */
  reserveSubCall(): void {
    if (this.subCalls >= this.limits.maxSubCalls) {
      throw this.#trip('subCalls', `sub-call budget of ${this.limits.maxSubCalls} exhausted`);
    }
    this.subCalls++;
  }

  /**
   * Claims up to `n` sub-calls at once for a batch, before any starts: returns how many fit (the caller
   * refuses the rest). Never trips: a batch that does not fit is the model's to reshape.
   */
  claimSubCalls(n: number): number {
    if (this.#tripped !== null) return 0;
    const granted = Math.max(0, Math.min(n, this.limits.maxSubCalls - this.subCalls));
    this.subCalls += granted;
    return granted;
  }

  /** Gives back claimed sub-calls that were not made (a cache hit, an aborted batch). */
  refundSubCall(n = 1): void {
    this.subCalls = Math.max(0, this.subCalls - n);
  }

  /** Throws the tripped error, if any: a cheap check before starting more work. */
  assertOpen(): void {
    if (this.#tripped !== null) throw this.#tripped;
  }

  #trip(kind: BudgetKind, message: string): RlmError {
    if (this.#tripped !== null) return this.#tripped;
    const err = new RlmError('BUDGET_EXCEEDED', message, { limit: kind });
    this.#tripped = err;
    this.stopClock();
    this.#onTrip(err);
    return err;
  }
}
