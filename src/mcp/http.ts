/**
 * Serving over Streamable HTTP with node:http. One endpoint (`/mcp`), one McpServer per session, all
 * sessions over one shared context. Before the SDK transport sees a request it passes three checks:
 * - Host: only the names this server is reached by, so a DNS-rebinding page (evil.example resolving to
 *   127.0.0.1) is refused;
 * - Origin: browsers send it; only origins allowed by name pass, so a web page cannot drive the server;
 * - bearer token, when configured (RLM_MCP_TOKEN), compared in constant time.
 * Binding to a non-loopback address requires a token: the server runs models on the user's keys.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { RlmError } from '../../core/errors.ts';
import { checkJsonShape } from './json-guard.ts';
import { createServer } from './server.ts';
import type { ServerContext } from './server-context.ts';

/** Default port of `rlm serve --transport http`. */
export const DEFAULT_HTTP_PORT = 8765;
/** Default cap on open HTTP sessions. */
export const DEFAULT_MAX_SESSIONS = 100;
/** Default cap on one HTTP request body: 16 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Default idle time after which a session is closed: 10 minutes. */
export const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;
/** How long a session goes unused before it may be closed to make room for a new one at the cap, ms. */
const EVICT_AFTER_MS = 60_000;
/** JSON-RPC envelope members allowed on top of a tool call's argument elements. */
const ENVELOPE_ELEMENTS = 64;

/** Options of {@link serveHttp}. */
export interface HttpServeOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default {@link DEFAULT_HTTP_PORT}; 0 picks a free one). */
  port?: number;
  /** Endpoint path (default `/mcp`). */
  path?: string;
  /** Bearer token every request must carry; required for a non-loopback `host`. */
  token?: string;
  /** Extra Host names accepted besides loopback names and `host` (DNS-rebinding check). */
  allowedHosts?: string[];
  /** Origins (`scheme://host[:port]`) accepted from browsers; none by default. */
  allowedOrigins?: string[];
  /** A session with no request for this long and nothing in flight is closed (default 10 minutes). */
  sessionIdleMs?: number;
  /**
   * Open sessions at most (default {@link DEFAULT_MAX_SESSIONS}); beyond it an initialize request is
   * refused with 503 after idle sessions are closed. Each session holds a server (under 1 MB).
   */
  maxSessions?: number;
  /**
   * Bytes of one request body (default {@link DEFAULT_MAX_BODY_BYTES}): enough for a tool call with a
   * sizeable inline context; larger material goes by `paths` or `store`. Nesting depth and the number of
   * JSON values are bounded before the body is parsed.
   */
  maxBodyBytes?: number;
  /**
   * Clock for session idleness (default `Date.now`). A seam for tests: with their own clock and
   * {@link HttpServerHandle.sweepIdle} they expire sessions without depending on timer scheduling.
   */
  now?: () => number;
}

