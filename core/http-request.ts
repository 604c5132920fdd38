/**
 * A JSON POST over `node:http` / `node:https`, the transport `postJson` (http-post.ts) uses when the caller
 * injects no `fetch`. Node's `fetch` is undici, which loads and compiles about 60 ms of CPU worth of modules
 * on a process's first request and spends most of each small request's CPU in its stream and header
 * machinery; a model call is one POST and one body read, which the plain client does for a fraction of that
 * (the big-context benchmark's batch of 100 sub-calls to a local server). Connections are kept alive and reused
 * through the module's global agent, which lets a process exit with idle connections open.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** The response headers a caller reads (`retry-after`...), by name in any case, as `Headers.get` does. */
export interface ResponseHeaders {
  get(name: string): string | null;
}

/** What one request produced: the whole response, or why there is none. */
export type RequestOutcome =
  | { kind: 'response'; status: number; statusText: string; headers: ResponseHeaders; text: string }
  | { kind: 'timeout' }
  | { kind: 'network'; detail: string }
  | { kind: 'aborted' };

function headerReader(headers: IncomingHttpHeaders): ResponseHeaders {
  return {
    get(name) {
      const v = headers[name.toLowerCase()];
      if (v === undefined) return null;
      return Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** `ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:1)`: the code first, as fetch's `cause` gives it. */
function describe(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? `${code} (${err.message})` : err.message;
}

/**
 * POSTs `body` (JSON text) to `url` with `headers` and reads the whole response as UTF-8 text. `timeoutMs`
 * covers connecting, the headers and the whole body; `signal` ends the request at once.
 */
export function requestJson(
  url: URL,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<RequestOutcome> {
  // Loaded on first use, synchronously: `node:https` (TLS) only for an https endpoint.
  const client =
    url.protocol === 'https:'
      ? process.getBuiltinModule('node:https')
      : process.getBuiltinModule('node:http');
  const payload = Buffer.from(body, 'utf8');
  return new Promise<RequestOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: RequestOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (outcome.kind !== 'response') req.destroy();
      resolve(outcome);
    };
    const onAbort = (): void => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    const req = client.request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(payload.length) } },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (err) => finish({ kind: 'network', detail: describe(err) }));
        res.on('end', () =>
          finish({
            kind: 'response',
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            headers: headerReader(res.headers),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', (err) => finish({ kind: 'network', detail: describe(err) }));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    req.end(payload);
  });
}
