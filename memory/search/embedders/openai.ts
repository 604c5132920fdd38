/**
 * Client for OpenAI-compatible `POST {baseUrl}/embeddings` endpoints: OpenAI itself, Ollama
 * (`http://127.0.0.1:11434/v1`), llama.cpp's server, vLLM. Uses global `fetch`, batches inputs,
 * retries transient failures (the policy of `core/http-retry.ts`, shared with the model providers) and
 * validates what comes back before anything reaches the index.
 */

import { RlmError } from '../../../core/errors.ts';
import { errorBodyMessage, postJson } from '../../../core/http-post.ts';
import {
  type AttemptOutcome,
  type BackoffOptions,
  isRetryableStatus,
  redactSecrets,
  withRetries,
} from '../../../core/http-retry.ts';
import { plural } from '../../../core/plural.ts';
import type { Embedder } from './types.ts';

/** Options of {@link OpenAIEmbedder}. */
export interface OpenAIEmbedderOptions {
  /** Base URL up to and including the API version, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Sent as a bearer token when present. Never included in errors. */
  apiKey?: string;
  model: string;
  /**
   * Requested vector length. When set it is sent as `dimensions` (models that support shortening honour
   * it) and every response is checked against it.
   */
  dimensions?: number;
  /** Texts per request, default 64. */
  batchSize?: number;
  /** Per-request timeout, default 30000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt on 408, 409, 429, 5xx, timeouts and network errors; default 3. */
  maxRetries?: number;
  /** Backoff between retries, as for the model providers (see `core/http-retry.ts`). */
  backoff?: BackoffOptions;
  /** Name reported by the embedder, before the `@DIM` suffix added when `dimensions` is set; default `openai:MODEL`. */
  name?: string;
  /** Seam for tests and custom transports; default global `fetch`. */
  fetch?: typeof fetch;
}

/** Vector lengths of well-known models, so `dimensions` is known before the first call. */
const KNOWN_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
  'bge-m3': 1024,
  'snowflake-arctic-embed': 1024,
};

function knownDimensions(model: string): number {
  const bare = model.replace(/:latest$/, '');
  return KNOWN_DIMENSIONS[bare] ?? 0;
}

function positiveInt(value: number, what: string, min = 0): number {
  if (!Number.isInteger(value) || value < min) {
    throw new RlmError('BAD_INPUT', `${what} must be an integer >= ${min}, got ${value}`);
  }
  return value;
}

