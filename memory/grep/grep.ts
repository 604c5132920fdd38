/**
 * Bounded grep over the chunk graph (or any list of `{id, text}` chunks).
 *
 * Literal patterns run in-process (`indexOf`, or an escaped case-insensitive regex, both linear time).
 * Regex patterns run in a worker thread that keeps a copy of the corpus: a catastrophic pattern such as
 * `(a+)+$` can then be stopped by terminating the worker, which a regex running on the host thread
 * cannot be.
 *
 * Budget: a search may use `timeoutMs` (default 2000) of CPU plus 50 ms per million characters scanned
 * (grep-scan.ts, `ScanClock`): a simple pattern finishes over any size on any load, a pathological one
 * is stopped. Past it the search rejects with `RlmError('TIMEOUT')` whose `details.partial` holds the
 * matches found before the bound (`details.partialCounts` for a count) and `details.timeoutMs` the base.
 * An error rather than a flagged result because a silently partial answer reads as "no more matches";
 * the message tells the model what to change. The worker checks its clock between finds and reports
 * itself, and sends progress while it scans; only when it falls silent (a single regex step that
 * hangs) does the host terminate it and start a fresh one on the next call.
 */
import { Worker } from 'node:worker_threads';
import { RlmError } from '../../core/errors.ts';
import { corrupt, isDenied, unreadable } from '../corrupt.ts';
import type { GrepDocumentCount, GrepMatch, GrepOptions, GrepResult } from '../types.ts';
import {
  escapeRegExp,
  type Finder,
  GREP_BASE_MS,
  GREP_MS_PER_MILLION_CHARS,
  type GrepCarry,
  type GrepChunk,
  literalFinder,
  regexFinder,
  ScanClock,
  type ScanSpec,
  scanChunks,
  scanState,
  totalCounts,
} from './grep-scan.ts';
import type { GrepWorkerReply, GrepWorkerRequest } from './grep-worker.ts';
import type { GrepSegment } from './segment-scan.ts';

export type { GrepCarry, GrepChunk } from './grep-scan.ts';
export { GREP_BASE_MS, GREP_MS_PER_MILLION_CHARS, MAX_LINE_CHARS } from './grep-scan.ts';
export type { GrepRun, GrepSegment } from './segment-scan.ts';

/** What grep searches: chunks in reading order. */
export type GrepCorpus = readonly GrepChunk[];

/**
 * A corpus tagged by its owner with a version (e.g. the store's generation): the worker's copy is reused
 * while the version is unchanged. A negative version means "not cacheable": it is sent every time.
 */
