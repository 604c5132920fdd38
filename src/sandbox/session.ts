/**
 * `IsolateSandbox`: one session, whose isolate (with its context) lives in an isolate process of its
 * own (process/pool.ts) and persists across blocks, so that a block's top-level declarations are
 * visible to the next one (see rewrite.ts).
 *
 * A block: validate (acorn) and rewrite here → compile and run in the isolate process, under
 * isolated-vm's execution timeout (`cpuMs`), a host timer (`wallMs`) and the process watchdog (`cpuMs`
 * plus a grace period, host-call time excluded). Host calls come back here as messages and are served
 * by the bridge. The outcomes (finish.ts):
 * - CPU timeout: isolated-vm terminates the script; the isolate survives (TIMEOUT, no reset).
 * - A block still waiting when its call returns waits on a promise nothing can settle (host calls are
 *   synchronous): reported at once, the session kept.
 * - Wall-clock limit or abort: pending and later host calls fail at once; if the block has not ended
 *   a moment later its process is killed (reset).
 * - The isolate does not yield (V8 inside one uninterruptible step past the CPU limit, or a
 *   catastrophic V8 error): the process is killed (TIMEOUT or RUNTIME, reset). Killing is what frees
 *   the CPU and lets the host exit; isolated-vm cannot stop such a thread inside a process.
 * - Memory limit: isolated-vm disposes the isolate (MEMORY_LIMIT, reset).
 * Fatal outcomes keep what the block printed before the stop (the output mirror, mirror.ts). After a
 * reset the next block gets a fresh process and isolate; the result says variables were lost.
 */
import { isRlmError, RlmError } from '../../core/errors.ts';
import { type ContextMode, HostBridge } from './bridge.ts';
import {
  type ContextCache,
  type ContextDocument,
  contextDocuments,
  type SharedContext,
  sharedContexts,
} from './context-registry.ts';
import {
  blockResult,
  type Collected,
  finishBlock,
  type Outcome,
  type StopCode,
  type Stopped,
} from './finish.ts';
import type { SandboxHost } from './host.ts';
import { type ResolvedLimits, resolveLimits } from './limits.ts';
import { errorMessage, parseEnvelope } from './outcome.ts';
import { MARKER_PARTS } from './output.ts';
import type { PreludeConfig } from './prelude/index.ts';
import {
  acquireProcess,
  type IsolateProcess,
  ProcessStuck,
  releaseProcess,
  scheduleSpare,
} from './process/pool.ts';

export { prestartProcess as prestartSandbox } from './process/pool.ts';

import type { EntryReply, RunReply } from './process/protocol.ts';
import { type RewrittenBlock, rewriteBlock } from './rewrite.ts';
import type { BlockError, BlockResult, Sandbox, SandboxLimits } from './types.ts';
import { validateBlock } from './validate.ts';

/** Seams for tests and embedders. */
export interface SandboxDeps {
  /** Where context documents are registered (default: the process-wide registry). */
  contexts?: ContextCache;
  /** Prepare a spare process and isolate in idle time so the next session starts faster (default true). */
  prewarm?: boolean;
  /**
   * Run time, ms, a request may take past its own limit before the isolate's process is killed (default
   * {@link killGraceMs} of that limit: 2 to 10 s). Tests set it short so that a step V8 cannot interrupt
   * reaches the kill whatever the machine's speed, instead of ending first on a fast machine.
   */
  killGraceMs?: number;
}

/** Time a stopped block gets to unwind on its own before its process is killed. */
const STOP_GRACE_MS = 100;
/**
 * Time the isolate may run past a limit before its process is killed. isolated-vm's own timeout
 * normally answers first; V8 checks for termination only between steps, and on a loaded machine a
 * terminated block takes a while to unwind, hence the generous share of the limit itself.
 */
export function killGraceMs(limitMs: number): number {
  return Math.max(2000, Math.min(limitMs / 2, 10_000));
}
/** Time `collect` may take (it only copies the output buffer). */
const COLLECT_TIMEOUT_MS = 1000;
/**
 * Wall time reading the output mirror of a process about to be killed may take: a reply from its main
 * thread, which the stuck isolate's thread competes with for a core (on a loaded machine, for long).
 */
const SALVAGE_MS = 2000;
/**
 * CPU time an isolate process is allowed for receiving context documents, on top of its open: a
 * millisecond per 10,000 characters (10 s for 100 MB), tens of times what decoding and copying take.
 */
const RECEIVE_CHARS_PER_MS = 10_000;