/** {@link Embedder} over an OpenAI-compatible `/embeddings` endpoint. */
export class OpenAIEmbedder implements Embedder {
  readonly name: string;
  private dims: number;
  /** True once `dims` comes from the caller or a response rather than the built-in table. */
  private confirmed: boolean;
  private readonly url: string;
  private readonly apiKey: string | undefined;
  private readonly model: string;
  private readonly requestedDimensions: number | undefined;
  private readonly batchSize: number;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly backoff: BackoffOptions;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: OpenAIEmbedderOptions) {
    if (!opts.model) throw new RlmError('BAD_INPUT', 'embedding model name is empty');
    let base: URL;
    try {
      base = new URL(opts.baseUrl);
    } catch {
      throw new RlmError('BAD_INPUT', `embedding base URL is not a valid URL: ${opts.baseUrl}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new RlmError('BAD_INPUT', `embedding base URL must be http(s): ${opts.baseUrl}`);
    }
    this.url = `${opts.baseUrl.replace(/\/+$/, '')}/embeddings`;
    this.apiKey = opts.apiKey || undefined;
    this.model = opts.model;
    this.requestedDimensions =
      opts.dimensions === undefined ? undefined : positiveInt(opts.dimensions, 'dimensions', 1);
    this.dims = this.requestedDimensions ?? knownDimensions(opts.model);
    this.confirmed = this.requestedDimensions !== undefined;
    this.batchSize = positiveInt(opts.batchSize ?? 64, 'batchSize', 1);
    this.timeoutMs = positiveInt(opts.timeoutMs ?? 30_000, 'timeoutMs', 1);
    this.maxRetries = positiveInt(opts.maxRetries ?? 3, 'maxRetries');
    this.backoff = opts.backoff ?? {};
    this.fetchImpl = opts.fetch ?? fetch;
    // Shortened vectors live in a different space than full ones, so the length is part of the identity.
    const suffix = this.requestedDimensions === undefined ? '' : `@${this.requestedDimensions}`;
    this.name = `${opts.name ?? `openai:${opts.model}`}${suffix}`;
  }

  /** Vector length; 0 until known for a model missing from the built-in table and not yet called. */
  get dimensions(): number {
    return this.dims;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const out: number[][] = [];
    // Sequential batches: keeps output order trivial and stays polite with rate limits.
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize);
      const vectors = await this.embedBatch(batch, signal);
      for (const v of vectors) out.push(v);
    }
    return out;
  }

  private async embedBatch(batch: string[], signal: AbortSignal | undefined): Promise<number[][]> {
    return withRetries((n) => this.attempt(batch, n, signal), {
      maxRetries: this.maxRetries,
      backoff: this.backoff,
      signal,
      name: 'embedding',
    });
  }

  /** The PROVIDER error for a failed attempt; `final` when no retry will follow. */
  private failure(message: string, attempt: number, retryable: boolean, status?: number): RlmError {
    const tries = retryable && attempt >= this.maxRetries ? ` after ${plural(attempt + 1, 'attempt')}` : '';
    return new RlmError(
      'PROVIDER',
      `embedding request to ${this.url} failed${tries}: ${redactSecrets(message, [this.apiKey])}`,
      { url: this.url, model: this.model, ...(status === undefined ? {} : { status }) },
    );
  }

  private async attempt(
    batch: string[],
    n: number,
    signal: AbortSignal | undefined,
  ): Promise<AttemptOutcome<number[][]>> {
    const body: Record<string, unknown> = { model: this.model, input: batch };
    if (this.requestedDimensions !== undefined) body.dimensions = this.requestedDimensions;
    const res = await postJson(this.url, body, {
      apiKey: this.apiKey,
      timeoutMs: this.timeoutMs,
      signal,
      fetch: this.fetchImpl,
      name: 'embedding',
    });
    if (res.kind === 'timeout') {
      return {
        ok: false,
        retryable: true,
        error: this.failure(`timed out after ${this.timeoutMs}ms`, n, true),
      };
    }
    if (res.kind === 'network') {
      return { ok: false, retryable: true, error: this.failure(`network error: ${res.detail}`, n, true) };
    }
    if (res.status < 200 || res.status >= 300) {
      const retryable = isRetryableStatus(res.status);
      const detail = errorBodyMessage(res.text).trim().slice(0, 300) || '(empty body)';
      const message = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}: ${detail}`;
      return {
        ok: false,
        retryable,
        headers: res.headers,
        error: this.failure(message, n, retryable, res.status),
      };
    }
    return { ok: true, value: this.parse(res.text, batch.length) };
  }

  /** Validates the response body; a malformed body is a provider bug, not worth retrying. */
  private parse(text: string, expected: number): number[][] {
    const bad = (why: string) =>
      new RlmError('PROVIDER', `embedding response from ${this.url} is malformed: ${why}`, {
        url: this.url,
        model: this.model,
      });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw bad('body is not JSON');
    }
    const data = (parsed as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) throw bad('missing `data` array');
    if (data.length !== expected) throw bad(`expected ${plural(expected, 'embedding')}, got ${data.length}`);
    const slots: (number[] | undefined)[] = new Array(expected);
    for (let pos = 0; pos < data.length; pos++) {
      const item = data[pos] as { index?: unknown; embedding?: unknown } | null;
      // Some servers omit `index`; position is then the only order there is.
      const index = item?.index === undefined ? pos : item.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected) {
        throw bad(`item ${pos} has an invalid index`);
      }
      if (slots[index] !== undefined) throw bad(`index ${index} appears twice`);
      const emb = item?.embedding;
      if (!Array.isArray(emb) || emb.length === 0) throw bad(`item ${index} has no embedding array`);
      for (const x of emb) {
        if (typeof x !== 'number' || !Number.isFinite(x))
          throw bad(`item ${index} has a non-numeric component`);
      }
      slots[index] = emb as number[];
    }
    const vectors = slots as number[][];
    // The built-in table is only a hint; the first response decides unless the caller fixed the length.
    const len = this.confirmed ? this.dims : (vectors[0]?.length ?? 0);
    for (let i = 0; i < vectors.length; i++) {
      if (vectors[i]?.length !== len) {
        throw bad(`embedding ${i} has ${vectors[i]?.length} dimensions, expected ${len}`);
      }
    }
    this.dims = len;
    this.confirmed = true;
    return vectors;
  }
}
