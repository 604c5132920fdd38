/**
 * The one seam between rlm and a language model: `complete` takes a conversation and returns text plus
 * usage. Providers (anthropic, openai, claude-code, scripted, replay) implement it; tests pass doubles.
 */

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface ModelRequest {
  system: string;
  messages: ChatMessage[];
  /** Recursion depth of the call (0 = root). Scripted models match on it. */
  depth: number;
  /** Trace span of the call (`root` or a sub-call id); replay models key on it. Providers ignore it. */
  span?: string;
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Tokens written to / read from a provider's prompt cache, when it reports them. */
  cacheWriteTokens?: number;
  cacheReadTokens?: number;
  /** Cost the provider reported itself (claude-code does); otherwise computed from the price table. */
  costUsd?: number;
}

export interface ModelResponse {
  text: string;
  usage: Usage;
  /** The concrete model name that answered. */
  model: string;
  stopReason?: string;
}

export interface Model {
  /** Provider-qualified name, e.g. `anthropic:claude-sonnet-4-6`. */
  readonly spec: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}
