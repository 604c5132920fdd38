/**
 * One live isolate of a session: the isolate, its context with the prelude installed, and References
 * to the prelude's entry points. It lives in an isolate process (process/child.ts), never in the host.
 *
 * Creating an isolate and its context and hardening it costs about 2 ms, which sits on the path of
 * every sub-RLM start. So after a session takes an isolate, the next one is prepared in idle time (a
 * single spare, for the memory limit last asked for); the session then only pays for `init`. A spare
 * has run nothing but the prelude's first stage and holds no host object.
 */
import ivm from 'isolated-vm';
import { MIRROR_BYTES } from './mirror.ts';
import { PRELUDE_FILENAME, PRELUDE_SOURCE, type PreludeConfig } from './prelude/index.ts';
import type { Documents } from './process/held-docs.ts';

export interface RuntimeOptions {
  memoryMb: number;
  /** Timeout for setting the prelude up (it runs no model code). */
  setupTimeoutMs: number;
  config: PreludeConfig;
  /** Answers the isolate's host calls (JSON request in, JSON envelope out; never rejects). */
  handle: (request: unknown) => Promise<string>;
  /** Documents passed into the isolate when the context is loaded there: slices of blocks (held-docs.ts). */
  documents: Documents;
  /** Called by isolated-vm when V8 loses control of the isolate (see session.ts). */
  onCatastrophicError: (message: string) => void;
  /** Prepare a spare isolate for the next session in idle time (default true). */
  prewarm?: boolean;
}

type Entry<F> = ivm.Reference<F>;

/** An isolate with the prelude's first stage run, waiting for a session. */
interface Prepared {
  isolate: ivm.Isolate;
  context: ivm.Context;
  memoryMb: number;
  init: Entry<(...args: unknown[]) => unknown>;
  /** Output mirror the isolate writes its output into (see mirror.ts). */
  mirror: SharedArrayBuffer;
  /** Where catastrophic errors go; re-pointed at the session that takes the isolate. */
  onError: { current: (message: string) => void };
}

/** V8 code cache of the prelude, shared by every isolate of the process. */
let preludeCache: ivm.ExternalCopy<ArrayBuffer> | undefined;
let spare: Prepared | null = null;
let refill: NodeJS.Immediate | null = null;

const SETUP_TIMEOUT_MS = 5000;

function prepare(memoryMb: number): Prepared {
  const onError = { current: (_message: string) => {} };
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb, onCatastrophicError: (m) => onError.current(m) });
  try {
    const context = isolate.createContextSync();
    const script = isolate.compileScriptSync(PRELUDE_SOURCE, {
      filename: PRELUDE_FILENAME,
      ...(preludeCache ? { cachedData: preludeCache } : { produceCachedData: true }),
    });
    const produced = (script as ivm.Script & ivm.CachedDataResult).cachedData;
    if (!preludeCache && produced) preludeCache = produced;
    const stage1 = script.runSync(context, { reference: true, timeout: SETUP_TIMEOUT_MS });
    script.release();
    const mirror = new SharedArrayBuffer(MIRROR_BYTES);
    const init = stage1.applySync(undefined, [new ivm.ExternalCopy(mirror).copyInto({ release: true })], {
      result: { reference: true },
      timeout: SETUP_TIMEOUT_MS,
    }) as Prepared['init'];
    stage1.release();
    return { isolate, context, memoryMb, init, mirror, onError };
  } catch (err) {
    isolate.dispose();
    throw err;
  }
}

function takeSpare(memoryMb: number): Prepared | null {
  const s = spare;
  spare = null;
  if (s === null) return null;
  if (s.memoryMb === memoryMb && !s.isolate.isDisposed) return s;
  if (!s.isolate.isDisposed) s.isolate.dispose();
  return null;
}

function scheduleSpare(memoryMb: number): void {
  if (refill !== null) clearImmediate(refill);
  refill = setImmediate(() => {
    refill = null;
    if (spare !== null) return;
    try {
      spare = prepare(memoryMb);
    } catch {
      // The next session prepares its own isolate and reports what goes wrong.
    }
  });
  // A spare is an optimisation; it must never keep the process alive.
  refill.unref();
}

