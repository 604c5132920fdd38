/**
 * Store URLs: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?schema=NAME&…]` (or `postgresql://`). The
 * `schema` parameter picks one of several stores in a database (default `rlm`); the other parameters go
 * to the client as they are (`sslmode`, …). A URL is shown only with its password replaced by `***`.
 */
import { RlmError } from '../../core/errors.ts';

/** The schema a URL without `?schema=` uses. */
const DEFAULT_SCHEMA = 'rlm';

/** Whether a store name is a PostgreSQL URL rather than a folder. */
export function isPostgresUrl(spec: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(spec);
}

/** `url` with any password replaced by `***` (unparsable text is cut to its scheme). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    for (const key of [...u.searchParams.keys()]) {
      if (/pass/i.test(key)) u.searchParams.set(key, '***');
    }
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** Replaces every password of `url` found in `text` (an error message from a driver, say). */
export function redactIn(text: string, url: string): string {
  let out = text;
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password !== '') out = out.split(password).join('***');
  } catch {
    // not a URL: nothing of it to hide
  }
  return out.split(url).join(redactUrl(url));
}

export interface PostgresTarget {
  /** The URL for the client, without rlm's own `schema` parameter. */
  connectionString: string;
  /** Schema holding the store's tables. */
  schema: string;
  /** The URL as it may be shown (password hidden). */
  label: string;
}

/** Checks a store URL; BAD_INPUT (a usage error) names what is wrong, never the password. */
export function parsePostgresUrl(url: string): PostgresTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RlmError(
      'BAD_INPUT',
      `not a valid store URL: ${redactUrl(url)} (postgres://USER@HOST:PORT/DATABASE)`,
    );
  }
  const label = redactUrl(url);
  if (u.hostname === '' && !u.searchParams.has('host'))
    throw new RlmError('BAD_INPUT', `store URL ${label} names no host (postgres://USER@HOST:PORT/DATABASE)`);
  if (u.pathname.replace(/^\//, '') === '')
    throw new RlmError(
      'BAD_INPUT',
      `store URL ${label} names no database (postgres://USER@HOST:PORT/DATABASE)`,
    );
  const schema = u.searchParams.get('schema') ?? DEFAULT_SCHEMA;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new RlmError(
      'BAD_INPUT',
      `schema "${schema}" in ${label} must be 1-63 lower-case letters, digits or '_', not starting with a digit`,
    );
  }
  u.searchParams.delete('schema');
  return { connectionString: u.toString(), schema, label };
}
