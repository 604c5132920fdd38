/**
 * `anthropic:MODEL` — the Messages API through @anthropic-ai/sdk. The SDK already retries 408, 409,
 * 429 and 5xx (529 "overloaded" included) with backoff and honours `retry-after`; this wrapper tunes
 * it, caps server-requested waits, marks the prompt-cache breakpoints and maps errors to RlmError.
 * The SDK is loaded at the first request, so importing `rlm` costs nothing for those who never use it.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type {
  Usage as AnthropicUsage,
  MessageParam,
  TextBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { RlmError } from '../../../core/errors.ts';
import {
  abortedError,
  type BackoffOptions,
  backoffDelay,
  DEFAULT_BACKOFF,
  isRetryableStatus,
  parseRetryAfter,
} from '../../../core/http-retry.ts';
import type { Model, ModelRequest, ModelResponse, Usage } from '../model.ts';
import { errorBodyMessage, providerError } from './errors.ts';

const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

export interface AnthropicModelOptions {
  model: string;
  apiKey: string;
  /** API root without `/v1` (default {@link ANTHROPIC_DEFAULT_BASE_URL}). */
  baseUrl?: string;
  /** Per-attempt limit (default 10 minutes). */
  timeoutMs?: number;
  /** Extra attempts the SDK makes on retryable failures (default 4). */
  maxRetries?: number;
  /**
   * Backoff when the server sends no `retry-after`. When unset the SDK's own schedule applies
   * (0.5 s doubling to 8 s); `maxRetryAfterMs` (default 60 s) always caps server-requested waits.
   */
  backoff?: BackoffOptions;
  /** `max_tokens` when a request sets no `maxOutputTokens` (default 8192; 4096 for Claude 3 models). */
  maxOutputTokens?: number;
  fetch?: typeof fetch;
  spec?: string;
}

const PROVIDER = 'anthropic';

type Sdk = typeof import('@anthropic-ai/sdk');
const EPHEMERAL = { type: 'ephemeral' } as const;

/** A {@link Model} over the Anthropic Messages API. */
export class AnthropicModel implements Model {
  readonly spec: string;
  readonly #opts: AnthropicModelOptions;
  #client: Promise<{ sdk: Sdk; client: Anthropic }> | undefined;

  constructor(opts: AnthropicModelOptions) {
    this.#opts = opts;
    this.spec = opts.spec ?? `anthropic:${opts.model}`;
  }

  /** The SDK and its client, made on first use. */
  #connect(): Promise<{ sdk: Sdk; client: Anthropic }> {
    const opts = this.#opts;
    this.#client ??= import('@anthropic-ai/sdk').then((sdk) => ({
      sdk,
      client: new sdk.default({
        apiKey: opts.apiKey,
        // Passing every env-derived value explicitly keeps the SDK from reading process.env itself.
        baseURL: opts.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL,
        webhookKey: null,
        timeout: opts.timeoutMs ?? 600_000,
        maxRetries: opts.maxRetries ?? 4,
        fetch: tunedFetch(opts.fetch ?? globalThis.fetch, opts.backoff),
        logLevel: 'off',
        openTelemetry: false,
      }),
    }));
    return this.#client;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const { signal } = request;
    if (signal?.aborted) throw abortedError(PROVIDER);
    const system: TextBlockParam[] = request.system
      ? [{ type: 'text', text: request.system, cache_control: EPHEMERAL }]
      : [];
    const { sdk, client } = await this.#connect();
    try {
      const message = await client.messages.create(
        {
          model: this.#opts.model,
          max_tokens:
            request.maxOutputTokens ?? this.#opts.maxOutputTokens ?? defaultMaxTokens(this.#opts.model),
          ...(system.length > 0 ? { system } : {}),
          messages: toMessages(request.messages),
        },
        signal ? { signal } : {},
      );
      const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      const response: ModelResponse = { text, usage: mapUsage(message.usage), model: message.model };
      if (message.stop_reason) response.stopReason = message.stop_reason;
      return response;
    } catch (err) {
      throw this.#mapError(sdk, err, signal);
    }
  }

  #mapError(sdk: Sdk, err: unknown, signal: AbortSignal | undefined): RlmError {
    const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = sdk;
    if (err instanceof RlmError) return err;
    if (signal?.aborted || err instanceof APIUserAbortError) return abortedError(PROVIDER);
    const secrets = [this.#opts.apiKey];
    if (err instanceof APIConnectionTimeoutError) {
      return providerError(
        PROVIDER,
        `request timed out after ${this.#opts.timeoutMs ?? 600_000} ms`,
        {},
        secrets,
      );
    }
    if (err instanceof APIConnectionError) {
      const cause = (err as Error & { cause?: unknown }).cause;
      const why = cause instanceof Error ? cause.message : err.message;
      return providerError(PROVIDER, `connection error: ${why}`, {}, secrets);
    }
    if (err instanceof APIError && typeof err.status === 'number') {
      const body: unknown = err.error;
      const detail = body === undefined ? err.message : errorBodyMessage(JSON.stringify(body));
      return providerError(
        PROVIDER,
        `HTTP ${err.status}: ${detail}`,
        { status: err.status, retryable: isRetryableStatus(err.status) },
        secrets,
      );
    }
    const msg = err instanceof Error ? err.message : String(err);
    return providerError(PROVIDER, msg, {}, secrets);
  }
}