/** Prepares the spare isolate now (an isolate process does so before it reports ready). */
export function prepareSpare(memoryMb: number): void {
  if (spare !== null) return;
  try {
    spare = prepare(memoryMb);
  } catch {
    // The first session prepares its own isolate and reports what goes wrong.
  }
}

/** Name of the prelude's shield reasons (prelude/runner.ts), which carry an entry point's result. */
const SHIELD_NAME = 'RlmShield';

/** What an entry point call gave: its result, or nothing when it returned without one (a block that never settles). */
export type EntryResult = { delivered: true; value: string } | { delivered: false };

/**
 * Calls an entry point of the prelude. Each one rejects a shield promise first thing (see the prelude),
 * so isolated-vm fails the call with that shield's reason, whose message is "=" + the result once the
 * entry has one. Anything else (CPU limit, disposal, memory) is thrown as isolated-vm reported it.
 */
export async function callEntry(
  entry: Entry<(...args: never[]) => unknown>,
  args: unknown[],
  timeout: number,
): Promise<EntryResult> {
  try {
    await entry.apply(undefined, args as never[], { timeout, result: { copy: true } });
  } catch (err) {
    if (err instanceof Error && err.name === SHIELD_NAME) {
      const message = err.message;
      return message.startsWith('=') ? { delivered: true, value: message.slice(1) } : { delivered: false };
    }
    throw err;
  }
  // No shield reached the host: the isolate's state is not what the prelude left.
  throw new Error('the sandbox returned no result');
}

export class IsolateRuntime {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  readonly runBlock: Entry<(fn: unknown, file: string, names: string) => void>;
  readonly collect: Entry<() => string>;
  readonly readVar: Entry<(name: string) => string>;
  readonly mirror: SharedArrayBuffer;
  private readonly hostRef: Entry<(request: string) => Promise<string>>;
  private released = false;

  private constructor(
    prepared: Prepared,
    api: [IsolateRuntime['runBlock'], IsolateRuntime['collect'], IsolateRuntime['readVar']],
    hostRef: IsolateRuntime['hostRef'],
  ) {
    this.isolate = prepared.isolate;
    this.context = prepared.context;
    this.mirror = prepared.mirror;
    [this.runBlock, this.collect, this.readVar] = api;
    this.hostRef = hostRef;
  }

  /** Takes the spare isolate (or makes one) and binds it to a session. */
  static create(opts: RuntimeOptions): IsolateRuntime {
    const prepared = takeSpare(opts.memoryMb) ?? prepare(opts.memoryMb);
    prepared.onError.current = opts.onCatastrophicError;
    try {
      const hostRef = new ivm.Reference(opts.handle);
      const api = prepared.init.applySync(
        undefined,
        [
          hostRef,
          JSON.stringify(opts.config),
          JSON.stringify(opts.documents.layout),
          ...opts.documents.blocks,
        ],
        {
          result: { reference: true },
          timeout: opts.setupTimeoutMs,
        },
      ) as ivm.Reference<unknown[]>;
      prepared.init.release();
      const entry = (i: number) => api.getSync(i, { reference: true });
      const refs = [entry(0), entry(1), entry(2)] as [
        IsolateRuntime['runBlock'],
        IsolateRuntime['collect'],
        IsolateRuntime['readVar'],
      ];
      api.release();
      if (opts.prewarm !== false) scheduleSpare(opts.memoryMb);
      return new IsolateRuntime(prepared, refs, hostRef);
    } catch (err) {
      prepared.isolate.dispose();
      throw err;
    }
  }

  get disposed(): boolean {
    return this.isolate.isDisposed;
  }

  /** CPU time the isolate has used, ms; 0 once disposed. */
  cpuMs(): number {
    try {
      return Number(this.isolate.cpuTime) / 1e6;
    } catch {
      return 0;
    }
  }

  dispose(): void {
    if (this.released) return;
    this.released = true;
    try {
      this.hostRef.release();
    } catch {
      // The isolate took it down already.
    }
    if (!this.isolate.isDisposed) {
      try {
        this.isolate.dispose();
      } catch {
        // Already gone (disposed by a memory limit in the meantime).
      }
    }
  }
}
