/**
 * Serving over stdio: JSON-RPC lines on stdin and stdout. Stdout belongs to the protocol, so every
 * diagnostic goes through the context's log (stderr by default).
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { LineBatcher } from './line-batch.ts';
import { createServer } from './server.ts';
import type { ServerContext } from './server-context.ts';

/** Options of {@link serveStdio}. */
export interface StdioServeOptions {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. */
  stdout?: Writable;
  /** Stops serving at once: the in-flight calls are cancelled and get no response. */
  signal?: AbortSignal;
  /**
   * The parent's process id, checked every `parentCheckMs` (default `process.ppid` every 2 s). When it
   * changes, the client that started us is gone (it crashed without closing our stdin, or its end of the
   * pipe is not read any more): in-flight calls are cancelled and serving stops.
   */
  parentPid?: () => number;
  parentCheckMs?: number;
}

/**
 * Serves one client until it disconnects or `signal` fires. When stdin ends (the client has sent all it
 * will: `printf ... | rlm serve`, or a client closing its end), the calls already received still run to
 * completion and their responses are written before this returns. When `signal` fires, or stdout fails
 * (the reader is gone), in-flight calls are cancelled instead. Resolves after in-flight calls have wound
 * down; the context's stores stay open for the caller to close.
 */
export async function serveStdio(ctx: ServerContext, opts: StdioServeOptions = {}): Promise<void> {
  const stdin = opts.stdin ?? process.stdin;
  const stdout = opts.stdout ?? process.stdout;
  const mcp = createServer(ctx);
  // Whole lines only reach the SDK's reader, which is quadratic in the chunks of one message otherwise.
  const lines = new LineBatcher(ctx.limits.maxMessageBytes);
  stdin.pipe(lines);
  const transport = new AnsweringTransport(
    new StdioServerTransport(lines, stdout, { maxBufferSize: ctx.limits.maxMessageBytes }),
  );
  const closed = new Promise<void>((resolve) => {
    mcp.server.onclose = resolve;
  });
  // One line per error: the log is read line by line (a client's stderr pane, a log file).
  mcp.server.onerror = (err) => ctx.log(`rlm serve: ${err.message.replace(/\s*\n\s*/g, ' ')}`);
  let stopping = false;
  // Closing the server aborts every request handler still running; their responses are dropped.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void mcp.close().catch((err: unknown) => ctx.log(`rlm serve: close failed: ${String(err)}`));
  };
  // The SDK transport does not watch for end of input; without this a client that exits leaves us running.
  // Every request was handed to the server synchronously as its line was read, so by the time stdin ends
  // `answered()` knows all of them.
  let ending = false;
  const endOfInput = () => {
    if (ending) return;
    ending = true;
    void transport.answered().then(stop);
  };
  // Nobody can read the responses any more, so finishing the calls would be wasted work.
  const outputFailed = (err?: Error) => {
    if (stopping) return;
    ctx.log(`rlm serve: stdout ${err ? `failed (${err.message})` : 'closed'}; cancelling in-flight calls`);
    stop();
  };
  const parentPid = opts.parentPid ?? (() => process.ppid);
  const parent = parentPid();
  const watchParent = setInterval(() => {
    if (parentPid() === parent || stopping) return;
    ctx.log(`rlm serve: the parent process (${parent}) is gone; cancelling in-flight calls`);
    stop();
  }, opts.parentCheckMs ?? 2_000);
  watchParent.unref();
  // The end of the batched lines, not of stdin: the last lines may still be passing through the batcher.
  lines.once('end', endOfInput);
  // A stdin destroyed without ending delivers nothing more.
  const inputClosed = () => {
    if (!stdin.readableEnded) endOfInput();
  };
  stdin.once('close', inputClosed);
  stdout.on('error', outputFailed);
  stdout.once('close', outputFailed);
  opts.signal?.addEventListener('abort', stop, { once: true });
  try {
    if (opts.signal?.aborted) return;
    await mcp.connect(transport);
    if (lines.readableEnded) endOfInput();
    await closed;
    await ctx.idle();
  } finally {
    stdin.unpipe(lines);
    clearInterval(watchParent);
    lines.off('end', endOfInput);
    stdin.off('close', inputClosed);
    stdout.off('error', outputFailed);
    stdout.off('close', outputFailed);
    opts.signal?.removeEventListener('abort', stop);
  }
}

/**
 * Wraps a transport to remember which requests have not been answered yet, so that end of input can wait
 * for their responses to be written before the connection closes.
 */
class AnsweringTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly #inner: Transport;
  readonly #unanswered = new Set<RequestId>();
  #waiters: (() => void)[] = [];

  constructor(inner: Transport) {
    this.#inner = inner;
    inner.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message)) {
        this.#unanswered.add(message.id);
      } else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
        // The SDK sends nothing for a request the client cancelled, so there is no response to wait for.
        const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
        if (typeof id === 'string' || typeof id === 'number') this.#settle(id);
      }
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => {
      const reply = unreadableReply(error);
      // The client gets the JSON-RPC error; the log gets one line, not the SDK's dump of its schema check.
      this.onerror?.(
        reply === undefined ? error : new Error(`a line on stdin was refused: ${reply.message}`),
      );
      if (reply !== undefined) this.#reply(reply);
    };
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.#inner.send(message, options);
    } finally {
      if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined) {
        this.#settle(message.id);
      }
    }
  }

  /** Resolves once every request received so far has been answered (or cancelled by the client). */
  answered(): Promise<void> {
    if (this.#unanswered.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Sends JSON-RPC's answer to a line that is not a message (see {@link unreadableReply}). */
  #reply(error: { code: number; message: string }): void {
    // id null is JSON-RPC's own form for "unknown"; the SDK's type leaves the id out instead.
    const reply = { jsonrpc: '2.0', id: null, error } as unknown as JSONRPCMessage;
    this.#inner
      .send(reply)
      .catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))));
  }

  #settle(id: RequestId): void {
    if (!this.#unanswered.delete(id) || this.#unanswered.size > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * JSON-RPC's answer to a line that is not a message, or undefined for an error that is not about a line
 * (stdin failing). The SDK's reader only reports such a line, so a client that sent a malformed request
 * would wait for ever; the line's id cannot be known, so the reply's is null. The reader throws a
 * SyntaxError for a line that is not JSON and a ZodError for JSON that is not a JSON-RPC message.
 */
function unreadableReply(error: Error): { code: number; message: string } | undefined {
  if (error instanceof SyntaxError) return { code: -32700, message: 'Parse error: the line is not JSON' };
  if (error.name === 'ZodError')
    return { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' };
  return undefined;
}