export class IsolateSandbox implements Sandbox {
  readonly limits: ResolvedLimits;
  private readonly bridge: HostBridge;
  private readonly config: PreludeConfig;
  private readonly context: SharedContext | null;
  private readonly prewarm: boolean;
  /** Grace past `limitMs` before a kill (see {@link SandboxDeps.killGraceMs}). */
  private readonly grace: (limitMs: number) => number;
  private proc: IsolateProcess | null = null;
  /** The answer to the current process's `open`: null once open, or why it failed. */
  private opening: Promise<Error | null> = Promise.resolve(null);
  /** Set when the process died outside a block: the next block reports the reset. */
  private lostUnnoticed = false;
  private queue: Promise<unknown> = Promise.resolve();
  private blocks = 0;
  private disposed = false;
  /** Fires on dispose: a process still starting for this session is killed, not kept. */
  private readonly disposal = new AbortController();
  /** Stops the running block (wall clock, abort, dispose, catastrophe). */
  private stopCurrent: ((code: StopCode, message: string, now: boolean) => void) | null = null;

  constructor(host: SandboxHost, limits: SandboxLimits = {}, deps: SandboxDeps = {}) {
    // A run's --context files come as sources the process reads through the host, not as text.
    const files = host.context === undefined ? host.contextFiles : undefined;
    const docs: readonly ContextDocument[] = files?.map((f) => f.text) ?? contextDocuments(host.context);
    const chars = docs.reduce((n, d) => n + (typeof d === 'string' ? d.length : d.chars), 0);
    this.limits = resolveLimits(limits, chars);
    const mode: ContextMode =
      docs.length === 0 ? 'none' : chars <= this.limits.maxContextChars ? 'loaded' : 'host';
    this.context = mode === 'loaded' ? (deps.contexts ?? sharedContexts).acquire(docs) : null;
    this.prewarm = deps.prewarm !== false;
    const fixedGrace = deps.killGraceMs;
    this.grace = fixedGrace === undefined ? killGraceMs : () => fixedGrace;
    this.bridge = new HostBridge({
      host,
      documents: contextDocuments(host.context),
      contextMode: mode,
      maxHostCalls: this.limits.maxHostCalls,
    });
    this.config = {
      maxOutputChars: this.limits.maxOutputChars,
      marker: MARKER_PARTS,
      llm: host.llmQuery !== undefined || host.llmQueryBatched !== undefined,
      store: host.store !== undefined,
      context: mode,
      contextShape: (files === undefined ? typeof host.context === 'string' : files.length === 1)
        ? 'string'
        : 'array',
      // Loaded files answer grep and peek(id) in the isolate by their store ids and shown paths.
      documents:
        mode === 'loaded' && files !== undefined ? files.map((f) => ({ id: f.id, path: f.path })) : null,
      memoryMb: this.limits.memoryMb,
    };
  }

  /** Pid of the process hosting this session's isolate, null when none is open (tests, diagnostics). */
  get pid(): number | null {
    return this.proc !== null && !this.proc.dead ? this.proc.pid : null;
  }

  /** Takes a process and opens the first isolate in it (awaited by the first block). */
  async start(): Promise<void> {
    await this.takeProcess();
  }

  run(code: string, signal?: AbortSignal): Promise<BlockResult> {
    const next = this.queue.then(() => this.runNow(code, signal));
    this.queue = next.catch(() => undefined);
    return next;
  }

  readVariable(name: string): Promise<string | undefined> {
    const next = this.queue.then(() => this.readNow(name));
    this.queue = next.catch(() => undefined);
    return next;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.disposal.abort();
    const proc = this.proc;
    this.proc = null;
    if (this.stopCurrent) this.stopCurrent('ABORTED', 'the sandbox was disposed', true);
    else if (proc !== null) releaseProcess(proc);
    this.context?.release();
    void this.bridge.close();
  }

  /**
   * The session's process with its isolate open. The `open` request is sent when the process is taken
   * and awaited here, so a session start costs no round trip: the isolate opens while the caller
   * prepares its first block (a model reply, in a run).
   */
  private async ensureProcess(): Promise<IsolateProcess> {
    const proc = await this.takeProcess();
    const failure = await this.opening;
    if (failure !== null) {
      this.drop(proc);
      throw failure;
    }
    return proc;
  }