/**
 * History as content blocks, with a cache breakpoint on the newest message: the next turn extends
 * this exact prefix, so it is read from the cache instead of billed again. (The system prompt is the
 * other breakpoint; the API allows four.)
 */
function toMessages(messages: ModelRequest['messages']): MessageParam[] {
  const last = messages.length - 1;
  return messages.map((m, i) => {
    // The API rejects cache_control on an empty text block, and an empty block at all.
    if (i !== last || m.content === '') return { role: m.role, content: m.content };
    return { role: m.role, content: [{ type: 'text', text: m.content, cache_control: EPHEMERAL }] };
  });
}

/** Claude 3 (except 3.5/3.7) rejects `max_tokens` above 4096; later models accept at least 8192. */
export function defaultMaxTokens(model: string): number {
  return /^claude-3-(opus|sonnet|haiku)/.test(model) ? 4096 : 8192;
}

function mapUsage(u: AnthropicUsage): Usage {
  const usage: Usage = { inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0 };
  if (typeof u.cache_creation_input_tokens === 'number')
    usage.cacheWriteTokens = u.cache_creation_input_tokens;
  if (typeof u.cache_read_input_tokens === 'number') usage.cacheReadTokens = u.cache_read_input_tokens;
  return usage;
}

/**
 * The SDK exposes no knob for its retry timing, but it obeys `retry-after-ms` on retryable responses.
 * Rewriting that header on the way in caps what a server may ask for and, when `backoff` is given,
 * substitutes our own schedule (the SDK numbers attempts in `x-stainless-retry-count`).
 */
function tunedFetch(inner: typeof fetch, backoff: BackoffOptions | undefined): typeof fetch {
  const cap = backoff?.maxRetryAfterMs ?? DEFAULT_BACKOFF.maxRetryAfterMs;
  const wrapped = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await inner(input, init);
    if (res.ok || !isRetryableStatus(res.status)) return res;
    const asked = parseRetryAfter(res.headers, Number.POSITIVE_INFINITY);
    let waitMs: number | undefined;
    if (asked !== undefined && asked > cap) waitMs = cap;
    else if (asked === undefined && backoff) {
      const attempt = Number(new Headers(init?.headers).get('x-stainless-retry-count') ?? 0) || 0;
      waitMs = backoffDelay(attempt, backoff);
    }
    if (waitMs === undefined) return res;
    const headers = new Headers(res.headers);
    headers.delete('retry-after');
    // The SDK ignores a zero wait and falls back to its own backoff, hence the 1 ms floor.
    headers.set('retry-after-ms', String(Math.max(1, Math.round(waitMs))));
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  };
  return wrapped as typeof fetch;
}
