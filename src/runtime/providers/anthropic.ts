/**
 * `anthropic:MODEL` — the Messages API through @anthropic-ai/sdk. The SDK makes one attempt per call
 * (`maxRetries: 0`); retries follow rlm's one policy (`core/http-retry.ts`), judged from the status and
 * headers the SDK's errors carry, so every HTTP client in rlm retries and waits the same way. This wrapper
 * also marks the prompt-cache breakpoints and maps errors to RlmError. The SDK is loaded at the first
 * request, so importing `rlm` costs nothing for those who never use it.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type {
  Usage as AnthropicUsage,
  Message,
  MessageParam,
  TextBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { errorBodyMessage } from '../../../core/http-post.ts';
import {
  type AttemptOutcome,
  abortedError,
  type BackoffOptions,
  isRetryableStatus,
  withRetries,
} from '../../../core/http-retry.ts';
import type { Model, ModelRequest, ModelResponse, Usage } from '../model.ts';
import { providerError } from './errors.ts';

const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

export interface AnthropicModelOptions {
  model: string;
  apiKey: string;
  /** API root without `/v1` (default {@link ANTHROPIC_DEFAULT_BASE_URL}). */
  baseUrl?: string;
  /** Per-attempt limit (default 10 minutes). */
  timeoutMs?: number;
  /** Extra attempts after the first on 408/409/429/5xx, network errors and timeouts (default 4). */
  maxRetries?: number;
  /** Waits between attempts (see `core/http-retry.ts`); `maxRetryAfterMs` caps server-requested waits. */
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
        // One attempt per call: rlm's policy decides about the next one (see complete()).
        maxRetries: 0,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
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
    const params = {
      model: this.#opts.model,
      max_tokens: request.maxOutputTokens ?? this.#opts.maxOutputTokens ?? defaultMaxTokens(this.#opts.model),
      ...(system.length > 0 ? { system } : {}),
      messages: toMessages(request.messages),
    };
    const { sdk, client } = await this.#connect();
    const attempt = async (): Promise<AttemptOutcome<Message>> => {
      try {
        return { ok: true, value: await client.messages.create(params, signal ? { signal } : {}) };
      } catch (err) {
        return this.#failure(sdk, err, signal);
      }
    };
    const message = await withRetries(attempt, {
      maxRetries: this.#opts.maxRetries ?? 4,
      backoff: this.#opts.backoff ?? {},
      signal,
      name: PROVIDER,
    });
    const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    const response: ModelResponse = { text, usage: mapUsage(message.usage), model: message.model };
    if (message.stop_reason) response.stopReason = message.stop_reason;
    return response;
  }

  /** What a failed attempt means: retryable or not, with the headers that may say when to retry. */
  #failure(sdk: Sdk, err: unknown, signal: AbortSignal | undefined): AttemptOutcome<never> {
    const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = sdk;
    if (signal?.aborted || err instanceof APIUserAbortError) throw abortedError(PROVIDER);
    const secrets = [this.#opts.apiKey];
    if (err instanceof APIConnectionTimeoutError) {
      const ms = this.#opts.timeoutMs ?? 600_000;
      const error = providerError(PROVIDER, `request timed out after ${ms} ms`, { retryable: true }, secrets);
      return { ok: false, error, retryable: true };
    }
    if (err instanceof APIConnectionError) {
      const cause = (err as Error & { cause?: unknown }).cause;
      const why = cause instanceof Error ? cause.message : err.message;
      const error = providerError(PROVIDER, `connection error: ${why}`, { retryable: true }, secrets);
      return { ok: false, error, retryable: true };
    }
    if (err instanceof APIError && typeof err.status === 'number') {
      const body: unknown = err.error;
      const detail = body === undefined ? err.message : errorBodyMessage(JSON.stringify(body));
      const retryable = isRetryableStatus(err.status);
      const status = err.status;
      const error = providerError(PROVIDER, `HTTP ${status}: ${detail}`, { status, retryable }, secrets);
      return { ok: false, error, retryable, ...(err.headers ? { headers: err.headers } : {}) };
    }
    const msg = err instanceof Error ? err.message : String(err);
    return { ok: false, error: providerError(PROVIDER, msg, {}, secrets), retryable: false };
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
