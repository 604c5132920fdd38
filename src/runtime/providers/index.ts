/**
 * Model specs (`anthropic:MODEL`, `openai:MODEL`, `claude-code[:MODEL]`, `scripted:FILE`, `replay:TRACE`, `relay:DIR`) to
 * {@link Model}s. Everything a provider needs from the environment (keys, endpoints, the `claude`
 * executable) comes from the `env` passed in, through `core/env.ts`, and is checked at creation so the CLI
 * fails before doing any work.
 */
import { type Env, processEnv, readEnv } from '../../../core/env.ts';
import { RlmError } from '../../../core/errors.ts';
import type { BackoffOptions } from '../../../core/http-retry.ts';
import type { Model } from '../model.ts';
import { AnthropicModel } from './anthropic.ts';
import { CLAUDE_NOT_FOUND, ClaudeCodeModel, findClaudeExecutable } from './claude-code.ts';
import { OPENAI_DEFAULT_BASE_URL, OpenAIModel } from './openai.ts';
import { RelayModel } from './relay.ts';
import { ReplayModel } from './replay.ts';
import { ScriptedModel } from './scripted.ts';
import { parseModelSpec } from './specs.ts';

export { AnthropicModel } from './anthropic.ts';
export { ClaudeCodeModel } from './claude-code.ts';
export { OpenAIModel } from './openai.ts';
export { ScriptedModel, type ScriptRule, type ScriptRules } from './scripted.ts';
export { type ParsedModelSpec, parseModelSpec } from './specs.ts';

export interface CreateModelOptions {
  /** The environment API keys, base URLs and CLAUDE_CODE_PATH come from (default `process.env`). */
  env?: Env | undefined;
  /** Per-request (per-attempt) limit; default 10 minutes. */
  timeoutMs?: number;
  /** Retries of transient HTTP failures (anthropic, openai); default 4. */
  maxRetries?: number;
  /** Concurrent `claude` processes per model (claude-code); default 2. */
  concurrency?: number;
  /** Injected `fetch` (openai and anthropic); default the global one. */
  fetch?: typeof fetch;
  /** Retry backoff for the HTTP providers (tests make it tiny). */
  backoff?: BackoffOptions;
}

/** Builds the {@link Model} for `spec`. Throws BAD_INPUT for a bad spec, missing credentials or no `claude` CLI. */
export function createModel(spec: string, opts: CreateModelOptions = {}): Model {
  const source = opts.env ?? processEnv();
  const env = readEnv(source);
  const parsed = parseModelSpec(spec);
  const common = {
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
  };
  switch (parsed.provider) {
    case 'anthropic': {
      const model = parsed.model as string;
      const { apiKey } = env.anthropic;
      if (!apiKey)
        throw new RlmError('BAD_INPUT', `ANTHROPIC_API_KEY is not set (needed by anthropic:${model})`);
      const baseUrl = env.anthropic.baseUrl
        ? checkUrl(env.anthropic.baseUrl, 'ANTHROPIC_BASE_URL').href
        : undefined;
      return new AnthropicModel({
        model,
        apiKey,
        ...(baseUrl ? { baseUrl: baseUrl.replace(/\/+$/, '') } : {}),
        ...common,
      });
    }
    case 'openai': {
      const model = parsed.model as string;
      const base = checkUrl(env.openai.baseUrl ?? OPENAI_DEFAULT_BASE_URL, 'OPENAI_BASE_URL');
      const { apiKey } = env.openai;
      if (!apiKey && base.hostname === 'api.openai.com') {
        throw new RlmError('BAD_INPUT', `OPENAI_API_KEY is not set (needed by openai:${model})`);
      }
      return new OpenAIModel({ model, baseUrl: base.href, ...(apiKey ? { apiKey } : {}), ...common });
    }
    case 'claude-code':
      // The process starts only at the first call; a missing CLI would otherwise surface mid-run.
      if (!findClaudeExecutable(env)) {
        throw new RlmError(
          'BAD_INPUT',
          env.claudeCodePath
            ? `CLAUDE_CODE_PATH is not an executable file: ${env.claudeCodePath} — install Claude Code or fix CLAUDE_CODE_PATH`
            : CLAUDE_NOT_FOUND,
        );
      }
      return new ClaudeCodeModel({
        ...(parsed.model ? { model: parsed.model } : {}),
        executable: env.claudeCodePath ?? 'claude',
        // The CLI runs with the caller's whole environment (its own login, its PATH).
        env: source,
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      });
    case 'scripted':
      return ScriptedModel.fromFile(parsed.model as string);
    case 'replay':
      return ReplayModel.fromFile(parsed.model as string);
    case 'relay':
      return new RelayModel(parsed.model as string);
  }
}

function checkUrl(value: string, name: string): URL {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // Reported below with the variable's name.
  }
  throw new RlmError('BAD_INPUT', `${name} is not an http(s) URL: ${value}`);
}
