/**
 * Entry point of an isolate process: the child process that hosts one session's isolate at a time (see
 * pool.ts). It runs what the host asks (open, run, collect, readVar, salvage, close), sends the
 * isolate's host calls up as messages and waits for their replies, and holds nothing of the host: the
 * bridge (store, sub-calls, grep over a host-served context) stays in the host process.
 *
 * The host kills this process when a block will not stop, so nothing here needs to survive a stuck
 * isolate. The process ends itself when the host goes away.
 */
import { Socket } from 'node:net';
import type ivm from 'isolated-vm';
import { callEntry, type EntryResult, IsolateRuntime, prepareSpare } from '../isolate.ts';
import { BASE_MEMORY_MB } from '../limits.ts';
import { readMirror } from '../mirror.ts';
import { errorMessage } from '../outcome.ts';
import { HeldDocuments } from './held-docs.ts';
import {
  DOC_FD,
  type EntryReply,
  type Request,
  type RunReply,
  type ToChild,
  type ToHost,
} from './protocol.ts';

const held = new HeldDocuments();
const hostWaits = new Map<number, (reply: string) => void>();
let runtime: IsolateRuntime | null = null;
let hostSeq = 0;

// Reads go straight into the document's own buffer (the socket allocates nothing per read).
const docPipe = new Socket({
  fd: DOC_FD,
  readable: true,
  writable: false,
  onread: {
    buffer: () => held.reader.target(),
    callback: (n: number, into: Uint8Array) => {
      held.reader.filled(n, into);
      return true;
    },
  },
});
docPipe.on('error', () => undefined);
// Reading starts when asked (no 'data' listener does it here).
docPipe.resume();
docPipe.unref();

function send(message: ToHost): void {
  process.send?.(message);
}

function handle(request: unknown): Promise<string> {
  const id = ++hostSeq;
  return new Promise<string>((resolve) => {
    hostWaits.set(id, resolve);
    send({ t: 'host', id, request: typeof request === 'string' ? request : '' });
  });
}

function current(): IsolateRuntime {
  if (runtime === null || runtime.disposed) throw new Error('no open session');
  return runtime;
}

function closeRuntime(): void {
  runtime?.dispose();
  runtime = null;
}

async function open(req: Extract<Request, { op: 'open' }>): Promise<null> {
  closeRuntime();
  const documents = await held.take(req.docs);
  const created = IsolateRuntime.create({
    memoryMb: req.memoryMb,
    setupTimeoutMs: req.setupTimeoutMs,
    config: req.config,
    handle,
    documents,
    onCatastrophicError: (message) => send({ t: 'catastrophe', message }),
    prewarm: req.prewarm,
  });
  runtime = created;
  return null;
}

async function run(req: Extract<Request, { op: 'run' }>): Promise<RunReply> {
  const rt = current();
  let fn: ivm.Reference<unknown>;
  const cpu0 = rt.cpuMs();
  try {
    // Synchronous on purpose (half the per-block cost): between blocks the isolate is idle. Compiling
    // can take long (V8 checks regex literals here); the host's watchdog covers it.
    const script = rt.isolate.compileScriptSync(req.source, {
      filename: req.file,
      lineOffset: req.lineOffset,
    });
    fn = script.runSync(rt.context, { reference: true, timeout: req.cpuMs });
    script.release();
  } catch (err) {
    const name = err instanceof Error ? err.name : 'Error';
    return { kind: 'compileError', name, message: errorMessage(err), cpuMs: 0, disposed: rt.disposed };
  }
  let reply: RunReply;
  try {
    const r = await callEntry(
      rt.runBlock,
      [fn.derefInto({ release: true }), req.file, JSON.stringify(req.declared)],
      req.cpuMs,
    );
    reply = r.delivered
      ? { kind: 'done', value: r.value, cpuMs: 0, disposed: false }
      : { kind: 'pending', cpuMs: 0, disposed: false };
  } catch (err) {
    reply = { kind: 'error', message: errorMessage(err), cpuMs: 0, disposed: false };
  }
  reply.disposed = rt.disposed;
  reply.cpuMs = rt.disposed ? 0 : rt.cpuMs() - cpu0;
  return reply;
}

async function entry(call: () => Promise<EntryResult>): Promise<EntryReply> {
  const rt = current();
  try {
    const r = await call();
    return r.delivered ? { status: 'delivered', value: r.value } : { status: 'none' };
  } catch (err) {
    return { status: 'failed', message: errorMessage(err), disposed: rt.disposed };
  }
}

async function serve(req: Request): Promise<unknown> {
  switch (req.op) {
    case 'open':
      return open(req);
    case 'run':
      return run(req);
    case 'collect':
      return entry(() => callEntry(current().collect, [], req.timeoutMs));
    case 'readVar':
      return entry(() => callEntry(current().readVar, [req.name], req.timeoutMs));
    case 'salvage':
      return runtime === null ? '' : readMirror(runtime.mirror);
    case 'close':
      closeRuntime();
      return null;
  }
}

process.on('message', (message: ToChild) => {
  if (message.t === 'docs') {
    held.announce(message);
    return;
  }
  if (message.t === 'docsRead') {
    held.judged(message.block, message.ok);
    return;
  }
  if (message.t === 'reply') {
    const resolve = hostWaits.get(message.id);
    hostWaits.delete(message.id);
    resolve?.(message.reply);
    return;
  }
  serve(message.req).then(
    (value) => send({ t: 'res', id: message.id, ok: true, value: value ?? null }),
    (err: unknown) => send({ t: 'res', id: message.id, ok: false, error: errorMessage(err) }),
  );
});
// Without its host this process has no purpose, and an isolate may be stuck in it: end at once.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));

prepareSpare(Number(process.argv[2]) || BASE_MEMORY_MB);
send({ t: 'ready' });
