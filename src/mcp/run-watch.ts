/**
 * What an `rlm_answer` run tells its caller while it works. Progress notifications mark each root iteration
 * and sub-call, and between them a heartbeat says what the run waits on, so a client that resets its
 * timeout on progress does not give up during a slow model call or a long load. Run milestones (start,
 * end) also go out as log notifications for clients that show the server's log.
 */

import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { plural } from '../../core/plural.ts';
import type { TraceEvent } from '../runtime/trace.ts';
import type { Progress } from './progress.ts';

/** Sends one log notification; failures are the sender's to swallow. */
export type LogSender = (level: LoggingLevel, data: string) => void;

/** Watches one run: feed it trace events, start its heartbeat, stop it when the run ends. */
export class RunWatch {
  readonly #progress: Progress;
  readonly #log: LogSender;
  readonly #heartbeatMs: number;
  readonly #now: () => number;
  #phase = 'starting';
  #phaseSince: number;
  #lastSent: number;
  #maxIterations = 0;
  #iteration = 0;
  #subCalls = 0;
  #openSubCalls = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(progress: Progress, log: LogSender, heartbeatMs: number, now: () => number = Date.now) {
    this.#progress = progress;
    this.#log = log;
    this.#heartbeatMs = heartbeatMs;
    this.#now = now;
    this.#phaseSince = now();
    this.#lastSent = now();
  }

  /** Starts the heartbeat (only when the caller asked for progress). */
  start(): void {
    if (!this.#progress.enabled || this.#timer !== undefined) return;
    // Ticks at a fraction of the period so a beat is never much later than due.
    this.#timer = setInterval(() => this.beat(), Math.max(50, Math.floor(this.#heartbeatMs / 4)));
    this.#timer.unref();
  }

  /** Stops the heartbeat. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Says what the run waits on now; the next heartbeat repeats it. */
  phase(what: string, report = false): void {
    this.#phase = what;
    this.#phaseSince = this.#now();
    if (report) this.#send(what);
  }

  /** Sends a heartbeat when nothing was sent for a period. Public so tests can drive it without timers. */
  beat(): void {
    const now = this.#now();
    if (now - this.#lastSent < this.#heartbeatMs) return;
    const secs = Math.round((now - this.#phaseSince) / 1000);
    this.#send(`still ${this.#phase} (${secs} s)`);
  }

  /** Turns a trace event into progress, phase and log messages. */
  onEvent(e: TraceEvent): void {
    switch (e.type) {
      case 'run_start':
        this.#maxIterations = e.maxIterations;
        this.#log(
          'info',
          `run ${e.run} started: model ${e.model}, ${e.context.chars.toLocaleString('en-US')} characters of context`,
        );
        this.#waitModel(1);
        break;
      case 'model_call':
        if (e.depth !== 0) break;
        this.#send(
          e.kind === 'last_call'
            ? 'out of iterations: asking for the final answer'
            : `iteration ${e.iteration} of ${this.#maxIterations}: model replied`,
        );
        this.phase(`running the code of iteration ${e.iteration}`);
        break;
      case 'output':
        if (e.depth === 0) this.#waitModel(e.iteration + 1);
        break;
      case 'subcall_start': {
        this.#subCalls++;
        this.#openSubCalls++;
        const prompt = e.prompt.replace(/\s+/g, ' ').trim();
        const preview = prompt.length > 80 ? `${prompt.slice(0, 80)}…` : prompt;
        this.#send(
          `sub-call ${this.#subCalls} at depth ${e.calleeDepth}${e.cached ? ' (cached)' : ''}: ${preview}`,
        );
        this.phase(this.#subCallPhase());
        break;
      }
      case 'subcall_end':
        this.#openSubCalls = Math.max(0, this.#openSubCalls - 1);
        if (this.#openSubCalls > 0) this.phase(this.#subCallPhase());
        else this.phase(`running the code of iteration ${this.#iteration}`);
        break;
      case 'run_end': {
        const r = e.result;
        this.#log(
          r.status === 'error' ? 'error' : 'info',
          `run ${e.run} ${r.status} after ${plural(r.iterations, 'iteration')}, ${plural(r.subCalls, 'sub-call')}, ` +
            `$${r.usage.costUsd.toFixed(4)}, ${r.elapsedMs} ms`,
        );
        break;
      }
      default:
        break;
    }
  }

  #waitModel(iteration: number): void {
    this.#iteration = iteration;
    this.phase(`waiting for the model (iteration ${iteration} of ${this.#maxIterations})`);
  }

  #subCallPhase(): string {
    return `waiting for ${this.#openSubCalls} sub-call${this.#openSubCalls === 1 ? '' : 's'} (iteration ${this.#iteration})`;
  }

  #send(message: string): void {
    this.#lastSent = this.#now();
    this.#progress.report(message);
  }
}
