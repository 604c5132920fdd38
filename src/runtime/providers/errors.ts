/**
 * Turning provider failures into short, safe PROVIDER messages: one line, bounded length, and never
 * the API key (some servers echo credentials back in their error bodies).
 */
import { RlmError } from '../../../core/errors.ts';
import { redactSecrets } from '../../../core/http-retry.ts';

const MAX_DETAIL = 300;

/** Collapses whitespace, removes every occurrence of each secret, and truncates. */
function sanitize(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  const out = redactSecrets(text.replace(/\s+/g, ' ').trim(), secrets);
  return out.length > MAX_DETAIL ? `${out.slice(0, MAX_DETAIL)}…` : out;
}

/**
 * The human part of an error body: `{error:{message}}` (OpenAI and Anthropic), `{error:"..."}`,
 * `{message}`, or the raw text.
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
    }
  } catch {
    // Not JSON: the raw text is the best we have.
  }
  return body;
}

/** A PROVIDER error carrying the HTTP status (when there is one) in `details`. */
export function providerError(
  provider: string,
  message: string,
  details: { status?: number; retryable?: boolean } = {},
  secrets: ReadonlyArray<string | undefined> = [],
): RlmError {
  return new RlmError('PROVIDER', `${provider}: ${sanitize(message, secrets)}`, { provider, ...details });
}
