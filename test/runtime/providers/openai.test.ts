import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError, type RlmError } from '../../../core/errors.ts';
import type { ModelRequest } from '../../../src/runtime/model.ts';
import { OpenAIModel, type OpenAIModelOptions } from '../../../src/runtime/providers/openai.ts';
import { type FakeServer, type Handler, sendJson, startFakeServer } from './fake-server.ts';

const KEY = 'sk-openai-test-0123456789abcdef';

const okCompletion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content: 'FINAL(42)' }, finish_reason: 'stop' }],
  usage: {
    prompt_tokens: 1000,
    completion_tokens: 9,
    total_tokens: 1009,
    prompt_tokens_details: { cached_tokens: 768 },
  },
};

const request: ModelRequest = {
  system: 'sys',
  messages: [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'a' },
    { role: 'user', content: 'q2' },
  ],
  depth: 1,
};

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(handler: Handler, opts: Partial<OpenAIModelOptions> = {}) {
  server = await startFakeServer(handler);
  const model = new OpenAIModel({
    model: 'gpt-4o-mini',
    baseUrl: `${server.url}/v1`,
    apiKey: KEY,
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

describe('OpenAIModel', () => {
  it('posts system + messages and maps text, model and usage (cached tokens apart)', async () => {
    const { model, srv } = await setup((_req, _i, res) => sendJson(res, 200, okCompletion));
    const res = await model.complete({ ...request, maxOutputTokens: 50 });
    expect(res).toEqual({
      text: 'FINAL(42)',
      model: 'gpt-4o-mini-2024-07-18',
      stopReason: 'stop',
      usage: { inputTokens: 232, outputTokens: 9, cacheReadTokens: 768 },
    });
    expect(model.spec).toBe('openai:gpt-4o-mini');
    const sent = srv.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      stream: false,
      // A local server gets the widely supported legacy name.
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'q2' },
      ],
    });
  });

  it('sends no authorization header without a key and tolerates missing usage and null content', async () => {
    const { srv } = await setup((_req, _i, res) =>
      sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: null } }] }),
    );
    const model = new OpenAIModel({ model: 'gpt-4o-mini', baseUrl: `${srv.url}/v1` });
    const res = await model.complete(request);
    expect(res).toEqual({ text: '', model: 'gpt-4o-mini', usage: { inputTokens: 0, outputTokens: 0 } });
    expect(srv.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('retries a 529 / 5xx and then succeeds', async () => {
    const { model, srv } = await setup((_req, i, res) =>
      i === 0 ? sendJson(res, 529, { error: { message: 'overloaded' } }) : sendJson(res, 200, okCompletion),
    );
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'FINAL(42)' });
    expect(srv.requests).toHaveLength(2);
  });

  it('honours retry-after on a 429 and then succeeds', async () => {
    const { model, srv } = await setup((_req, i, res) =>
      i === 0
        ? sendJson(res, 429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '0.05' })
        : sendJson(res, 200, okCompletion),
    );
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'FINAL(42)' });
    expect(srv.requests).toHaveLength(2);
  });

  it('caps an excessive retry-after (HTTP date far in the future)', async () => {
    const later = new Date(Date.now() + 3_600_000).toUTCString();
    const { model, srv } = await setup(
      (_req, i, res) =>
        i === 0
          ? sendJson(res, 429, { error: { message: 'later' } }, { 'retry-after': later })
          : sendJson(res, 200, okCompletion),
      { backoff: { baseMs: 5, maxRetryAfterMs: 20 } },
    );
    await expect(model.complete(request)).resolves.toMatchObject({ text: 'FINAL(42)' });
    expect(srv.requests).toHaveLength(2);
  });

  it('gives up after maxRetries with the last status', async () => {
    const { model, srv } = await setup((_req, _i, res) => sendJson(res, 500, { error: 'boom' }), {
      maxRetries: 2,
    });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toBe('openai: HTTP 500: boom');
    expect(err.details.status).toBe(500);
    expect(srv.requests).toHaveLength(3);
  });

  it.each([400, 401, 403, 404])(
    'does not retry a %i, and keeps the key out of the message',
    async (status) => {
      const { model, srv } = await setup((_req, _i, res) =>
        sendJson(res, status, { error: { message: `Incorrect API key provided: ${KEY}` } }),
      );
      const err = await rejection(model.complete(request));
      expect(err.code).toBe('PROVIDER');
      expect(err.message).toContain(`HTTP ${status}`);
      expect(err.message).not.toContain(KEY);
      expect(srv.requests).toHaveLength(1);
    },
  );

  it('times out a server that never answers (and retries the timeout)', async () => {
    const { model, srv } = await setup(() => {}, { timeoutMs: 100, maxRetries: 1 });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toBe('openai: request timed out after 100 ms');
    expect(srv.requests).toHaveLength(2);
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

  it('aborts during a retry wait', async () => {
    const ctl = new AbortController();
    // Aborted once the server has answered "retry in 30 s": the client is reading that or waiting.
    const { model, srv } = await setup(
      (_req, _i, res) => {
        res.once('finish', () => ctl.abort());
        sendJson(res, 429, { error: { message: 'wait' } }, { 'retry-after': '30' });
      },
      { backoff: { maxRetryAfterMs: 60_000 } },
    );
    const pending = model.complete({ ...request, signal: ctl.signal });
    expect((await rejection(pending)).code).toBe('ABORTED');
    expect(srv.requests).toHaveLength(1);
  });

  it('retries network errors, then reports them', async () => {
    let calls = 0;
    const refusing: typeof fetch = async () => {
      calls++;
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
      });
    };
    const model = new OpenAIModel({
      model: 'm',
      baseUrl: 'http://127.0.0.1:9/v1',
      fetch: refusing,
      maxRetries: 2,
      backoff: { baseMs: 1 },
    });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toBe('openai: network error: ECONNREFUSED (connect refused)');
    expect(calls).toBe(3);
  });

  it.each([
    ['not JSON', 'hello'],
    ['no choices', { object: 'chat.completion' }],
    ['empty choices', { choices: [] }],
    ['non-string content', { choices: [{ message: { content: 42 } }] }],
  ])('rejects a malformed response (%s) without retrying', async (_label, body) => {
    const { model, srv } = await setup((_req, _i, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(srv.requests).toHaveLength(1);
  });

  it('uses max_completion_tokens for api.openai.com', async () => {
    let sent: unknown;
    const capture: typeof fetch = async (_url, init) => {
      sent = JSON.parse(String(init?.body));
      return new Response(JSON.stringify(okCompletion), { status: 200 });
    };
    const model = new OpenAIModel({ model: 'o4-mini', apiKey: KEY, fetch: capture });
    await model.complete({ ...request, maxOutputTokens: 77 });
    expect(sent).toMatchObject({ max_completion_tokens: 77 });
    expect(sent).not.toHaveProperty('max_tokens');
  });
});
