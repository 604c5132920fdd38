import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError, type RlmError } from '../../../core/errors.ts';
import type { ModelRequest } from '../../../src/runtime/model.ts';
import {
  AnthropicModel,
  type AnthropicModelOptions,
  defaultMaxTokens,
} from '../../../src/runtime/providers/anthropic.ts';
import { type FakeServer, type Handler, sendJson, startFakeServer } from './fake-server.ts';

const KEY = 'sk-ant-test-0123456789abcdef';

const okMessage = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'text', text: 'Hello' },
    { type: 'text', text: ', world' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {
    input_tokens: 12,
    output_tokens: 7,
    cache_creation_input_tokens: 300,
    cache_read_input_tokens: 4000,
  },
};

const request: ModelRequest = {
  system: 'You are the root RLM.',
  messages: [
    { role: 'user', content: 'question' },
    { role: 'assistant', content: '```repl\nprint(1)\n```' },
    { role: 'user', content: 'output: 1' },
  ],
  depth: 0,
};

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(handler: Handler, opts: Partial<AnthropicModelOptions> = {}) {
  server = await startFakeServer(handler);
  const model = new AnthropicModel({
    model: 'claude-sonnet-4-5',
    apiKey: KEY,
    baseUrl: server.url,
    backoff: { baseMs: 5, maxMs: 20 },
    ...opts,
  });
  return { model, srv: server };
}

async function rejection(p: Promise<unknown>): Promise<RlmError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isRlmError(err)) throw new Error(`expected an RlmError, got ${String(err)}`);
  return err;
}

