/**
 * One attempt of a JSON POST, for the clients that speak plain HTTP (the `openai:` chat provider and the
 * OpenAI-compatible embedder): through an injected `fetch` (tests, custom transports), else through
 * `node:http` (http-request.ts). It reports what happened without judging it: whether to retry is
 * `http-retry.ts`'s call, and the wording of the error is the caller's.
 */
import { type RequestOutcome, requestJson } from './http-request.ts';
import { abortedError } from './http-retry.ts';

/** What one POST produced: a response read whole, or why there is none. */
export type PostOutcome = Exclude<RequestOutcome, { kind: 'aborted' }>;

/** Options of {@link postJson}. */
export interface PostOptions {
  /** Sent as a bearer token when set; local servers usually need none. */
  apiKey?: string | undefined;
  /** Covers connecting, the headers and the whole body. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The transport; default `node:http` / `node:https`. */
  fetch?: typeof fetch | undefined;
  /** Names the caller in the ABORTED error. */
  name: string;
}

/**
 * POSTs `body` as JSON to `url` and reads the whole response as text. Throws ABORTED when the caller's
 * signal fires; every other failure is an outcome.
 */
export async function postJson(url: string, body: unknown, opts: PostOptions): Promise<PostOutcome> {
  if (opts.signal?.aborted) throw abortedError(opts.name);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  if (opts.fetch === undefined) {
    const out = await requestJson(new URL(url), JSON.stringify(body), headers, opts.timeoutMs, opts.signal);
    if (out.kind === 'aborted') throw abortedError(opts.name);
    return out;
  }
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  try {
    const res = await opts.fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
    // The body is read under the same timer: a server that stalls mid-body is as stuck as a silent one.
    const text = await res.text();
    return { kind: 'response', status: res.status, statusText: res.statusText, headers: res.headers, text };
  } catch (err) {
    if (opts.signal?.aborted) throw abortedError(opts.name);
    if (timeout.aborted) return { kind: 'timeout' };
    return { kind: 'network', detail: describeNetworkError(err) };
  }
}

/** undici hides the useful part of a failed fetch (ECONNREFUSED, ENOTFOUND...) in `cause`. */
function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  if (cause && typeof cause === 'object') {
    const code = (cause as { code?: unknown }).code;
    const msg = (cause as { message?: unknown }).message;
    if (typeof code === 'string') return typeof msg === 'string' ? `${code} (${msg})` : code;
    if (typeof msg === 'string') return msg;
  }
  return err.message;
}

/**
 * The human part of an error body: `{error:{message}}` (OpenAI, Anthropic), `{error:"..."}`, `{message}`,
 * `{detail}` (some local servers), or else the raw text.
 */
export function errorBodyMessage(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object') {
      const o = parsed as Record<string, unknown>;
      const err = o.error;
      if (err && typeof err === 'object') {
        const msg = (err as Record<string, unknown>).message;
        if (typeof msg === 'string') return msg;
      }
      if (typeof err === 'string') return err;
      if (typeof o.message === 'string') return o.message;
      if (typeof o.detail === 'string') return o.detail;
    }
  } catch {
    // Not JSON: the raw text is the best there is.
  }
  return body;
}
