import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import {
  type HttpServeOptions,
  type HttpServerHandle,
  hostHeaderName,
  isLoopback,
  serveHttp,
} from '../../src/mcp/http.ts';
import { TOOL_NAMES } from '../../src/mcp/server.ts';
import { createServerContext, type ServerContext } from '../../src/mcp/server-context.ts';
import { tempDir } from '../helpers/temp.ts';
import { scripted } from './helpers/rules.ts';

const dir = tempDir('rlm-mcp-http-');

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

let running: { handle: HttpServerHandle; ctx: ServerContext; clients: Client[] } | undefined;
afterEach(async () => {
  if (running === undefined) return;
  for (const c of running.clients) await c.close().catch(() => undefined);
  await running.handle.close();
  await running.ctx.close();
  running = undefined;
});

async function start(opts: HttpServeOptions = {}) {
  const model = scripted(dir, 'http.json', [
    { depth: 0, match: 'capital', reply: 'FINAL("Paris")' },
    { depth: 0, reply: 'FINAL("unknown")' },
  ]);
  const ctx = createServerContext({ env: { RLM_MODEL: model }, log: () => {} });
  const handle = await serveHttp(ctx, { port: 0, ...opts });
  running = { handle, ctx, clients: [] };
  return running;
}

async function client(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'rlm-http-test', version: '0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  running?.clients.push(c);
  return c;
}

/** A raw POST with chosen headers (node:http lets a test set Host); a string body is sent as is. */
function post(port: number, headers: Record<string, string>, body: unknown = INIT, path = '/mcp') {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown> }>(
    (resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...headers,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString('utf8');
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
        },
      );
      req.on('error', reject);
      if (typeof body === 'string') {
        // Raw text, sent in two writes so that no Content-Length announces its size.
        req.write(body.slice(0, 1));
        req.end(body.slice(1));
      } else req.end(JSON.stringify(body));
    },
  );
}

