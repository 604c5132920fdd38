import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { errorBodyMessage, postJson } from '../../core/http-post.ts';

describe('errorBodyMessage', () => {
  it('finds the message in the error bodies servers send, else keeps the text', () => {
    expect(errorBodyMessage('{"error":{"message":"bad key","type":"auth"}}')).toBe('bad key');
    expect(errorBodyMessage('{"error":"model not loaded"}')).toBe('model not loaded');
    expect(errorBodyMessage('{"message":"slow down"}')).toBe('slow down');
    expect(errorBodyMessage('{"detail":"Not Found"}')).toBe('Not Found');
    expect(errorBodyMessage('<html>502 Bad Gateway</html>')).toBe('<html>502 Bad Gateway</html>');
  });
});

describe('postJson', () => {
  const fetchOf = (impl: typeof fetch) => ({ timeoutMs: 1000, fetch: impl, name: 'test' });

  it('sends JSON with the key as a bearer token and reads the whole response', async () => {
    let seen: RequestInit | undefined;
    const out = await postJson(
      'http://127.0.0.1:1/v1/x',
      { a: 1 },
      {
        ...fetchOf(async (_url, init) => {
          seen = init;
          return new Response('{"ok":true}', { status: 201, statusText: 'Created' });
        }),
        apiKey: 'sk-0123456789',
      },
    );
    expect(out).toMatchObject({ kind: 'response', status: 201, statusText: 'Created', text: '{"ok":true}' });
    expect(seen?.body).toBe('{"a":1}');
    expect(seen?.headers).toMatchObject({ authorization: 'Bearer sk-0123456789' });
  });

  it("tells a timeout from a network error, and throws ABORTED for the caller's abort", async () => {
    const hang: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
      );
    expect(await postJson('http://x', {}, { ...fetchOf(hang), timeoutMs: 10 })).toEqual({ kind: 'timeout' });
    const refused: typeof fetch = async () => {
      throw Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
      });
    };
    expect(await postJson('http://x', {}, fetchOf(refused))).toEqual({
      kind: 'network',
      detail: 'ECONNREFUSED (connect refused)',
    });
    const ctl = new AbortController();
    const pending = postJson('http://x', {}, { ...fetchOf(hang), signal: ctl.signal });
    ctl.abort();
    await expect(pending).rejects.toSatisfy((e: unknown) => isRlmError(e, 'ABORTED'));
  });
});

describe('postJson over node:http (no fetch given)', () => {
  /** A loopback server whose handler the test sets; returns its URL, the connections seen and a closer. */
  async function serve(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void) {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    const sockets = new Set<unknown>();
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/v1/x`,
      connections: () => sockets.size,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  it('sends JSON with the key, reads status, headers and a UTF-8 body, and reuses its connection', async () => {
    const seen: { auth: string | undefined; type: string | undefined; body: string }[] = [];
    const server = await serve((req, body, res) => {
      seen.push({ auth: req.headers.authorization, type: req.headers['content-type'], body });
      res.writeHead(429, 'Slow Down', { 'Retry-After': '2', 'content-type': 'application/json' });
      res.end('{"error":"é ✓"}');
    });
    try {
      const opts = { timeoutMs: 5000, name: 'test', apiKey: 'sk-0123456789' };
      const out = await postJson(server.url, { a: 'é' }, opts);
      expect(out).toMatchObject({
        kind: 'response',
        status: 429,
        statusText: 'Slow Down',
        text: '{"error":"é ✓"}',
      });
      expect(out.kind === 'response' && out.headers.get('retry-after')).toBe('2');
      expect(out.kind === 'response' && out.headers.get('x-missing')).toBeNull();
      expect(seen[0]).toEqual({ auth: 'Bearer sk-0123456789', type: 'application/json', body: '{"a":"é"}' });
      await postJson(server.url, {}, opts);
      expect(server.connections()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("tells a timeout from a network error, and throws ABORTED for the caller's abort", async () => {
    const server = await serve(() => {});
    try {
      expect(await postJson(server.url, {}, { timeoutMs: 50, name: 'test' })).toEqual({ kind: 'timeout' });
      const ctl = new AbortController();
      const pending = postJson(server.url, {}, { timeoutMs: 60_000, name: 'test', signal: ctl.signal });
      ctl.abort();
      await expect(pending).rejects.toSatisfy((e: unknown) => isRlmError(e, 'ABORTED'));
    } finally {
      await server.close();
    }
    const refused = await postJson(server.url, {}, { timeoutMs: 5000, name: 'test' });
    expect(refused).toMatchObject({ kind: 'network', detail: expect.stringMatching(/^ECONNREFUSED \(/) });
  });
});
