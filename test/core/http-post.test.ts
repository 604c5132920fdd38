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
