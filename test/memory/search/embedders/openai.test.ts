import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIEmbedder } from '../../../../memory/search/embedders/openai.ts';
import { caught } from '../../../helpers/errors.ts';

interface Seen {
  body: { model: string; input: string[]; dimensions?: number };
  auth: string | undefined;
  at: number;
}

type Handler = (req: Seen, res: ServerResponse, n: number) => void;

const servers: Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback fake of the `/embeddings` endpoint; `handler` decides each reply. */
async function fakeServer(handler: Handler): Promise<{ baseUrl: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      raw += c;
    });
    req.on('end', () => {
      expect(req.method).toBe('POST');
      expect(req.url).toBe('/v1/embeddings');
      const entry: Seen = { body: JSON.parse(raw), auth: req.headers.authorization, at: Date.now() };
      seen.push(entry);
      handler(entry, res, seen.length);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, seen };
}

/** A deterministic 4-d vector per text so tests can check order. */
function vec(text: string): number[] {
  return [text.length, text.charCodeAt(0) || 0, 1, 0];
}

function ok(res: ServerResponse, input: string[], shuffle = false): void {
  const data = input.map((t, index) => ({ object: 'embedding', index, embedding: vec(t) }));
  if (shuffle) data.reverse();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: 'm' }));
}

function fail(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type: 'x' } }));
}