  /** Takes a process and sends it the session's documents and `open`, without waiting for the answer. */
  private async takeProcess(): Promise<IsolateProcess> {
    if (this.proc !== null && !this.proc.dead) return this.proc;
    if (this.proc !== null) {
      this.proc = null;
      this.lostUnnoticed = true;
    }
    const ids = this.context?.ids ?? [];
    // The spare for the next session starts once this one is open, not while this process takes in a
    // big context: both would compete for the CPU, and the spare's memory would add to the peak.
    const proc = await acquireProcess(this.limits.memoryMb, ids, this.disposal.signal).catch(
      (err: unknown) => {
        throw this.disposed ? new Error('the sandbox was disposed') : err;
      },
    );
    if (this.disposed) {
      releaseProcess(proc);
      throw new Error('the sandbox was disposed');
    }
    proc.onHostCall = (request) => this.bridge.handle(request);
    proc.onCatastrophe = (message) => this.onCatastrophe(proc, message);
    const setupTimeoutMs = Math.max(this.limits.cpuMs, 1000);
    const sent = proc.sendDocuments(ids, this.context?.documents ?? []);
    proc.docs = new Set(ids);
    this.opening = proc
      .call(
        {
          op: 'open',
          memoryMb: this.limits.memoryMb,
          setupTimeoutMs,
          config: this.config,
          docs: [...ids],
          prewarm: this.prewarm,
        },
        // Receiving the documents is part of the open: decoding costs the process CPU time.
        setupTimeoutMs + this.grace(setupTimeoutMs) + Math.ceil(sent / RECEIVE_CHARS_PER_MS),
      )
      .then(
        () => {
          if (this.prewarm) scheduleSpare();
          return null;
        },
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      );
    this.proc = proc;
    return proc;
  }

  private onCatastrophe(proc: IsolateProcess, message: string): void {
    if (this.proc !== proc) return;
    const memory = /memory/i.test(message);
    const text = memory
      ? `memory limit of ${this.limits.memoryMb} MB exceeded and V8 could not recover`
      : `the block could not be stopped (V8: ${message}); avoid huge sparse arrays and giant single operations`;
    if (this.stopCurrent) this.stopCurrent(memory ? 'MEMORY_LIMIT' : 'TIMEOUT', text, true);
    else {
      this.lostUnnoticed = true;
      this.drop(proc);
    }
  }

  private drop(proc: IsolateProcess): void {
    proc.kill();
    if (this.proc === proc) this.proc = null;
  }

