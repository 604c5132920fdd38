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

/**
 * Throws BAD_INPUT for a store named by a URL of another kind (`postgress://…` mistyped, `mysql://…`),
 * its password hidden: taken for a folder, it became one named after the URL, password and all.
 */
export function checkStoreName(spec: string): void {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec) && !isPostgresUrl(spec))
    throw new RlmError(
      'BAD_INPUT',
      `store ${redactUrl(spec)}: rlm stores in a folder or a PostgreSQL database (postgres://…); not in a URL of this kind`,
    );
}

/**
 * PostgreSQL's reserved words (`pg_get_keywords()`, categories R and T, of PostgreSQL 15 to 17), which
 * cannot name a schema unquoted: the store's SQL names its schema as it is.
 */
const RESERVED = new Set(
  (
    'all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate ' +
    'collation column concurrently constraint create cross current_catalog current_date current_role ' +
    'current_schema current_time current_timestamp current_user default deferrable desc distinct do else end ' +
    'except false fetch for foreign freeze from full grant group having ilike in initially inner intersect ' +
    'into is isnull join lateral leading left like limit localtime localtimestamp natural not notnull null ' +
    'offset on only or order outer overlaps placing primary references returning right select session_user ' +
    'similar some symmetric system_user table tablesample then to trailing true union unique user using ' +
    'variadic verbose ' +
    'when where window with'
  ).split(' '),
);

/**
 * Whether `u` is what a URL with an unencoded `/` in its password parses as: the rest of the login lands
 * in the path (`postgres://user:9999/secret@host/db` is host `user`, path `/secret@host/db`), so neither
 * the host nor the password is what the user meant. (An unencoded `?` or `#` there makes no valid URL.)
 * A parameter may hold an `@` (`application_name=rlm@laptop`).
 */
function loginInPath(u: URL): boolean {
  return u.pathname.includes('@');
}

/** Everything between `//` and the last `@`, hidden: for text that is no URL or a misparsed one. */
function hideLogin(url: string): string {
  return url.replace(/\/\/.*@/, '//***@');
}

/** `url` with any password replaced by `***` (unparsable text: everything before its last `@`). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (loginInPath(u)) return hideLogin(url);
    if (u.password !== '') u.password = '***';
    for (const key of [...u.searchParams.keys()]) {
      if (/pass/i.test(key)) u.searchParams.set(key, '***');
    }
    return u.toString();
  } catch {
    return hideLogin(url);
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
  if (loginInPath(u))
    throw new RlmError(
      'BAD_INPUT',
      `store URL ${label} has an '@' after its host: percent-encode '/', '?', '#' and '@' in the user name and password (%2F, %3F, %23, %40)`,
    );
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
  if (RESERVED.has(schema) || schema.startsWith('pg_') || schema === 'information_schema')
    throw new RlmError(
      'BAD_INPUT',
      `schema "${schema}" in ${label} is ${RESERVED.has(schema) ? 'a reserved word of SQL' : "one of PostgreSQL's own"}: choose another name`,
    );
  u.searchParams.delete('schema');
  return { connectionString: u.toString(), schema, label };
}