describe('OpenAIEmbedder', () => {
  it('batches inputs in order and reassembles vectors by index', async () => {
    const { baseUrl, seen } = await fakeServer((req, res) => ok(res, req.body.input, true));
    const e = new OpenAIEmbedder({ baseUrl, apiKey: 'sk-test', model: 'm' });
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i}`);
    const out = await e.embed(texts);
    expect(seen.map((s) => s.body.input.length)).toEqual([64, 64, 22]);
    expect(seen.flatMap((s) => s.body.input)).toEqual(texts);
    expect(seen[0]?.auth).toBe('Bearer sk-test');
    expect(seen[0]?.body.model).toBe('m');
    expect(seen[0]?.body.dimensions).toBeUndefined();
    expect(out).toEqual(texts.map(vec));
    expect(e.dimensions).toBe(4);
  });

  it('sends requested dimensions and no auth header without a key', async () => {
    const { baseUrl, seen } = await fakeServer((req, res) => ok(res, req.body.input));
    const e = new OpenAIEmbedder({ baseUrl, model: 'm', dimensions: 4, batchSize: 10 });
    expect(e.name).toBe('openai:m@4');
    await e.embed(['a', 'b']);
    expect(seen[0]?.body.dimensions).toBe(4);
    expect(seen[0]?.auth).toBeUndefined();
  });

  it('returns [] without a request for no texts', async () => {
    const { baseUrl, seen } = await fakeServer((req, res) => ok(res, req.body.input));
    expect(await new OpenAIEmbedder({ baseUrl, model: 'm' }).embed([])).toEqual([]);
    expect(seen).toHaveLength(0);
  });

  it('waits for retry-after on 429, then succeeds', async () => {
    const { baseUrl, seen } = await fakeServer((req, res, n) =>
      n === 1 ? fail(res, 429, 'slow down', { 'retry-after': '1' }) : ok(res, req.body.input),
    );
    const e = new OpenAIEmbedder({ baseUrl, model: 'm', backoff: { baseMs: 1 } });
    expect(await e.embed(['hello'])).toEqual([vec('hello')]);
    expect(seen).toHaveLength(2);
    // The backoff alone would be ~1 ms; only honouring retry-after explains a ~1 s gap.
    expect((seen[1]?.at ?? 0) - (seen[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
  });

  it('retries a 500, then succeeds', async () => {
    const { baseUrl, seen } = await fakeServer((req, res, n) =>
      n === 1 ? fail(res, 500, 'boom') : ok(res, req.body.input),
    );
    const e = new OpenAIEmbedder({ baseUrl, model: 'm', backoff: { baseMs: 5 } });
    expect(await e.embed(['x', 'yy'])).toEqual([vec('x'), vec('yy')]);
    expect(seen).toHaveLength(2);
  });

  it('gives up after maxRetries on persistent 503', async () => {
    const { baseUrl, seen } = await fakeServer((_req, res) => fail(res, 503, 'overloaded'));
    const err = await caught(
      new OpenAIEmbedder({ baseUrl, model: 'm', backoff: { baseMs: 1 }, maxRetries: 2 }).embed(['x']),
    );
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('503');
    expect(err.message).toContain('overloaded');
    expect(err.message).toContain('3 attempts');
    expect(seen).toHaveLength(3);
  });

  it('retries 408 and 409 like the model providers (one policy, core/http-retry.ts)', async () => {
    for (const status of [408, 409]) {
      const { baseUrl, seen } = await fakeServer((req, res, n) =>
        n === 1 ? fail(res, status, 'try again') : ok(res, req.body.input),
      );
      const e = new OpenAIEmbedder({ baseUrl, model: 'm', backoff: { baseMs: 1 } });
      expect(await e.embed(['x'])).toEqual([vec('x')]);
      expect(seen).toHaveLength(2);
    }
  });

  it('caps a server-requested wait at backoff.maxRetryAfterMs', async () => {
    const { baseUrl, seen } = await fakeServer((req, res, n) =>
      n === 1 ? fail(res, 429, 'slow down', { 'retry-after': '3600' }) : ok(res, req.body.input),
    );
    const e = new OpenAIEmbedder({ baseUrl, model: 'm', backoff: { maxRetryAfterMs: 20 } });
    expect(await e.embed(['x'])).toEqual([vec('x')]);
    expect(seen).toHaveLength(2);
  });

  it('does not retry a 401 and never reveals the key', async () => {
    const { baseUrl, seen } = await fakeServer((_req, res) =>
      fail(res, 401, 'Incorrect API key provided: sk-secret-123'),
    );
    const err = await caught(
      new OpenAIEmbedder({ baseUrl, apiKey: 'sk-secret-123', model: 'm', backoff: { baseMs: 1 } }).embed([
        'x',
      ]),
    );
    expect(seen).toHaveLength(1);
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('401');
    expect(err.message).toContain('Incorrect API key provided');
    expect(err.message).not.toContain('sk-secret-123');
    expect(JSON.stringify(err.details)).not.toContain('sk-secret-123');
    expect(err.details.status).toBe(401);
  });

  it.each([
    ['not JSON', () => 'oops'],
    ['no data array', () => JSON.stringify({ object: 'list' })],
    ['too few items', () => JSON.stringify({ data: [{ index: 0, embedding: [1, 2] }] })],
    [
      'inconsistent dimensions',
      () =>
        JSON.stringify({
          data: [
            { index: 0, embedding: [1, 2] },
            { index: 1, embedding: [1, 2, 3] },
          ],
        }),
    ],
    [
      'duplicate index',
      () =>
        JSON.stringify({
          data: [
            { index: 0, embedding: [1, 2] },
            { index: 0, embedding: [1, 2] },
          ],
        }),
    ],
    [
      'non-numeric component',
      () =>
        JSON.stringify({
          data: [
            { index: 0, embedding: [1, 'a'] },
            { index: 1, embedding: [1, 2] },
          ],
        }),
    ],
  ])('rejects a malformed response (%s) without retrying', async (_name, body) => {
    const { baseUrl, seen } = await fakeServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body());
    });
    const err = await caught(
      new OpenAIEmbedder({ baseUrl, model: 'm', backoff: { baseMs: 1 } }).embed(['a', 'b']),
    );
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('malformed');
    expect(seen).toHaveLength(1);
  });

  it('rejects vectors whose length differs from the requested dimensions', async () => {
    const { baseUrl } = await fakeServer((req, res) => ok(res, req.body.input));
    const err = await caught(new OpenAIEmbedder({ baseUrl, model: 'm', dimensions: 8 }).embed(['a']));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('expected 8');
  });

  it('times out a server that never answers', async () => {
    const { baseUrl, seen } = await fakeServer(() => {
      // Never respond.
    });
    const err = await caught(
      new OpenAIEmbedder({
        baseUrl,
        model: 'm',
        timeoutMs: 100,
        maxRetries: 1,
        backoff: { baseMs: 1 },
      }).embed(['a']),
    );
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('timed out after 100ms');
    expect(seen).toHaveLength(2);
  });

  it('reports a refused connection as PROVIDER', async () => {
    const { baseUrl } = await fakeServer(() => {});
    await new Promise((r) => {
      const s = servers.pop();
      s?.close(r);
    });
    const err = await caught(
      new OpenAIEmbedder({ baseUrl, model: 'm', maxRetries: 1, backoff: { baseMs: 1 } }).embed(['a']),
    );
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('network error');
  });

  it('stops on abort, during a request and during backoff', async () => {
    const ctrl = new AbortController();
    // The server has the request and never answers.
    const { baseUrl, seen } = await fakeServer(() => ctrl.abort());
    const p = new OpenAIEmbedder({ baseUrl, model: 'm' }).embed(['a'], ctrl.signal);
    expect((await caught(p)).code).toBe('ABORTED');
    expect(seen).toHaveLength(1);

    const ctrl2 = new AbortController();
    // Aborted once the server has answered "retry in 30 s".
    const slow = await fakeServer((_req, res) => {
      res.once('finish', () => ctrl2.abort());
      fail(res, 429, 'wait', { 'retry-after': '30' });
    });
    const p2 = new OpenAIEmbedder({ baseUrl: slow.baseUrl, model: 'm' }).embed(['a'], ctrl2.signal);
    expect((await caught(p2)).code).toBe('ABORTED');
    expect(slow.seen).toHaveLength(1);
  });
});
