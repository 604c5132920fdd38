/**
 * `openai:MODEL` — any OpenAI-compatible `/chat/completions` endpoint (OpenAI, llama.cpp, vLLM,
 * Ollama...) over plain `fetch`, so no SDK quirks leak in and local servers work unchanged.
 */

import {
  type AttemptOutcome,
  abortedError,
  type BackoffOptions,
  isRetryableStatus,
  withRetries,
} from '../../../core/http-retry.ts';
import type { Model, ModelRequest, ModelResponse, Usage } from '../model.ts';
import { errorBodyMessage, providerError } from './errors.ts';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIModelOptions {
  /** Model name sent in the request body. */
  model: string;
  /** Endpoint root up to and including `/v1` (default {@link OPENAI_DEFAULT_BASE_URL}). */
  baseUrl?: string;
  /** Sent as a bearer token when set; local servers usually need none. */
  apiKey?: string;
  /** Per-attempt limit covering connect, headers and body (default 10 minutes). */
  timeoutMs?: number;
  /** Extra attempts after the first on 408/409/429/5xx, network errors and timeouts (default 4). */
  maxRetries?: number;
  backoff?: BackoffOptions;
  /** Injected for tests; defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Used when a request sets no `maxOutputTokens`; unset means the server's default. */
  maxOutputTokens?: number;
  /** Overrides the reported spec (default `openai:MODEL`). */
  spec?: string;
}

const PROVIDER = 'openai';

/** A {@link Model} over an OpenAI-compatible chat completions endpoint. */
export class OpenAIModel implements Model {
  readonly spec: string;
  readonly #opts: OpenAIModelOptions;
  readonly #url: string;
  readonly #fetch: typeof fetch;

  constructor(opts: OpenAIModelOptions) {
    this.#opts = opts;
    this.spec = opts.spec ?? `openai:${opts.model}`;
    this.#url = `${(opts.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '')}/chat/completions`;
    this.#fetch = opts.fetch ?? globalThis.fetch;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const body = JSON.stringify(this.#body(request));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.#opts.apiKey) headers.authorization = `Bearer ${this.#opts.apiKey}`;
    const timeoutMs = this.#opts.timeoutMs ?? 600_000;
    const signal = request.signal;
    const text = await withRetries(() => this.#attempt(body, headers, timeoutMs, signal), {
      maxRetries: this.#opts.maxRetries ?? 4,
      backoff: this.#opts.backoff ?? {},
      signal,
      name: PROVIDER,
    });
    return this.#parse(text);
  }

  #body(request: ModelRequest): Record<string, unknown> {
    const messages: Array<{ role: string; content: string }> = [];
    if (request.system) messages.push({ role: 'system', content: request.system });
    for (const m of request.messages) messages.push({ role: m.role, content: m.content });
    const body: Record<string, unknown> = { model: this.#opts.model, messages, stream: false };
    const maxTokens = request.maxOutputTokens ?? this.#opts.maxOutputTokens;
    if (maxTokens !== undefined) {
      // OpenAI's reasoning models reject the legacy `max_tokens`; most local servers only know it.
      const key = this.#url.startsWith(OPENAI_DEFAULT_BASE_URL) ? 'max_completion_tokens' : 'max_tokens';
      body[key] = maxTokens;
    }
    return body;
  }

  async #attempt(
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<AttemptOutcome<string>> {
    const timer = new AbortController();
    const handle = setTimeout(() => timer.abort(), timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal;
    const secrets = [this.#opts.apiKey];
    try {
      const res = await this.#fetch(this.#url, { method: 'POST', headers, body, signal: combined });
      // The body is read under the same timer: a server that stalls mid-body is as stuck as a silent one.
      const text = await res.text();
      if (res.ok) return { ok: true, value: text };
      const retryable = isRetryableStatus(res.status);
      const detail = errorBodyMessage(text) || res.statusText;
      const error = providerError(
        PROVIDER,
        `HTTP ${res.status}: ${detail}`,
        { status: res.status, retryable },
        secrets,
      );
      return { ok: false, error, retryable, headers: res.headers };
    } catch (err) {
      if (signal?.aborted) throw abortedError(PROVIDER);
      if (timer.signal.aborted) {
        const error = providerError(PROVIDER, `request timed out after ${timeoutMs} ms`, { retryable: true });
        return { ok: false, error, retryable: true };
      }
      const error = providerError(
        PROVIDER,
        `network error: ${describeNetworkError(err)}`,
        { retryable: true },
        secrets,
      );
      return { ok: false, error, retryable: true };
    } finally {
      clearTimeout(handle);
    }
  }

  #parse(text: string): ModelResponse {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw providerError(PROVIDER, `response is not JSON: ${text.slice(0, 120)}`);
    }
    const choice = firstChoice(data);
    const message = choice?.message;
    if (!message || typeof message !== 'object') {
      throw providerError(PROVIDER, 'response has no choices[0].message');
    }
    const content = (message as Record<string, unknown>).content;
    if (content !== null && content !== undefined && typeof content !== 'string') {
      throw providerError(PROVIDER, 'choices[0].message.content is not a string');
    }
    const d = data as Record<string, unknown>;
    const response: ModelResponse = {
      text: content ?? '',
      usage: parseUsage(d.usage),
      model: typeof d.model === 'string' && d.model ? d.model : this.#opts.model,
    };
    if (typeof choice?.finish_reason === 'string') response.stopReason = choice.finish_reason;
    return response;
  }
}

function firstChoice(data: unknown): Record<string, unknown> | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const choices = (data as Record<string, unknown>).choices;
  if (!Array.isArray(choices)) return undefined;
  const first: unknown = choices[0];
  return first && typeof first === 'object' ? (first as Record<string, unknown>) : undefined;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}

/**
 * OpenAI counts cached tokens inside `prompt_tokens`; rlm's {@link Usage} keeps them apart (the
 * Anthropic convention) so that `inputTokens` is always the full-price part.
 */
function parseUsage(raw: unknown): Usage {
  if (!raw || typeof raw !== 'object') return { inputTokens: 0, outputTokens: 0 };
  const u = raw as Record<string, unknown>;
  const prompt = num(u.prompt_tokens);
  const details = u.prompt_tokens_details;
  const cached =
    details && typeof details === 'object' ? num((details as Record<string, unknown>).cached_tokens) : 0;
  const usage: Usage = { inputTokens: Math.max(prompt - cached, 0), outputTokens: num(u.completion_tokens) };
  if (cached > 0) usage.cacheReadTokens = cached;
  return usage;
}

function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // undici hides the useful part (ECONNREFUSED, ENOTFOUND...) in `cause`.
  const cause = (err as Error & { cause?: unknown }).cause;
  if (cause && typeof cause === 'object') {
    const code = (cause as { code?: unknown }).code;
    const msg = (cause as { message?: unknown }).message;
    if (typeof code === 'string') return typeof msg === 'string' ? `${code} (${msg})` : code;
    if (typeof msg === 'string') return msg;
  }
  return err.message;
}
