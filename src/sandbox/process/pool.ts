/**
 * Isolate processes: each session's isolate lives in a child process of its own, which the host can
 * kill. isolated-vm cannot stop V8 in every state (a huge regex being compiled, some builtins), and a
 * thread stuck there cannot be ended inside a process; killing the process ends it, frees its CPU and
 * memory at once, and never holds the host's exit. The host side only exchanges messages with it
 * (protocol.ts): the bridge and everything of the host stay here.
 *
 * A process serves one session at a time and goes back to a small idle pool when the session ends
 * cleanly; one spare process is started ahead in idle time, so a session start takes a ready process
 * (with a spare isolate already prepared in it) instead of paying for a process start. A process is
 * never reused after a kill, a crash or a catastrophic V8 error.
 *
 * Requests run under a watchdog: a budget of CPU time the process may use before it answers (waiting
 * for a host call uses none; where /proc is missing, wall time outside host calls). A request that
 * overruns its budget fails with {@link ProcessStuck}, and the caller kills the process. A process that
 * hangs without using CPU is left to the session's wall-clock limit.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { Socket } from 'node:net';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIRST_FIELD, procStat } from '../../../core/process.ts';
import type { ContextDocument } from '../context-registry.ts';
import { docEncoding, utf8Wire, writeDoc, writePieces } from './doc-pipe.ts';
import { DOC_FD, type DocEncoding, type Request, type ToChild, type ToHost } from './protocol.ts';

/** A request overran its budget: the isolate did not yield. */
export class ProcessStuck extends Error {}
/** The process ended (killed, crashed) before answering. */
class ProcessGone extends Error {}

/** Idle processes kept for later sessions. */
const IDLE_MAX = 2;
/**
 * How long idle processes are kept with no session starting, ms: a server between calls (or a
 * program between runs) then holds no isolate process, each some 90 MB, for the rest of its life;
 * the next session pays one process start.
 */
let idleKeepMs = 60_000;
/** Memory limit of the spare isolate a new process prepares (the default session's). */
let spareMemoryMb = 128;