/** A running HTTP server. */
export interface HttpServerHandle {
  /** The endpoint, e.g. `http://127.0.0.1:8765/mcp`. */
  readonly url: string;
  readonly port: number;
  /** Open sessions. */
  readonly sessions: number;
  /**
   * Closes the sessions idle for longer than `sessionIdleMs` with nothing in flight, as the periodic sweep
   * does; resolves to how many were closed once they are.
   */
  sweepIdle(): Promise<number>;
  /** Stops accepting, closes every session (cancelling in-flight calls) and waits for them. */
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
  active: number;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const WILDCARD = new Set(['0.0.0.0', '::', '']);

/** True for names and addresses that only this machine can reach. */
export function isLoopback(host: string): boolean {
  const h = bare(host);
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

function bare(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
}

/** Hostname of a Host header (`name:port`, `[v6]:port`), lowercased without brackets; undefined if malformed. */
export function hostHeaderName(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  try {
    return bare(new URL(`http://${header}`).hostname);
  } catch {
    return undefined;
  }
}

/** Starts the HTTP server; resolves once it listens. Throws BAD_INPUT for an unsafe configuration. */
export async function serveHttp(ctx: ServerContext, opts: HttpServeOptions = {}): Promise<HttpServerHandle> {
  const host = opts.host ?? '127.0.0.1';
  const endpoint = opts.path ?? '/mcp';
  const token = opts.token === '' ? undefined : opts.token;
  if (!isLoopback(host) && token === undefined) {
    throw new RlmError(
      'BAD_INPUT',
      `refusing to listen on ${host} without a token: set RLM_MCP_TOKEN, or bind 127.0.0.1`,
    );
  }
  const wildcard = WILDCARD.has(bare(host));
  // On a wildcard address the server is reached by names we cannot know; the token guards it instead.
  const allowedHosts =
    wildcard && (opts.allowedHosts ?? []).length === 0
      ? undefined
      : new Set([...LOOPBACK_NAMES, bare(host), ...(opts.allowedHosts ?? []).map(bare)]);
  if (wildcard && allowedHosts === undefined) {
    ctx.log(
      `rlm serve: listening on all interfaces; Host names are not checked (use --allow-host to list them)`,
    );
  }
  const allowedOrigins = new Set((opts.allowedOrigins ?? []).map((o) => o.replace(/\/+$/, '').toLowerCase()));
  const tokenDigest = token === undefined ? undefined : digest(token);
  const sessions = new Map<string, Session>();
  const now = opts.now ?? Date.now;
  const maxSessions = opts.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const shape = {
    maxDepth: ctx.limits.maxJsonDepth,
    maxElements: ctx.limits.maxInputElements + ENVELOPE_ELEMENTS,
  };

  const refuse = (
    res: ServerResponse,
    status: number,
    message: string,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
  };

  const check = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== endpoint) {
      refuse(res, 404, `not found: the MCP endpoint is ${endpoint}`);
      return false;
    }
    if (allowedHosts !== undefined) {
      const name = hostHeaderName(req.headers.host);
      if (name === undefined || !allowedHosts.has(name)) {
        refuse(res, 403, `forbidden: Host ${JSON.stringify(req.headers.host ?? '')} is not allowed`);
        return false;
      }
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.replace(/\/+$/, '').toLowerCase())) {
      refuse(res, 403, `forbidden: Origin ${JSON.stringify(origin)} is not allowed`);
      return false;
    }
    if (tokenDigest !== undefined) {
      const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
      if (m === null || !timingSafeEqual(digest(m[1]!.trim()), tokenDigest)) {
        refuse(res, 401, 'unauthorized: a valid bearer token is required', {
          'www-authenticate': 'Bearer realm="rlm"',
        });
        return false;
      }
    }
    return true;
  };

  const newSession = (): Session => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: maxBodyBytes,
      onsessioninitialized: (id) => {
        sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    const server = createServer(ctx, { fenceToCwd: true });
    const session: Session = { transport, server, lastSeen: now(), active: 0 };
    server.server.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && sessions.get(id) === session) sessions.delete(id);
    };
    server.server.onerror = (err) => ctx.log(`rlm serve: ${err.message}`);
    return session;
  };

  /** The parsed body of a POST, or undefined once a refusal has been sent. */
  const readJson = async (
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ body: unknown } | undefined> => {
    const tooLarge = () => {
      // Closing the connection stops the rest of an oversized upload from being read at all.
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
      const message =
        `request body is larger than the ${maxBodyBytes.toLocaleString('en-US')} bytes limit: ` +
        'pass large material as `paths` or a `store` instead of inline `context`';
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), () =>
        req.destroy(),
      );
    };
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
      tooLarge();
      return undefined;
    }
    const bytes = await readLimited(req, maxBodyBytes);
    if (bytes === undefined) {
      tooLarge();
      return undefined;
    }
    const why = checkJsonShape(bytes, shape);
    if (why !== undefined) {
      refuse(res, 413, `request refused before parsing: ${why}`);
      return undefined;
    }
    try {
      return { body: JSON.parse(bytes.toString('utf8')) };
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
      return undefined;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!check(req, res)) return;
    let parsed: { body: unknown } | undefined;
    if (req.method === 'POST') {
      parsed = await readJson(req, res);
      if (parsed === undefined) return;
    }
    const id = req.headers['mcp-session-id'];
    let session: Session | undefined;
    let fresh = false;
    if (typeof id === 'string') {
      session = sessions.get(id);
      if (session === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
        );
        return;
      }
    } else if (req.method === 'POST') {
      // Only an initialize request may open a session; the transport itself answers anything else with 400.
      if (
        sessions.size >= maxSessions &&
        (await sweepIdle()) === 0 &&
        !(await closeLeastRecent()) &&
        sessions.size >= maxSessions
      ) {
        refuse(
          res,
          503,
          `too many sessions (the limit is ${maxSessions}), all in use (a call in flight, or one within the last minute): try again shortly`,
        );
        return;
      }
      session = newSession();
      fresh = true;
      await session.server.connect(session.transport);
    } else {
      refuse(res, 400, 'Bad Request: Mcp-Session-Id header is required');
      return;
    }
    session.lastSeen = now();
    session.active++;
    res.once('close', () => {
      session.active--;
      session.lastSeen = now();
    });
    const ids = requestIds(parsed?.body);
    if (ids.length > 0) {
      const open = session;
      res.once('close', () => {
        if (res.writableFinished) return;
        // The client went away before its answer: without resumable streams nobody can receive it, so the
        // run is cancelled as if the client had asked, instead of spending on a result no one reads.
        for (const requestId of ids) {
          open.transport.onmessage?.({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId, reason: 'the client connection closed' },
          });
        }
      });
    }
    await session.transport.handleRequest(req, res, parsed?.body);
    if (fresh && session.transport.sessionId === undefined) await session.server.close();
  };

  const http = createHttpServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      ctx.log(
        `rlm serve: HTTP request failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      if (!res.headersSent) refuse(res, 500, 'internal error');
      else res.end();
    });
  });
  const idleMs = opts.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const sweepIdle = async (): Promise<number> => {
    const t = now();
    const idle = [...sessions.values()].filter((s) => s.active === 0 && t - s.lastSeen > idleMs);
    await Promise.allSettled(idle.map((s) => s.server.close()));
    return idle.length;
  };
  /**
   * At the cap with no session idle for long: the session used least recently among those with no
   * request in flight and none for a minute is closed to make room (a client that left without ending its session, as most
   * scripts do, would otherwise keep new ones out for the idle time). Its client, if it comes back,
   * gets 404 and starts a new session, as MCP clients do. False when every session has a call running.
   */
  const closeLeastRecent = async (): Promise<boolean> => {
    const t = now();
    let oldest: [string, Session] | undefined;
    for (const entry of sessions) {
      const s = entry[1];
      // A session used within the last minute belongs to a client at work (an agent between calls).
      if (s.active > 0 || t - s.lastSeen < Math.min(EVICT_AFTER_MS, idleMs)) continue;
      if (oldest === undefined || s.lastSeen < oldest[1].lastSeen) oldest = entry;
    }
    if (oldest === undefined) return false;
    // Out of the map at once: a second initialize arriving meanwhile picks another one.
    sessions.delete(oldest[0]);
    await oldest[1].server.close().catch(() => undefined);
    return true;
  };
  const sweep = setInterval(() => void sweepIdle(), Math.min(idleMs, 60_000));
  sweep.unref();

  await listen(http, opts.port ?? DEFAULT_HTTP_PORT, host);
  const port = (http.address() as AddressInfo).port;
  const shown = bare(host).includes(':') ? `[${bare(host)}]` : host;
  return {
    url: `http://${shown}:${port}${endpoint}`,
    port,
    get sessions() {
      return sessions.size;
    },
    sweepIdle,
    async close() {
      clearInterval(sweep);
      const closing = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.allSettled([...sessions.values()].map((s) => s.server.close()));
      sessions.clear();
      http.closeAllConnections();
      await closing;
      await ctx.idle();
    },
  };
}

/** Ids of the JSON-RPC requests (not notifications or responses) in a message or batch. */
function requestIds(body: unknown): (string | number)[] {
  const ids: (string | number)[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== 'object' || m === null) continue;
    const { id, method } = m as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

/** The whole body, or undefined as soon as it grows past `max` bytes (the rest is not read). */
function readLimited(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        req.pause();
        resolve(undefined);
        return;
      }
      parts.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(parts, size)));
    req.once('error', reject);
  });
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function listen(http: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE' ? `port ${port} is in use (try --port 0 for a free one)` : err.message;
      reject(
        new RlmError('BAD_INPUT', `cannot listen on ${host}:${port}: ${why}`, { port, host }, { cause: err }),
      );
    };
    http.once('error', onError);
    http.listen(port, host, () => {
      http.off('error', onError);
      resolve();
    });
  });
}
