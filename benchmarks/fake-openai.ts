/**
 * A zero-latency OpenAI-compatible chat server on 127.0.0.1 for the big-context benchmark (context.ts):
 * it answers at once (on the next turn of its event loop) and records when requests arrive and how many are in flight, so the figures are the
 * runtimes' own cost. The request's `model` field picks the script: a root request (no sub-call marker in
 * its last message) gets `scripts[model]`, a sub-call (marker present) gets `ok`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Put in every sub-call prompt by the scripts; how the server tells sub-calls from root turns. */
export const SUB_CALL_MARKER = 'BENCH-SLICE';

/** What the server saw during one run (times are `performance.now()` of the benchmark process). */
export interface ServerLog {
  /** Arrival of the first root request, or null. */
  firstRequestAt: number | null;
  rootRequests: number;
  subCalls: number;
  /** Arrival of the first sub-call and the answer to the last one. */
  firstSubCallAt: number | null;
  lastSubCallAt: number | null;
  /** Most requests open (headers arrived, answer not yet written) at once: the sub-calls' concurrency. */
  maxInFlight: number;
  /** Called when the first root request arrives (a benchmark reads the client's CPU time then). */
  onFirstRequest?: () => void;
}

export interface FakeOpenAI {
  /** Base URL including `/v1`. */
  url: string;
  /** Starts a fresh log (one per measured run) and returns it; the server fills it in. */
  reset(): ServerLog;
  close(): Promise<void>;
}

function reply(res: ServerResponse, model: string, content: string): void {
  const body = JSON.stringify({
    id: 'bench',
    object: 'chat.completion',
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The text of the last message, without parsing a body that may carry megabytes of context. */
function lastMessage(body: string): string {
  const at = body.lastIndexOf('"content":');
  return at === -1 ? '' : body.slice(at, at + 200);
}

function modelOf(body: string): string {
  return /"model"\s*:\s*"([^"]*)"/.exec(body)?.[1] ?? '';
}

/** Starts the server; `scripts` maps a model name to the reply its root requests get. */
export async function startFakeOpenAI(scripts: Record<string, string>): Promise<FakeOpenAI> {
  let log: ServerLog = emptyLog();
  let open = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const arrived = performance.now();
    // Open from the moment its headers arrive until its answer is written: a request counts as in flight
    // while its body is still coming in.
    open++;
    res.on('finish', () => {
      open--;
    });
    const current = log;
    current.maxInFlight = Math.max(current.maxInFlight, open);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const model = modelOf(body);
      if (lastMessage(body).includes(SUB_CALL_MARKER)) {
        current.subCalls++;
        current.firstSubCallAt ??= arrived;
        res.on('finish', () => {
          current.lastSubCallAt = performance.now();
        });
        // Answered on the next turn of the event loop, not in the same one: requests that arrive together
        // are then open together, so the count says how many the client sent at once.
        setImmediate(() => reply(res, model, 'ok'));
        return;
      }
      log.rootRequests++;
      if (log.firstRequestAt === null) {
        log.firstRequestAt = arrived;
        log.onFirstRequest?.();
      }
      // A root turn after the script means the script did not finish the run: say so in the answer.
      reply(res, model, log.rootRequests === 1 ? (scripts[model] ?? 'FINAL(unknown model)') : 'FINAL(again)');
    });
  });
  // Keep-alive connections from the clients stay open between requests, as with a real server.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    reset: () => {
      log = emptyLog();
      return log;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function emptyLog(): ServerLog {
  return {
    firstRequestAt: null,
    rootRequests: 0,
    subCalls: 0,
    firstSubCallAt: null,
    lastSubCallAt: null,
    maxInFlight: 0,
  };
}