const CHILD_PATH = fileURLToPath(
  new URL(`./child${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  /** Run time allowed, ms, and the process's run-time reading when the request was sent. */
  budget: number;
  start: number;
  /** Wall-clock deadline (performance.now()), if the request has one. */
  deadline: number;
}

/** Bytes of a text read from its file per piece written on the document pipe. */
const READ_PIECE_BYTES = 1 << 20;
/** How often the watchdog reads a busy process's CPU time. */
const WATCH_INTERVAL_MS = 50;
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on every Linux that matters). */
const CLOCK_TICKS = 100;

/** CPU time (user + system, all threads) of process `pid` in ms, or null where /proc cannot tell. */
function processCpuMs(pid: number): number | null {
  const fields = procStat(pid);
  if (fields === undefined) return null;
  // utime and stime, fields 14 and 15.
  const ticks = Number(fields[14 - FIRST_FIELD]) + Number(fields[15 - FIRST_FIELD]);
  return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS : null;
}

export class IsolateProcess {
  readonly pid: number;
  /** Context documents this process holds, by registry id (sent once per process). */
  docs = new Set<string>();
  /** Serves the isolate's host calls; set by the session using the process. */
  onHostCall: ((request: string) => Promise<string>) | null = null;
  /** V8 lost control of the isolate: the process must go. */
  onCatastrophe: ((message: string) => void) | null = null;
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;
  /** The document pipe (doc-pipe.ts), and the writes on it in the order their messages went. */
  private readonly docPipe: Socket;
  private docWrites: Promise<unknown> = Promise.resolve();
  /** Blocks of documents sent so far (their ids). */
  private blocks = 0;
  /** Where texts read from files are read, one piece at a time (documents are written one after another). */
  private readBuffer: Buffer | null = null;
  private readonly waiters = new Map<number, Waiter>();
  private seq = 0;
  private watch: ReturnType<typeof setInterval> | undefined;
  /** Host calls being served, and wall time spent serving them (the run-time fallback excludes it). */
  private hostCalls = 0;
  private hostSince = 0;
  private hostWallMs = 0;
  private gone = false;
  /** Set once the process reported ready. */
  started = false;

  constructor() {
    this.child = fork(CHILD_PATH, [String(spareMemoryMb)], {
      // No --expose-gc: it would put `gc` on every isolate's global (held-docs.ts takes one for the
      // process alone).
      execArgv: ['--no-node-snapshot'],
      // Nothing of the host's environment (keys, tokens) goes to a process that runs model code. Only
      // glibc's huge pages for big allocations: a context document is received, decoded and copied into
      // fresh memory, and a VM can take 15 µs per 4 KiB page touched the first time (100 MB: 0.45 s of
      // CPU a copy; 0.1 s in 2 MiB pages). No effect where glibc is older than 2.35 or absent.
      env: { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1' },
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc', 'pipe'],
    });
    this.pid = this.child.pid ?? -1;
    // Node makes a socket of a 'pipe' past stdio. It never holds the host open (the channel's ref does
    // while a request is out), and a write to a process that died fails here: `exit` tells the sessions.
    this.docPipe = this.child.stdio[DOC_FD] as Socket;
    this.docPipe.unref();
    this.docPipe.on('error', () => undefined);
    live.add(this);
    this.ready = new Promise<void>((resolve, reject) => {
      const onReady = (m: ToHost) => {
        if (m.t !== 'ready') return;
        this.child.off('message', onReady);
        this.started = true;
        resolve();
      };
      this.child.on('message', onReady);
      this.child.once('exit', () => reject(new ProcessGone('the isolate process could not start')));
      this.child.once('error', (err) => reject(new ProcessGone(err.message)));
    });
    this.ready.catch(() => undefined);
    this.child.on('message', (m: ToHost) => this.receive(m));
    this.child.on('exit', () => this.ended());
    this.child.on('error', () => this.kill());
    this.idle();
  }

  /** Resolves when the process can take requests; keeps the host alive meanwhile. */
  async whenReady(): Promise<void> {
    this.busy();
    try {
      await this.ready;
    } finally {
      if (this.waiters.size === 0) this.idle();
    }
  }

  /** Whether the process is gone (killed or ended): never send it anything again. */
  get dead(): boolean {
    return this.gone;
  }

  /**
   * Sends `req` and resolves with the child's answer. Rejects with ProcessStuck when the child has not
   * answered within `budgetMs` of run time (or `wallMs` of wall time), ProcessGone when it ended, Error
   * when the child failed it.
   */
  call<T>(req: Request, budgetMs: number, wallMs = Number.POSITIVE_INFINITY): Promise<T> {
    if (this.gone) return Promise.reject(new ProcessGone('the isolate process is gone'));
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.waiters.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        budget: budgetMs,
        start: this.runTime(),
        deadline: performance.now() + wallMs,
      });
      this.busy();
      this.watch ??= setInterval(() => this.check(), WATCH_INTERVAL_MS);
      this.child.send({ t: 'req', id, req } satisfies ToChild);
    });
  }

  /**
   * Sends the documents (ids, and texts or their sources) the process does not hold yet, on the document
   * pipe without waiting; the next `open` waits for them in the process. Documents that travel in the same
   * encoding go as one block the process keeps one copy of (a folder of 400 files: one decode and one copy,
   * not 400). A source is read as it is written (a run's --context file: read from the file again); a
   * block with one that fails is dropped by the process, and the `open` fails. Returns the characters
   * sent (receiving them costs the process CPU time its `open` must be allowed).
   */
  sendDocuments(ids: readonly string[], documents: readonly ContextDocument[]): number {
    const blocks = new Map<
      DocEncoding,
      { id: string; doc: ContextDocument; bytes: number; chars: number }[]
    >();
    let sent = 0;
    for (const [i, id] of ids.entries()) {
      if (this.docs.has(id) || this.gone) continue;
      const doc = documents[i] ?? '';
      const wire =
        typeof doc === 'string'
          ? { ...docEncoding(doc), chars: doc.length }
          : {
              encoding: doc.encoding === 'utf8' ? utf8Wire(doc.bytes, doc.chars) : doc.encoding,
              bytes: doc.bytes,
              chars: doc.chars,
            };
      const block = blocks.get(wire.encoding) ?? [];
      block.push({ id, doc, bytes: wire.bytes, chars: wire.chars });
      blocks.set(wire.encoding, block);
      sent += wire.chars;
    }
    for (const [encoding, docs] of blocks) {
      const block = `b${++this.blocks}`;
      const bytes = docs.reduce((n, d) => n + d.bytes, 0);
      const fromFile = docs.some((d) => typeof d.doc !== 'string');
      this.child.send({
        t: 'docs',
        block,
        bytes,
        encoding,
        docs: docs.map((d) => ({ id: d.id, chars: d.chars })),
        ...(fromFile ? { fromFile: true as const } : {}),
      } satisfies ToChild);
      this.docWrites = this.docWrites.then(async () => {
        let ok = true;
        for (const { doc, bytes: size } of docs) {
          const written =
            typeof doc === 'string'
              ? await writeDoc(this.docPipe, doc, encoding)
              : await writePieces(this.docPipe, doc.read(this.scratch()), size);
          if (written === false) return false;
          if (written === 'failed') ok = false;
        }
        if (fromFile && !this.gone) this.child.send({ t: 'docsRead', block, ok } satisfies ToChild);
        return true;
      });
    }
    return sent;
  }

  private scratch(): Buffer {
    this.readBuffer ??= Buffer.allocUnsafe(READ_PIECE_BYTES);
    return this.readBuffer;
  }

  /** What the running block printed so far, from the output mirror; '' when the process cannot say in `ms`. */
  async salvage(ms: number): Promise<string> {
    try {
      // Bounded by the wall clock alone: the process's CPU time is the stuck isolate's, which spins on
      // another thread, so a CPU budget ran out before the main thread (slowed on a loaded machine) got
      // to answer, and what the block printed was lost.
      const text = await this.call<unknown>({ op: 'salvage' }, Number.POSITIVE_INFINITY, ms);
      return typeof text === 'string' ? text : '';
    } catch {
      return '';
    }
  }

  /** Ends the process now (SIGKILL); pending requests fail with ProcessGone. Idempotent. */
  kill(): void {
    if (!this.gone) this.child.kill('SIGKILL');
    this.ended();
  }

  /**
   * How long the isolate has run, ms: the process's CPU time where /proc tells it (a machine under
   * load slows a block without bringing it nearer its kill), else wall time outside host calls.
   */
  private runTime(): number {
    const cpu = processCpuMs(this.pid);
    if (cpu !== null) return cpu;
    const now = performance.now();
    return now - this.hostWallMs - (this.hostCalls > 0 ? now - this.hostSince : 0);
  }

  private check(): void {
    const now = this.runTime();
    const wall = performance.now();
    for (const [id, w] of this.waiters) {
      if (now - w.start > w.budget || wall > w.deadline)
        this.settle(id, new ProcessStuck('the isolate did not yield'));
    }
  }

  private settle(id: number, outcome: Error | { value: unknown }): void {
    const w = this.waiters.get(id);
    if (w === undefined) return;
    this.waiters.delete(id);
    if (this.waiters.size === 0) {
      clearInterval(this.watch);
      this.watch = undefined;
      this.idle();
    }
    if (outcome instanceof Error) w.reject(outcome);
    else w.resolve(outcome.value);
  }

  private receive(m: ToHost): void {
    if (m.t === 'res') this.settle(m.id, m.ok ? { value: m.value } : new Error(m.error));
    else if (m.t === 'host') void this.hostCall(m.id, m.request);
    else if (m.t === 'catastrophe') this.onCatastrophe?.(m.message);
  }

  private async hostCall(id: number, request: string): Promise<void> {
    if (this.hostCalls++ === 0) this.hostSince = performance.now();
    let reply = JSON.stringify({ ok: false, value: null, error: 'host calls only work while a block runs' });
    try {
      if (this.onHostCall) reply = await this.onHostCall(request);
    } catch {
      // The bridge never rejects; the fallback reply stands if a future one does.
    } finally {
      if (--this.hostCalls === 0) this.hostWallMs += performance.now() - this.hostSince;
    }
    if (this.gone) return;
    try {
      this.child.send({ t: 'reply', id, reply } satisfies ToChild);
    } catch {
      // The channel closed under us: the process is ending, and `exit` settles its requests.
    }
  }

  private ended(): void {
    if (this.gone) return;
    this.gone = true;
    live.delete(this);
    const i = idle.indexOf(this);
    if (i !== -1) idle.splice(i, 1);
    for (const id of [...this.waiters.keys()]) this.settle(id, new ProcessGone('the isolate process ended'));
  }

  /** Keeps the host alive only while a request is outstanding. */
  private busy(): void {
    this.child.ref();
    this.child.channel?.ref();
  }

  private idle(): void {
    this.child.unref();
    this.child.channel?.unref();
  }
}

const live = new Set<IsolateProcess>();
const idle: IsolateProcess[] = [];
let refill: ReturnType<typeof setTimeout> | null = null;
let reap: ReturnType<typeof setTimeout> | null = null;

/** (Re)starts the countdown after which the idle processes are killed: every use of the pool resets it. */
function keepIdle(): void {
  if (reap !== null) clearTimeout(reap);
  reap = setTimeout(() => {
    reap = null;
    for (const p of idle.splice(0)) p.kill();
  }, idleKeepMs);
  reap.unref();
}

/** Sets how long idle processes are kept ({@link idleKeepMs}); for tests. Returns the previous value. */
export function setIdleKeepMs(ms: number): number {
  const before = idleKeepMs;
  idleKeepMs = ms;
  keepIdle();
  return before;
}
/** Delay before a spare process starts: a one-shot run (rlm exec) ends before paying for it. */
const SPARE_DELAY_MS = 100;
let exitHook = false;

/** Kills every isolate process when the host exits, however it exits (no orphan keeps running). */
function hookExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const p of [...live]) p.kill();
  });
}

/**
 * Starts a spare process in idle time, unless one is idle already: the next session (a sub-RLM's, the
 * next run's) then takes a ready one.
 */
export function scheduleSpare(): void {
  if (refill !== null || idle.length > 0) return;
  refill = setTimeout(() => {
    refill = null;
    if (idle.length === 0) idle.push(new IsolateProcess());
    keepIdle();
  }, SPARE_DELAY_MS);
  refill.unref();
}

/**
 * A ready process for a new session: an idle one (one holding the documents `docs` if there is),
 * or a new one. `memoryMb` is the session's isolate limit; later processes prepare their spare
 * isolate for it. The session starts the next spare process ({@link scheduleSpare}) once it is open.
 * When `signal` fires before the process is ready, the process is killed and this rejects.
 * @throws ProcessGone when no process can be started.
 */
export async function acquireProcess(
  memoryMb: number,
  docs: readonly string[] = [],
  signal?: AbortSignal,
): Promise<IsolateProcess> {
  hookExit();
  keepIdle();
  spareMemoryMb = memoryMb;
  for (let i = idle.length - 1; i >= 0; i--) if (idle[i]!.dead) idle.splice(i, 1);
  // Prefer a process that holds the session's context already (a sub-RLM, a rebuilt session), then
  // one that is ready over one still starting.
  let pick = docs.length > 0 ? idle.findIndex((p) => docs.every((id) => p.docs.has(id))) : -1;
  if (pick === -1) pick = idle.findIndex((p) => p.started);
  if (pick === -1 && idle.length > 0) pick = 0;
  const proc = pick === -1 ? new IsolateProcess() : idle.splice(pick, 1)[0]!;
  if (signal === undefined) {
    await proc.whenReady();
    return proc;
  }
  // Given up while the process starts (the session was disposed: a cancelled run, a batch of sub-RLMs
  // past its wall clock): it is killed at once, not left to finish starting and idle.
  const given = new Promise<never>((_, reject) => {
    const stop = () => reject(new ProcessGone('the session was given up while its process started'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  try {
    await Promise.race([proc.whenReady(), given]);
  } catch (err) {
    if (signal.aborted) proc.kill();
    throw err;
  }
  return proc;
}

/** Gives back the process of a session that ended cleanly: its isolate is closed and it waits idle. */
export function releaseProcess(proc: IsolateProcess): void {
  if (proc.dead) return;
  proc.onHostCall = null;
  proc.onCatastrophe = null;
  if (idle.length >= IDLE_MAX) {
    proc.kill();
    return;
  }
  // Idle at once: the child handles messages in order, so a next session's `open` follows the close.
  idle.push(proc);
  keepIdle();
  proc.call({ op: 'close' }, 5000).catch(() => proc.kill());
}

/**
 * Starts an isolate process now, unless one is idle or starting: a run that will soon open a session
 * (one given a context to read) lets it boot while the run reads its input and waits for the model's first
 * reply, instead of after. It never keeps the host alive, and is killed with the others at exit. Returns
 * the pid of the process the next session takes.
 */
export function prestartProcess(): number {
  hookExit();
  for (let i = idle.length - 1; i >= 0; i--) if (idle[i]!.dead) idle.splice(i, 1);
  if (idle.length > 0) return idle[0]!.pid;
  if (refill !== null) clearTimeout(refill);
  refill = null;
  const proc = new IsolateProcess();
  idle.push(proc);
  keepIdle();
  return proc.pid;
}

/** Kills the idle processes (tests, benchmarks of a cold start). */
export function dropIdleProcesses(): void {
  if (refill !== null) clearTimeout(refill);
  refill = null;
  for (const p of idle.splice(0)) p.kill();
}
