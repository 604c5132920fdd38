/**
 * Embedder specs, as given on the command line or in config:
 *
 * - `hash` / `hash:DIM` — local feature hashing, no download (default 384 dimensions).
 * - `openai:MODEL[@DIM]` — OpenAI or any compatible server; `OPENAI_API_KEY` (required for
 *   api.openai.com), `OPENAI_BASE_URL` (default `https://api.openai.com/v1`).
 * - `ollama:MODEL[@DIM]` — a local Ollama; `OLLAMA_BASE_URL` (default `http://127.0.0.1:11434/v1`), no key.
 * - `http://HOST[:PORT]/PATH#MODEL[@DIM]` (or `https://…`) — any other compatible endpoint (llama.cpp,
 *   vLLM...); the optional key comes from `RLM_EMBEDDINGS_API_KEY`.
 *
 * The variables are read through `core/env.ts` (README's environment table).
 *
 * `@DIM` asks the server for shortened vectors (sent as `dimensions`). Model names may contain `:`
 * (Ollama tags), which is why the length uses `@`.
 */
import { type Env, readEnv } from '../../../core/env.ts';
import { RlmError } from '../../../core/errors.ts';
import { HashingEmbedder } from './hashing.ts';
import { OpenAIEmbedder } from './openai.ts';
import { EMBEDDER_SPECS } from './specs.ts';
import type { Embedder } from './types.ts';

export { HashingEmbedder } from './hashing.ts';
export type { OpenAIEmbedderOptions } from './openai.ts';
export { OpenAIEmbedder } from './openai.ts';
export type { Embedder } from './types.ts';

const OPENAI_DEFAULT_BASE = 'https://api.openai.com/v1';
const OLLAMA_DEFAULT_BASE = 'http://127.0.0.1:11434/v1';

function parseDims(text: string, spec: string): number {
  if (!/^\d+$/.test(text))
    throw new RlmError('BAD_INPUT', `embedder spec "${spec}": dimensions must be a positive integer`);
  const n = Number(text);
  if (n < 1)
    throw new RlmError('BAD_INPUT', `embedder spec "${spec}": dimensions must be a positive integer`);
  return n;
}

/** Splits `MODEL@DIM` into its parts. */
function modelAndDims(rest: string, spec: string): { model: string; dimensions?: number } {
  const at = rest.lastIndexOf('@');
  const model = (at === -1 ? rest : rest.slice(0, at)).trim();
  if (!model) throw new RlmError('BAD_INPUT', `embedder spec "${spec}" names no model`);
  return at === -1 ? { model } : { model, dimensions: parseDims(rest.slice(at + 1), spec) };
}

/** Whether `baseUrl` is OpenAI's own API (an unparsable URL is left for the request to report). */
function isOpenAIHost(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname.toLowerCase() === 'api.openai.com';
  } catch {
    return false;
  }
}

/**
 * Builds an {@link Embedder} from a spec string (see the module comment). Keys and endpoints come from
 * `env` (default `process.env`), so callers and tests decide where they come from.
 * @throws RlmError BAD_INPUT for an unknown scheme, a malformed spec, or `openai:` against api.openai.com
 *   without `OPENAI_API_KEY`.
 */
export function createEmbedder(spec: string, env?: Env): Embedder {
  const values = readEnv(env);
  // `http:URL#MODEL` is the canonical name a store records for a URL embedder; it must read back.
  const trimmed = spec.trim().replace(/^http:(?=https?:\/\/)/i, '');
  if (trimmed === 'hash') return new HashingEmbedder();
  if (/^https?:\/\//i.test(trimmed)) {
    const hash = trimmed.indexOf('#');
    if (hash === -1) {
      throw new RlmError(
        'BAD_INPUT',
        `embedder spec "${spec}" needs a model after "#", e.g. http://127.0.0.1:8080/v1#bge-small`,
      );
    }
    const baseUrl = trimmed.slice(0, hash);
    const { model, dimensions } = modelAndDims(trimmed.slice(hash + 1), spec);
    const apiKey = values.embeddingsApiKey;
    return new OpenAIEmbedder({
      baseUrl,
      model,
      name: `http:${baseUrl}#${model}`,
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(dimensions === undefined ? {} : { dimensions }),
    });
  }
  const colon = trimmed.indexOf(':');
  const scheme = colon === -1 ? trimmed : trimmed.slice(0, colon);
  const rest = colon === -1 ? '' : trimmed.slice(colon + 1);
  switch (scheme) {
    case 'hash':
      return new HashingEmbedder({ dimensions: parseDims(rest, spec) });
    case 'openai': {
      const { model, dimensions } = modelAndDims(rest, spec);
      const { apiKey } = values.openai;
      const baseUrl = values.openai.baseUrl ?? OPENAI_DEFAULT_BASE;
      // OpenAI itself always wants a key: fail now rather than after a round of retried 401s.
      // Local and custom endpoints (OPENAI_BASE_URL) may not.
      if (apiKey === undefined && isOpenAIHost(baseUrl))
        throw new RlmError('BAD_INPUT', 'OPENAI_API_KEY is not set (needed by the openai: embedder)');
      return new OpenAIEmbedder({
        baseUrl,
        model,
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(dimensions === undefined ? {} : { dimensions }),
      });
    }
    case 'ollama': {
      const { model, dimensions } = modelAndDims(rest, spec);
      return new OpenAIEmbedder({
        baseUrl: values.ollamaBaseUrl ?? OLLAMA_DEFAULT_BASE,
        model,
        name: `ollama:${model}`,
        ...(dimensions === undefined ? {} : { dimensions }),
      });
    }
    default:
      throw new RlmError('BAD_INPUT', `unknown embedder "${spec}": use ${EMBEDDER_SPECS}`);
  }
}

/**
 * What a store records about its embedder: the canonical spec (`embedder.name`) and the vector length.
 * An endpoint whose model is not in the known table reports 0 dimensions until it has answered once, so
 * this embeds one probe text to learn it; with `probe`, it always does, so a dead or misconfigured
 * endpoint shows now (as PROVIDER) whatever form its spec takes.
 */
export async function embedderConfig(
  embedder: Embedder,
  opts: { probe?: boolean } = {},
): Promise<{ spec: string; dimensions: number }> {
  let dimensions = embedder.dimensions;
  if (dimensions === 0 || opts.probe) {
    const probed = (await embedder.embed(['dimension probe']))[0]?.length ?? 0;
    if (dimensions !== 0 && probed !== 0 && probed !== dimensions) {
      throw new RlmError(
        'PROVIDER',
        `embedder ${embedder.name} returned vectors of ${probed} dimensions, not the ${dimensions} expected`,
      );
    }
    dimensions = probed;
  }
  if (dimensions === 0) throw new RlmError('PROVIDER', `embedder ${embedder.name} returned an empty vector`);
  return { spec: embedder.name, dimensions };
}