describe('serveHttp', () => {
  it('binds 127.0.0.1 and serves tools with progress over Streamable HTTP', async () => {
    const { handle } = await start();
    expect(handle.url).toBe(`http://127.0.0.1:${handle.port}/mcp`);
    const c = await client(handle.url);
    const { tools } = await c.listTools();
    expect(tools).toHaveLength(TOOL_NAMES.length);
    const seen: Progress[] = [];
    const r = (await c.callTool(
      {
        name: 'rlm_answer',
        arguments: { question: 'What is the capital of France?', context: 'France: Paris.' },
      },
      undefined,
      { onprogress: (p) => seen.push(p) },
    )) as CallToolResult;
    expect(r.structuredContent).toMatchObject({ answer: 'Paris', status: 'final' });
    // Heartbeats ("still ...") join in when the run is slow; the milestones are fixed.
    expect(seen.map((p) => p.message).filter((m) => !m?.startsWith('still '))).toEqual([
      'iteration 1 of 20: model replied',
    ]);
    expect(handle.sessions).toBe(1);
  });

  it('keeps sessions apart and forgets a session the client ends', async () => {
    const { handle } = await start();
    const a = await client(handle.url);
    const b = await client(handle.url);
    expect(handle.sessions).toBe(2);
    const [ra, rb] = await Promise.all([
      a.callTool({ name: 'rlm_answer', arguments: { question: 'capital?', context: 'x' } }),
      b.callTool({ name: 'rlm_answer', arguments: { question: 'other', context: 'x' } }),
    ]);
    expect(ra.structuredContent).toMatchObject({ answer: 'Paris' });
    expect(rb.structuredContent).toMatchObject({ answer: 'unknown' });
    await (a.transport as StreamableHTTPClientTransport).terminateSession();
    expect(handle.sessions).toBe(1);
  });

  it('closes sessions a client left without ending them', async () => {
    // The test owns the clock and drives the sweep, so no timer decides when a session expires.
    let clock = 1_000_000;
    const { handle } = await start({ sessionIdleMs: 60_000, now: () => clock });
    const c = await client(handle.url);
    await c.listTools();
    expect(handle.sessions).toBe(1);
    clock += 59_000;
    expect(await handle.sweepIdle()).toBe(0);
    expect(handle.sessions).toBe(1);
    // Closing the client drops its connections but sends no DELETE: the server must notice on its own.
    await c.close();
    // The server hears of the dropped connections asynchronously, and the session counts as in use (and
    // seen) until it does; each round moves the clock past the idle time again.
    let closed = 0;
    while (handle.sessions > 0) {
      clock += 61_000;
      closed += await handle.sweepIdle();
      await new Promise((r) => setImmediate(r));
    }
    expect(closed).toBe(1);
  });

  it('caps open sessions: makes room by closing the least recently used one, unused for a minute', async () => {
    let clock = 0;
    const { handle } = await start({ maxSessions: 2, now: () => clock });
    // SDK clients keep a stream open (a GET) on their sessions: those count as in use.
    await client(handle.url);
    const b = await client(handle.url);
    const refused = await post(handle.port, {});
    expect(refused.status).toBe(503);
    expect(refused.body).toContain('too many sessions (the limit is 2), all in use');
    await expect(client(handle.url)).rejects.toThrow();
    await (b.transport as StreamableHTTPClientTransport).terminateSession();
    // Two sessions left by a script that never ended them (no connection held): the older goes first.
    const left = await post(handle.port, {});
    expect(left.status).toBe(200);
    expect(handle.sessions).toBe(2);
    // Used a moment ago, it is still someone's: no room yet.
    expect((await post(handle.port, {})).status).toBe(503);
    clock += 61_000;
    const c = await client(handle.url);
    expect((await c.callTool({ name: 'rlm_status', arguments: {} })).isError).toBeFalsy();
    expect(handle.sessions).toBe(2);
    // The closed session is gone for its client, which would start a new one.
    const again = await post(handle.port, { 'mcp-session-id': String(left.headers['mcp-session-id']) }, '{}');
    expect(again.status).toBe(404);
  });

  it('refuses oversized, deeply nested and value-heavy bodies before parsing, and keeps serving', async () => {
    const { handle } = await start({ maxBodyBytes: 1000 });
    const big = await post(handle.port, {}, { ...INIT, pad: 'x'.repeat(2000) });
    expect(big.status).toBe(413);
    expect(big.body).toContain('larger than the 1,000 bytes limit');
    expect(big.body).toContain('`paths`');
    const chunked = await post(handle.port, {}, JSON.stringify({ ...INIT, pad: 'x'.repeat(2000) }));
    expect(chunked.status).toBe(413);
    const deep = await post(handle.port, {}, `${'['.repeat(100)}${']'.repeat(100)}`);
    expect(deep.status).toBe(413);
    expect(deep.body).toContain('nested deeper than 64 levels');
    const bad = await post(handle.port, {}, '{"jsonrpc": ');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('Parse error');
    const c = await client(handle.url);
    expect((await c.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('bounds the number of JSON values in a body by the tool input limit', async () => {
    const model = scripted(dir, 'elements.json', [{ depth: 0, reply: 'FINAL("ok")' }]);
    const ctx = createServerContext({
      env: { RLM_MODEL: model },
      log: () => {},
      limits: { maxInputElements: 50 },
    });
    const handle = await serveHttp(ctx, { port: 0 });
    running = { handle, ctx, clients: [] };
    const many = await post(handle.port, {}, `[${'{},'.repeat(500)}{}]`);
    expect(many.status).toBe(413);
    expect(many.body).toContain('more than 114 array elements and object members');
    const c = await client(handle.url);
    const r = await c.callTool({ name: 'rlm_answer', arguments: { question: 'q', context: ['a', 'b'] } });
    expect(r.structuredContent).toMatchObject({ answer: 'ok' });
  });

  it('cancels a run whose client connection dropped before the answer', async () => {
    const model = scripted(dir, 'dropped.json', [{ depth: 0, reply: 'FINAL("never")', delayMs: 60_000 }]);
    let aborted!: () => void;
    const done = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    const ctx = createServerContext({
      env: { RLM_MODEL: model },
      log: (l) => {
        if (l.startsWith('rlm serve: rlm_answer aborted')) aborted();
      },
    });
    const handle = await serveHttp(ctx, { port: 0 });
    running = { handle, ctx, clients: [] };
    const init = await post(handle.port, {});
    const session = String(init.headers['mcp-session-id']);
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    await post(handle.port, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
    // Send the call, then hang up as soon as the server starts its answer stream.
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'rlm_answer', arguments: { question: 'q', context: 'c' } },
    };
    await new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: handle.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...headers,
          },
        },
        (res) => {
          res.destroy();
          resolve();
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(call));
    });
    await done;
    expect(handle.sessions).toBe(1);
  });

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin', async () => {
    const { handle } = await start();
    const rebound = await post(handle.port, { host: `evil.example:${handle.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('Host');
    const origin = await post(handle.port, { origin: 'http://evil.example' });
    expect(origin.status).toBe(403);
    expect(origin.body).toContain('Origin');
    const fine = await post(handle.port, { host: `localhost:${handle.port}` });
    expect(fine.status).toBe(200);
    expect(fine.headers['mcp-session-id']).toBeTruthy();
  });

  it('accepts listed hosts and origins', async () => {
    const { handle } = await start({
      allowedHosts: ['rlm.internal'],
      allowedOrigins: ['http://app.local:3000/'],
    });
    expect((await post(handle.port, { host: `rlm.internal:${handle.port}` })).status).toBe(200);
    expect((await post(handle.port, { origin: 'http://app.local:3000' })).status).toBe(200);
    expect((await post(handle.port, { origin: 'http://app.local:3001' })).status).toBe(403);
  });

  it('requires the bearer token when one is set', async () => {
    const { handle } = await start({ token: 'sekret' });
    const none = await post(handle.port, {});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await post(handle.port, { authorization: 'Bearer wrong' })).status).toBe(401);
    await expect(client(handle.url)).rejects.toThrow();
    const c = await client(handle.url, { authorization: 'Bearer sekret' });
    const r = await c.callTool({ name: 'rlm_status', arguments: {} });
    expect(r.isError).toBeFalsy();
  });

  it('answers unknown sessions with 404, other paths with 404, and non-initialize first requests with 400', async () => {
    const { handle } = await start();
    const unknown = await post(
      handle.port,
      { 'mcp-session-id': 'no-such-session' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    );
    expect(unknown.status).toBe(404);
    expect((await post(handle.port, {}, INIT, '/other')).status).toBe(404);
    const early = await post(handle.port, {}, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(early.status).toBe(400);
    expect(handle.sessions).toBe(0);
  });

  it('will not listen beyond loopback without a token', async () => {
    const ctx = createServerContext({ env: {}, log: () => {} });
    const err = await serveHttp(ctx, { host: '0.0.0.0', port: 0 }).catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toContain('RLM_MCP_TOKEN');
    await ctx.close();
  });

  it('reports a port in use as BAD_INPUT', async () => {
    const { handle } = await start();
    const ctx = createServerContext({ env: {}, log: () => {} });
    const err = await serveHttp(ctx, { port: handle.port }).catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toContain('in use');
    await ctx.close();
  });
});

describe('host helpers', () => {
  it('parses Host headers and recognises loopback names', () => {
    expect(hostHeaderName('LocalHost:8765')).toBe('localhost');
    expect(hostHeaderName('[::1]:8765')).toBe('::1');
    expect(hostHeaderName('127.0.0.1')).toBe('127.0.0.1');
    expect(hostHeaderName(undefined)).toBeUndefined();
    expect(hostHeaderName('a b')).toBeUndefined();
    expect(isLoopback('127.0.0.2')).toBe(true);
    expect(isLoopback('[::1]')).toBe(true);
    expect(isLoopback('localhost')).toBe(true);
    expect(isLoopback('0.0.0.0')).toBe(false);
    expect(isLoopback('192.168.1.4')).toBe(false);
  });
});
