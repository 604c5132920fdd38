/**
 * `openai:MODEL` — any OpenAI-compatible `/chat/completions` endpoint (OpenAI, llama.cpp, vLLM,
 * Ollama...) over plain `node:http` (core/http-post.ts): one POST and one JSON parse need no SDK (the `openai` package would add
 * 35 MB to the install for them), and local servers work unchanged. Retries follow `core/http-retry.ts`.
 */
import { errorBodyMessage, postJson } from '../../../core/http-post.ts';
import {
  type AttemptOutcome,
  type BackoffOptions,
  isRetryableStatus,
  withRetries,
} from '../../../core/http-retry.ts';
import type { Model, ModelRequest, ModelResponse, Usage } from '../model.ts';
import { providerError } from './errors.ts';

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
  /** Injected for tests and custom transports; default `node:http` / `node:https`. */
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
  readonly #fetch: typeof fetch | undefined;

  constructor(opts: OpenAIModelOptions) {
    this.#opts = opts;
    this.spec = opts.spec ?? `openai:${opts.model}`;
    this.#url = `${(opts.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '')}/chat/completions`;
    this.#fetch = opts.fetch;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const body = this.#body(request);
    const signal = request.signal;
    const text = await withRetries(() => this.#attempt(body, signal), {
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

  async #attempt(body: unknown, signal: AbortSignal | undefined): Promise<AttemptOutcome<string>> {
    const timeoutMs = this.#opts.timeoutMs ?? 600_000;
    const { apiKey } = this.#opts;
    const res = await postJson(this.#url, body, {
      apiKey,
      timeoutMs,
      signal,
      fetch: this.#fetch,
      name: PROVIDER,
    });
    if (res.kind === 'timeout') {
      const error = providerError(PROVIDER, `request timed out after ${timeoutMs} ms`, { retryable: true });
      return { ok: false, error, retryable: true };
    }
    if (res.kind === 'network') {
      const error = providerError(PROVIDER, `network error: ${res.detail}`, { retryable: true }, [apiKey]);
      return { ok: false, error, retryable: true };
    }
    if (res.status >= 200 && res.status < 300) return { ok: true, value: res.text };
    const retryable = isRetryableStatus(res.status);
    const detail = errorBodyMessage(res.text) || res.statusText;
    const error = providerError(
      PROVIDER,
      `HTTP ${res.status}: ${detail}`,
      { status: res.status, retryable },
      [apiKey],
    );
    return { ok: false, error, retryable, headers: res.headers };
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