  private async runNow(code: string, signal: AbortSignal | undefined): Promise<BlockResult> {
    const started = performance.now();
    this.bridge.hostCalls = 0;
    const early = { started, maxOutputChars: this.limits.maxOutputChars, hostCalls: () => 0 };
    const refuse = (error: BlockError) => blockResult(early, 0, { error });
    if (this.disposed) return refuse({ code: 'ABORTED', message: 'the sandbox was disposed' });
    if (signal?.aborted) return refuse({ code: 'ABORTED', message: 'aborted before the block ran' });
    if (typeof code !== 'string') return refuse({ code: 'VALIDATION', message: 'the block is not a string' });

    let block: RewrittenBlock;
    try {
      const checked = validateBlock(code);
      if (!checked.ok) {
        const { code: c, rule, message, line, column } = checked.issue;
        return refuse({ code: c, rule, message, line, column });
      }
      block = rewriteBlock(checked.program, code);
    } catch {
      // The parser and the walks guard their recursion; this is the backstop that keeps `run` from
      // ever rejecting (and a host stack from reaching the model) over a block's shape.
      return refuse({ code: 'VALIDATION', message: 'the block could not be checked; simplify or split it' });
    }

    let proc: IsolateProcess;
    try {
      proc = await this.ensureProcess();
    } catch (err) {
      return refuse({ code: 'RUNTIME', message: `the sandbox could not start: ${errorMessage(err)}` });
    }
    const reset = this.lostUnnoticed;
    this.lostUnnoticed = false;
    const file = `block${++this.blocks}.js`;

    this.bridge.begin();
    let stopped: Stopped | null = null;
    const outcome = await new Promise<Outcome>((resolve) => {
      let settled = false;
      let grace: ReturnType<typeof setTimeout> | undefined;
      const finish = (o: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(wall);
        clearTimeout(grace);
        signal?.removeEventListener('abort', onAbort);
        this.stopCurrent = null;
        resolve(o);
      };
      const stop = (code: StopCode, message: string, now: boolean) => {
        if (settled) return;
        stopped ??= { code, message };
        this.bridge.expire(message);
        if (now) finish({ kind: 'stuck', code, message });
        else grace ??= setTimeout(() => finish({ kind: 'stuck', code, message }), STOP_GRACE_MS);
      };
      const onAbort = () => stop('ABORTED', 'the block was aborted', false);
      const wall = setTimeout(
        () => stop('TIMEOUT', `wall-clock limit of ${this.limits.wallMs} ms reached`, false),
        this.limits.wallMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.stopCurrent = stop;
      const { source, lineOffset, declared } = block;
      proc
        .call<RunReply>(
          { op: 'run', source, file, lineOffset, declared, cpuMs: this.limits.cpuMs },
          this.limits.cpuMs + this.grace(this.limits.cpuMs),
        )
        .then(
          (reply) => finish({ kind: 'reply', reply }),
          (err: unknown) =>
            finish(
              err instanceof ProcessStuck
                ? {
                    kind: 'stuck',
                    code: 'TIMEOUT',
                    message: `CPU time limit of ${this.limits.cpuMs} ms reached and the block did not stop (V8 was inside one long step, such as compiling a huge regex or sorting a huge array); its process was ended`,
                  }
                : { kind: 'stuck', code: 'RUNTIME', message: 'the sandbox stopped unexpectedly' },
            ),
        );
    });
    this.bridge.end();
    return finishBlock(
      outcome,
      stopped,
      {
        started,
        notice: reset
          ? '[The sandbox was reset: variables and functions from earlier blocks are gone.]\n'
          : '',
        reset,
        file,
        block,
        cpuLimitMs: this.limits.cpuMs,
        memoryMb: this.limits.memoryMb,
        maxOutputChars: this.limits.maxOutputChars,
        hostCalls: () => this.bridge.hostCalls,
      },
      {
        collect: () => this.collect(proc),
        salvage: () => proc.salvage(SALVAGE_MS),
        drop: () => this.drop(proc),
      },
    );
  }

  /**
   * Output and final of a block the CPU limit stopped (still in the isolate's buffer); also what makes
   * isolated-vm's bookkeeping of rejected promises start clean again. Null when even that failed: the
   * process must then be dropped.
   */
  private async collect(proc: IsolateProcess): Promise<Collected | null> {
    try {
      const r = await proc.call<EntryReply>(
        { op: 'collect', timeoutMs: COLLECT_TIMEOUT_MS },
        COLLECT_TIMEOUT_MS + this.grace(COLLECT_TIMEOUT_MS),
      );
      if (r.status !== 'delivered') return null;
      const env = parseEnvelope(r.value);
      const inGrep = (JSON.parse(r.value) as { inGrep?: unknown }).inGrep === true;
      return { stdout: env.stdout, final: env.final, inGrep };
    } catch {
      return null;
    }
  }

  private async readNow(name: string): Promise<string | undefined> {
    if (this.disposed || typeof name !== 'string') return undefined;
    const proc = this.proc;
    if (proc === null || proc.dead || (await this.opening) !== null) return undefined;
    let r: EntryReply;
    try {
      r = await proc.call<EntryReply>(
        { op: 'readVar', name, timeoutMs: this.limits.cpuMs },
        this.limits.cpuMs + this.grace(this.limits.cpuMs),
      );
    } catch {
      // Stuck past the CPU limit (a getter V8 cannot interrupt), or gone: a fresh process next time.
      this.lostUnnoticed = true;
      this.drop(proc);
      return undefined;
    }
    if (r.status === 'delivered') {
      const parsed = JSON.parse(r.value) as { found?: unknown; value?: unknown };
      return parsed.found === true && typeof parsed.value === 'string' ? parsed.value : undefined;
    }
    // Stopped by the CPU limit (a getter that loops): flush before anything else runs there.
    if (r.status === 'failed' && (r.disposed || (await this.collect(proc)) === null)) {
      this.lostUnnoticed = true;
      this.drop(proc);
    }
    return undefined;
  }
}

/**
 * Starts a sandbox session for `host` (context, store, sub-call functions) under `limits`.
 * @throws RlmError VALIDATION for bad limits, RUNTIME when the isolate cannot be created.
 */
export async function createSandbox(
  host: SandboxHost,
  limits?: SandboxLimits,
  deps?: SandboxDeps,
): Promise<Sandbox> {
  const sandbox = new IsolateSandbox(host, limits, deps);
  try {
    await sandbox.start();
  } catch (err) {
    sandbox.dispose();
    if (isRlmError(err)) throw err;
    throw new RlmError('RUNTIME', `could not start the sandbox: ${errorMessage(err)}`, {}, { cause: err });
  }
  return sandbox;
}