export interface VersionedCorpus {
  version: number;
  chunks: GrepCorpus;
  /**
   * For a corpus that is one page of a longer one (the PostgreSQL store's): what the parts of files
   * scanned by the pages before left to their next parts (seams.ts), updated by the search for the next.
   */
  carries?: Map<string, GrepCarry>;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 100_000;
const MAX_CONTEXT = 10_000;
/**
 * Wall time a scanning worker may stay silent beyond the base budget before the host takes it for stuck
 * in one regex step and terminates it (it sends progress every 200 ms or so while it scans).
 */
const KILL_GRACE_MS = 250;

// Resolved against this module so it works from source (.ts, type-stripped) and from dist (.js).
const WORKER_URL = new URL(
  `./grep-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

/**
 * Young generation of a worker that greps a store's files, MB. Such a grep decodes every chunk into a
 * short-lived string, and a young generation that stays small reuses the same memory for them instead of
 * growing into fresh pages (100 MB grep: about 10% faster and 20 MB less RSS than V8's default). A worker
 * that keeps a corpus (the sandbox's) keeps V8's default: copying a corpus in is ~15% slower with it.
 */
export const FILE_GREP_YOUNG_MB = 4;

/** A worker started ahead of need by {@link prestartGrepWorker}, taken by the next runner that needs one. */
let spare: { worker: Worker; youngMb: number | undefined } | null = null;

function startWorker(youngMb: number | undefined): Worker {
  // execArgv [] so flags of the parent (test runners, --no-node-snapshot) are not re-applied to the thread.
  const worker = new Worker(WORKER_URL, {
    execArgv: [],
    ...(youngMb === undefined ? {} : { resourceLimits: { maxYoungGenerationSizeMb: youngMb } }),
  });
  worker.unref();
  return worker;
}

/**
 * Starts a grep worker now, for the next {@link GrepRunner} with the same `workerYoungMb` to take: a
 * thread takes ~100 ms to boot, which a command that greps (`rlm grep`) can spend while it loads its own
 * modules and opens the store. Does nothing when a spare is already waiting. The spare never keeps the
 * process alive.
 */
export function prestartGrepWorker(workerYoungMb: number | undefined = FILE_GREP_YOUNG_MB): void {
  if (spare) return;
  const worker = startWorker(workerYoungMb);
  const drop = () => {
    if (spare?.worker === worker) spare = null;
  };
  worker.once('error', drop);
  worker.once('exit', drop);
  spare = { worker, youngMb: workerYoungMb };
}

function takeSpare(youngMb: number | undefined): Worker | null {
  if (!spare || spare.youngMb !== youngMb) return null;
  const { worker } = spare;
  spare = null;
  worker.removeAllListeners('error').removeAllListeners('exit');
  return worker;
}

/** Validated form of {@link GrepOptions}. */
interface GrepPlan {
  pattern: string;
  literal: boolean;
  ignoreCase: boolean;
  limit: number;
  context: number;
  documents: string[] | null;
  count: boolean;
  timeoutMs: number;
  /** Regex flags, for regex plans. */
  flags: string;
}

function intOption(
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
  name: string,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RlmError('BAD_INPUT', `grep ${name} must be an integer in ${min}..${max}, got ${value}`);
  }
  return value;
}

/** `u` unlocks `\p{…}` and `\u{…}`, but it also rejects sloppy escapes that plain regexes accept, so only opt in when needed. */
function wantsUnicode(source: string): boolean {
  return /\\[pP]\{|\\u\{/.test(source);
}

/** Checks options and compiles the pattern once on the host, so syntax errors never reach the worker. */
function plan(pattern: string, opts: GrepOptions, defaultTimeoutMs: number): GrepPlan {
  if (typeof pattern !== 'string' || pattern === '') throw new RlmError('BAD_INPUT', 'grep pattern is empty');
  const literal = opts.literal === true;
  const ignoreCase = opts.ignoreCase === true;
  const limit = intOption(opts.limit, DEFAULT_LIMIT, 1, MAX_LIMIT, 'limit');
  const context = intOption(opts.context, 0, 0, MAX_CONTEXT, 'context');
  const timeoutMs = intOption(opts.timeoutMs, defaultTimeoutMs, 1, 600_000, 'timeoutMs');
  const documents =
    opts.document === undefined ? null : Array.isArray(opts.document) ? [...opts.document] : [opts.document];
  const count = opts.count === true;
  let flags = `gm${ignoreCase ? 'i' : ''}`;
  if (!literal) {
    if (wantsUnicode(pattern)) flags += 'u';
    try {
      new RegExp(pattern, flags);
    } catch (err) {
      throw new RlmError('BAD_INPUT', `invalid regex /${pattern}/: ${(err as Error).message}`, { pattern });
    }
  }
  return { pattern, literal, ignoreCase, limit, context, documents, count, timeoutMs, flags };
}

/** What a search found, and what it cost (for the timeout message). */
interface Found {
  matches: GrepMatch[];
  counts: GrepDocumentCount[] | undefined;
  truncated: boolean;
  timedOut: boolean;
  /** CPU ms used and characters scanned; unknown (-1) when the host stopped a silent worker. */
  cpuMs: number;
  chars: number;
}

function timeoutError(p: GrepPlan, found: Found): RlmError {
  const spent =
    found.cpuMs < 0
      ? `one step of the pattern ran for more than ${p.timeoutMs + 2 * KILL_GRACE_MS} ms`
      : `it used ${Math.round(found.cpuMs)} ms of CPU on ${found.chars.toLocaleString('en-US')} characters`;
  return new RlmError(
    'TIMEOUT',
    `grep stopped: ${spent}, over its budget of ${p.timeoutMs} ms plus ${GREP_MS_PER_MILLION_CHARS} ms per ` +
      'million characters scanned — simplify the regex (avoid nested quantifiers)',
    {
      timeoutMs: p.timeoutMs,
      pattern: p.pattern,
      partial: found.matches,
      ...(found.counts === undefined ? {} : { partialCounts: totalCounts(found.counts) }),
    },
  );
}

/** The result of a search that finished, or its TIMEOUT. */
function resultOf(p: GrepPlan, found: Found): GrepResult {
  if (found.timedOut) throw timeoutError(p, found);
  if (p.count) return { matches: [], truncated: false, counts: totalCounts(found.counts ?? []) };
  return { matches: found.matches, truncated: found.truncated };
}

/** Runs a literal plan on the calling thread; linear time, still bounded by the budget. */
function grepLiteral(corpus: GrepCorpus, p: GrepPlan, carries?: Map<string, GrepCarry>): GrepResult {
  const find: Finder = p.ignoreCase
    ? regexFinder(new RegExp(escapeRegExp(p.pattern), 'gi'))
    : literalFinder(p.pattern);
  const matches: GrepMatch[] = [];
  const spec: ScanSpec = {
    limit: p.limit,
    context: p.context,
    documents: p.documents === null ? null : new Set(p.documents),
    count: p.count,
    clock: new ScanClock(p.timeoutMs),
  };
  const state = scanState(carries);
  const outcome = scanChunks(corpus, find, spec, state, (m) => matches.push(m));
  return resultOf(p, {
    matches,
    counts: state.counts,
    ...outcome,
    cpuMs: spec.clock.usedMs(),
    chars: spec.clock.chars,
  });
}

/** Options of {@link GrepRunner}. */
export interface GrepRunnerOptions {
  /** Default base CPU budget (`timeoutMs`) for greps that do not set one (default 2000). */
  timeoutMs?: number;
  /**
   * The worker's young generation in MB (default: V8's own sizing). A runner that greps a store's files
   * passes {@link FILE_GREP_YOUNG_MB}.
   */
  workerYoungMb?: number;
}

/** Counters, for tests and benchmarks. */
export interface GrepRunnerStats {
  /**
   * Worker threads this runner started (1 + one per terminated search); a prestarted one it took
   * ({@link prestartGrepWorker}) is not counted.
   */
  workerStarts: number;
  /** Times the corpus was copied into a worker. */
  corpusLoads: number;
}

/**
 * Owns one grep worker and the corpus it searches. The store and the sandbox keep one per corpus.
 * Greps run one at a time in call order. The worker never keeps the process alive while idle; call
 * {@link GrepRunner.close} when done anyway, to free its copy of the corpus.
 */
export class GrepRunner {
  readonly stats: GrepRunnerStats = { workerStarts: 0, corpusLoads: 0 };
  private corpus: GrepCorpus;
  /** Internal version of `corpus`, bumped on every change; the worker's copy is keyed by it. */
  private version = 0;
  /** The caller's version of `corpus` when it came through {@link VersionedCorpus}, else null. */
  private callerVersion: number | null = null;
  private readonly defaultTimeoutMs: number;
  private readonly workerYoungMb: number | undefined;
  private worker: Worker | null = null;
  private loadedVersion = -1;
  private nextRequestId = 1;
  private closed = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** Handlers of the exchange in flight; the worker is only ever doing one thing. */
  private onReply: ((reply: GrepWorkerReply) => void) | null = null;
  private onFailure: ((err: Error) => void) | null = null;

  constructor(corpus: GrepCorpus = [], opts: GrepRunnerOptions = {}) {
    this.corpus = corpus;
    this.defaultTimeoutMs = intOption(opts.timeoutMs, GREP_BASE_MS, 1, 600_000, 'timeoutMs');
    this.workerYoungMb = opts.workerYoungMb;
  }

  /** Replaces the corpus; the worker receives it on the next regex grep. */
  setCorpus(corpus: GrepCorpus): void {
    this.corpus = corpus;
    this.version++;
    this.callerVersion = null;
  }

  /** Number of {@link GrepRunner.setCorpus} calls so far; the worker's copy is keyed by it. */
  get corpusVersion(): number {
    return this.version;
  }

  /**
   * Searches the current corpus, or `corpus` when given (it then becomes the current one; the worker
   * keeps its copy while `corpus.version` stays the same). See the module comment for semantics.
   * @throws RlmError BAD_INPUT (empty or invalid pattern, bad option), TIMEOUT (with `details.partial`),
   *   ABORTED (runner closed), RUNTIME (worker crashed).
   */
  grep(pattern: string, opts?: GrepOptions): Promise<GrepResult>;
  grep(corpus: VersionedCorpus, pattern: string, opts?: GrepOptions): Promise<GrepResult>;
  async grep(
    first: string | VersionedCorpus,
    second?: string | GrepOptions,
    third?: GrepOptions,
  ): Promise<GrepResult> {
    if (typeof first === 'string') return this.run(first, typeof second === 'object' ? second : {});
    if (typeof second !== 'string') throw new RlmError('BAD_INPUT', 'grep pattern must be a string');
    this.useCorpus(first);
    return this.run(second, third ?? {}, first.carries);
  }

  private useCorpus(corpus: VersionedCorpus): void {
    const same = corpus.version >= 0 && corpus.version === this.callerVersion;
    this.corpus = corpus.chunks;
    if (same) return;
    this.version++;
    this.callerVersion = corpus.version;
  }

  private async run(
    pattern: string,
    opts: GrepOptions,
    carries?: Map<string, GrepCarry>,
  ): Promise<GrepResult> {
    const p = plan(pattern, opts, this.defaultTimeoutMs);
    if (this.closed) throw new RlmError('ABORTED', 'grep runner is closed');
    if (p.literal) return grepLiteral(this.corpus, p, carries);
    return this.withWorker(async (worker) => {
      await this.ensureLoaded(worker);
      return this.search(worker, p, undefined, carries);
    });
  }

  /** Runs `fn` after every earlier grep, with the worker holding the process open meanwhile. */
  private withWorker<T>(fn: (worker: Worker) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      if (this.closed) throw new RlmError('ABORTED', 'grep runner is closed');
      const worker = this.ensureWorker();
      worker.ref();
      try {
        return await fn(worker);
      } finally {
        // The worker may have been replaced or closed meanwhile; only unref the live one.
        if (this.worker === worker) worker.unref();
      }
    });
  }

  /**
   * Greps a store's segments without loading their files here: the worker reads and scans one segment
   * at a time (see grep-worker.ts), so memory stays at one segment whatever the store's size. Literal
   * patterns run there too, as escaped regexes. Matches come in `order` of documents.
   * @throws like {@link GrepRunner.grep}.
   */
  async grepSegments(
    segments: GrepSegment[],
    order: string[],
    pattern: string,
    opts: GrepOptions = {},
  ): Promise<GrepResult> {
    const p = plan(pattern, opts, this.defaultTimeoutMs);
    if (this.closed) throw new RlmError('ABORTED', 'grep runner is closed');
    const source = p.literal ? escapeRegExp(p.pattern) : p.pattern;
    return this.withWorker((worker) =>
      this.search(worker, p, {
        type: 'grepSegments',
        requestId: this.nextRequestId++,
        segments,
        order,
        source,
        flags: p.flags,
        limit: p.limit,
        context: p.context,
        count: p.count,
        timeoutMs: p.timeoutMs,
      }),
    );
  }

  /** Terminates the worker and fails any grep in flight with ABORTED. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onFailure?.(new RlmError('ABORTED', 'grep runner is closed'));
    await this.killWorker();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    let worker = takeSpare(this.workerYoungMb);
    if (!worker) {
      worker = startWorker(this.workerYoungMb);
      this.stats.workerStarts++;
    }
    worker.on('message', (reply: GrepWorkerReply) => this.onReply?.(reply));
    worker.on('error', (err: Error) => {
      if (this.worker === worker) this.worker = null;
      this.onFailure?.(new RlmError('RUNTIME', `grep worker failed: ${err.message}`, {}, { cause: err }));
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.onFailure?.(new RlmError('RUNTIME', `grep worker exited unexpectedly (code ${code})`));
    });
    this.worker = worker;
    this.loadedVersion = -1;
    return worker;
  }

  private async killWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.loadedVersion = -1;
    if (worker) await worker.terminate();
  }

  /** Sends the corpus unless the worker already holds this version. */
  private ensureLoaded(worker: Worker): Promise<void> {
    if (this.loadedVersion === this.version) return Promise.resolve();
    const version = this.version;
    // Only what the scan needs crosses the boundary, not whatever else the caller's records carry.
    const chunks: GrepChunk[] = this.corpus.map((c) => {
      const g: GrepChunk = { id: c.id, text: c.text };
      if (c.document !== undefined) g.document = c.document;
      if (c.start !== undefined && c.end !== undefined) {
        g.start = c.start;
        g.end = c.end;
      }
      if (c.prevPart !== undefined) g.prevPart = c.prevPart;
      if (c.nextPart !== undefined) g.nextPart = c.nextPart;
      return g;
    });
    return this.exchange<void>(worker, { type: 'load', version, chunks }, (reply, resolve) => {
      if (reply.type === 'loaded' && reply.version === version) {
        this.loadedVersion = version;
        this.stats.corpusLoads++;
        resolve();
      }
    });
  }

  private search(
    worker: Worker,
    p: GrepPlan,
    filesRequest?: GrepWorkerRequest,
    carries?: Map<string, GrepCarry>,
  ): Promise<GrepResult> {
    const requestId =
      filesRequest && 'requestId' in filesRequest ? filesRequest.requestId : this.nextRequestId++;
    const matches: GrepMatch[] = [];
    const request: GrepWorkerRequest = filesRequest ?? {
      type: 'grep',
      requestId,
      version: this.version,
      source: p.pattern,
      flags: p.flags,
      limit: p.limit,
      context: p.context,
      count: p.count,
      documents: p.documents,
      timeoutMs: p.timeoutMs,
      ...(carries ? { carries: [...carries] } : {}),
    };
    let timer: NodeJS.Timeout | undefined;
    let kill: () => void = () => {};
    // The worker is only taken for stuck when it falls silent: it sends progress while it scans. A
    // timer that fires gives it one more grace first: after this process was starved of CPU, timers
    // run before the messages that arrived meanwhile, and one of those may be the worker's.
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timer = setTimeout(kill, KILL_GRACE_MS);
      }, p.timeoutMs + KILL_GRACE_MS);
    };
    const run = this.exchange<GrepResult>(worker, request, (reply, resolve, reject) => {
      if (!('requestId' in reply) || reply.requestId !== requestId) return;
      // Reading a file does not count (I/O cannot hang like a regex): the timer pauses while the
      // worker reads and runs again while it scans.
      if (reply.type === 'segment' && reply.phase === 'reading') clearTimeout(timer);
      else if (reply.type === 'segment' || reply.type === 'progress') arm();
      else if (reply.type === 'match') {
        matches.push(reply.match);
        arm();
      } else if (reply.type === 'failed')
        reject(
          reply.corrupt
            ? corrupt(reply.corrupt, reply.message)
            : isDenied(reply.code) && reply.file
              ? unreadable(reply.file, reply.code!)
              : new RlmError(
                  'RUNTIME',
                  `grep failed: ${reply.message}`,
                  reply.code ? { errno: reply.code } : {},
                ),
        );
      else if (reply.type === 'done') {
        if (carries && reply.carries) {
          carries.clear();
          for (const [id, carry] of reply.carries) carries.set(id, carry);
        }
        try {
          const { truncated, timedOut, cpuMs, chars } = reply;
          resolve(resultOf(p, { matches, counts: reply.counts, truncated, timedOut, cpuMs, chars }));
        } catch (err) {
          reject(err as Error);
        }
      }
    });
    const killed = new Promise<never>((_resolve, reject) => {
      kill = () => {
        // The regex is stuck inside one exec call; only terminating the thread stops it.
        this.onReply = null;
        this.onFailure = null;
        const found: Found = {
          matches,
          counts: p.count ? [] : undefined,
          truncated: false,
          timedOut: true,
          cpuMs: -1,
          chars: 0,
        };
        void this.killWorker().finally(() => reject(timeoutError(p, found)));
      };
      // A file grep arms the timer when scanning starts: the worker's start and file reads do not count.
      if (filesRequest === undefined) arm();
    });
    return Promise.race([run, killed]).finally(() => clearTimeout(timer));
  }

  /** Posts `request` and routes replies to `handle` until it settles the promise. */
  private exchange<T>(
    worker: Worker,
    request: GrepWorkerRequest,
    handle: (reply: GrepWorkerReply, resolve: (v: T) => void, reject: (e: Error) => void) => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const settle = () => {
        this.onReply = null;
        this.onFailure = null;
      };
      this.onReply = (reply) =>
        handle(
          reply,
          (v) => {
            settle();
            resolve(v);
          },
          (e) => {
            settle();
            reject(e);
          },
        );
      this.onFailure = (err) => {
        settle();
        reject(err);
      };
      worker.postMessage(request);
    });
  }

  /** Runs `fn` after every earlier grep, so the worker handles one exchange at a time. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/**
 * One-off grep over `corpus`. Literal searches run in-process; a regex search starts a worker for this
 * call alone, so callers that grep the same corpus repeatedly should keep a {@link GrepRunner}.
 */
export async function grepTexts(
  corpus: GrepCorpus,
  pattern: string,
  opts: GrepOptions = {},
): Promise<GrepResult> {
  const runner = new GrepRunner(corpus);
  try {
    return await runner.grep(pattern, opts);
  } finally {
    await runner.close();
  }
}
