import { plural } from '../../core/plural.ts';
import type { TraceEvent } from '../runtime/trace.ts';

/**
 * The live status of a run on stderr (iteration, depth, sub-calls, tokens, cost), redrawn in place.
 * Silent when stderr is not a terminal, so scripts and logs get only the final summary.
 */
export class StatusLine {
  private readonly out: { write(s: string): unknown; isTTY?: boolean; columns?: number };
  private iteration = 0;
  private depth = 0;
  private subCalls = 0;
  private tokens = 0;
  private cost = 0;
  private last = 0;
  private drawn = false;
  private readonly started = Date.now();

  constructor(out: { write(s: string): unknown; isTTY?: boolean; columns?: number }) {
    this.out = out;
  }

  event(e: TraceEvent): void {
    if (e.type === 'model_call') {
      if (e.depth === 0) this.iteration = e.iteration;
      this.tokens +=
        e.usage.inputTokens +
        e.usage.outputTokens +
        (e.usage.cacheReadTokens ?? 0) +
        (e.usage.cacheWriteTokens ?? 0);
      this.cost += e.costUsd;
    } else if (e.type === 'subcall_start' && !e.cached) {
      this.subCalls++;
      this.depth = Math.max(this.depth, e.calleeDepth);
    }
    this.draw();
  }

  private draw(): void {
    if (this.out.isTTY !== true) return;
    const now = Date.now();
    if (now - this.last < 80) return;
    this.last = now;
    const secs = ((now - this.started) / 1000).toFixed(0);
    const line = `iteration ${this.iteration} · depth ${this.depth} · ${plural(this.subCalls, 'sub-call')} · ${plural(this.tokens, 'token')} · $${this.cost.toFixed(4)} · ${secs}s`;
    this.out.write(`\r\x1b[2K${line.slice(0, (this.out.columns ?? 100) - 1)}`);
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) this.out.write('\r\x1b[2K');
    this.drawn = false;
  }
}
