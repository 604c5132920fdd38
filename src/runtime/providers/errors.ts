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

/** A PROVIDER error carrying the HTTP status (when there is one) in `details`. */
export function providerError(
  provider: string,
  message: string,
  details: { status?: number; retryable?: boolean } = {},
  secrets: ReadonlyArray<string | undefined> = [],
): RlmError {
  return new RlmError('PROVIDER', `${provider}: ${sanitize(message, secrets)}`, { provider, ...details });
}