describe('AnthropicModel', () => {
  it('returns text and usage, and marks the system prompt and newest message for caching', async () => {
    const { model, srv } = await setup((_req, _i, res) => sendJson(res, 200, okMessage));
    const res = await model.complete({ ...request, maxOutputTokens: 1234 });

    expect(res.text).toBe('Hello, world');
    expect(res.model).toBe('claude-sonnet-4-5-20250929');
    expect(res.stopReason).toBe('end_turn');
    expect(res.usage).toEqual({
      inputTokens: 12,
      outputTokens: 7,
      cacheWriteTokens: 300,
      cacheReadTokens: 4000,
    });
    expect(model.spec).toBe('anthropic:claude-sonnet-4-5');

    expect(srv.requests).toHaveLength(1);
    const sent = srv.requests[0]!;
    expect(sent.url).toBe('/v1/messages');
    // SDK versions differ on the header (x-api-key vs bearer); either way the key must be sent.
    expect([sent.headers['x-api-key'], sent.headers.authorization]).toContain(
      sent.headers['x-api-key'] ? KEY : `Bearer ${KEY}`,
    );
    expect(sent.body.model).toBe('claude-sonnet-4-5');
    expect(sent.body.max_tokens).toBe(1234);
    expect(sent.body.system).toEqual([
      { type: 'text', text: 'You are the root RLM.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(sent.body.messages).toEqual([
      { role: 'user', content: 'question' },
      { role: 'assistant', content: '```repl\nprint(1)\n```' },
      { role: 'user', content: [{ type: 'text', text: 'output: 1', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('retries a 529 overloaded response and then succeeds', async () => {
    const { model, srv } = await setup((_req, i, res) =>
      i === 0
        ? sendJson(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
        : sendJson(res, 200, okMessage),
    );
    const res = await model.complete(request);
    expect(res.text).toBe('Hello, world');
    expect(srv.requests).toHaveLength(2);
  });

  it("retries by rlm's policy alone, whatever the server's x-should-retry says to the SDK", async () => {
    const { model, srv } = await setup((_req, i, res) => {
      if (i === 0) sendJson(res, 503, { error: { message: 'down' } }, { 'x-should-retry': 'false' });
      else if (i === 1) sendJson(res, 200, okMessage);
      else sendJson(res, 400, { error: { message: 'bad request' } }, { 'x-should-retry': 'true' });
    });
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'Hello, world' });
    expect(srv.requests).toHaveLength(2);
    expect((await rejection(model.complete(request))).details.status).toBe(400);
    expect(srv.requests).toHaveLength(3);
  });

  it('retries 408, 409 and a dropped connection', async () => {
    const { model, srv } = await setup((_req, i, res) => {
      if (i === 0) sendJson(res, 408, { error: { message: 'timeout' } });
      else if (i === 1) sendJson(res, 409, { error: { message: 'conflict' } });
      else if (i === 2) res.socket?.destroy();
      else sendJson(res, 200, okMessage);
    });
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'Hello, world' });
    expect(srv.requests).toHaveLength(4);
  });

  it('waits on the default schedule when no backoff is given', async () => {
    server = await startFakeServer((_req, i, res) =>
      i === 0 ? sendJson(res, 529, { error: { message: 'Overloaded' } }) : sendJson(res, 200, okMessage),
    );
    const model = new AnthropicModel({ model: 'claude-sonnet-4-5', apiKey: KEY, baseUrl: server.url });
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'Hello, world' });
    expect(server.requests).toHaveLength(2);
  });

  it('honours retry-after on a 429 and then succeeds', async () => {
    const { model, srv } = await setup((_req, i, res) =>
      i === 0
        ? sendJson(
            res,
            429,
            { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
            { 'retry-after': '0.05' },
          )
        : sendJson(res, 200, okMessage),
    );
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'Hello, world' });
    expect(srv.requests).toHaveLength(2);
  });

  it('caps an excessive retry-after instead of stalling', async () => {
    const { model, srv } = await setup(
      (_req, i, res) =>
        i === 0
          ? sendJson(res, 429, { error: { message: 'later' } }, { 'retry-after': '3600' })
          : sendJson(res, 200, okMessage),
      { backoff: { baseMs: 5, maxRetryAfterMs: 20 } },
    );
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'Hello, world' });
    expect(srv.requests).toHaveLength(2);
  });

  it('gives up after maxRetries with a PROVIDER error carrying the status', async () => {
    const { model, srv } = await setup(
      (_req, _i, res) => sendJson(res, 503, { error: { message: 'down' } }),
      {
        maxRetries: 2,
      },
    );
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('503');
    expect(err.details.status).toBe(503);
    expect(srv.requests).toHaveLength(3);
  });

  it('does not retry a 401, and keeps the key out of the message', async () => {
    const { model, srv } = await setup((_req, _i, res) =>
      sendJson(res, 401, {
        type: 'error',
        error: { type: 'authentication_error', message: `invalid x-api-key ${KEY}` },
      }),
    );
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toMatch(/^anthropic: HTTP 401: invalid x-api-key/);
    expect(err.message).not.toContain(KEY);
    expect(err.stack ?? '').not.toContain(KEY);
    expect(srv.requests).toHaveLength(1);
  });

  it('times out a server that never answers', async () => {
    const { model, srv } = await setup(() => {}, { timeoutMs: 150, maxRetries: 0 });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toMatch(/timed out after 150 ms/);
    expect(srv.requests).toHaveLength(1);
  });

  it('turns an abort into ABORTED, mid-request and before sending', async () => {
    const ctl = new AbortController();
    // The server has the request and never answers: the abort comes mid-request.
    const { model, srv } = await setup(() => ctl.abort());
    const pending = model.complete({ ...request, signal: ctl.signal });
    expect((await rejection(pending)).code).toBe('ABORTED');
    expect(srv.requests).toHaveLength(1);

    const before = srv.requests.length;
    expect((await rejection(model.complete({ ...request, signal: AbortSignal.abort() }))).code).toBe(
      'ABORTED',
    );
    expect(srv.requests).toHaveLength(before);
  });

  it('reports a refused connection as PROVIDER', async () => {
    const { model, srv } = await setup(() => {}, { maxRetries: 0 });
    await srv.close();
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toMatch(/^anthropic: connection error/);
  });
});

describe('defaultMaxTokens', () => {
  it('stays within what Claude 3 models accept', () => {
    expect(defaultMaxTokens('claude-3-haiku-20240307')).toBe(4096);
    expect(defaultMaxTokens('claude-3-5-haiku-20241022')).toBe(8192);
    expect(defaultMaxTokens('claude-sonnet-4-5')).toBe(8192);
  });
});
