/**
 * Store URLs (memory/postgres/url.ts): what is accepted, what is refused with a line that says why, and
 * that no password is ever shown, however the URL is written. No server needed.
 */
import { describe, expect, it } from 'vitest';
import { parsePostgresUrl, redactIn, redactUrl } from '../../../memory/postgres/url.ts';
import { thrown } from '../../helpers/errors.ts';

describe('store URLs', () => {
  it('takes the schema from ?schema= (default rlm) and leaves the rest to the client', () => {
    expect(parsePostgresUrl('postgres://u:pw@db.example:5433/rlm?schema=team_a&sslmode=require')).toEqual({
      connectionString: 'postgres://u:pw@db.example:5433/rlm?sslmode=require',
      schema: 'team_a',
      label: 'postgres://u:***@db.example:5433/rlm?schema=team_a&sslmode=require',
    });
    expect(parsePostgresUrl('postgresql://u@h/d').schema).toBe('rlm');
  });

  it('hides a password wherever it is: parsed, in a parameter, in text, or in a URL that does not parse', () => {
    expect(redactUrl('postgres://u:s3cret@h/d')).toBe('postgres://u:***@h/d');
    expect(redactUrl('postgres://u@h/d?password=s3cret')).toBe('postgres://u@h/d?password=***');
    expect(redactIn('login failed for postgres://u:s3cret@h/d (s3cret)', 'postgres://u:s3cret@h/d')).toBe(
      'login failed for postgres://u:***@h/d (***)',
    );
    // An unencoded '/' in the password: the URL does not parse, or parses with the login in its path.
    expect(redactUrl('postgres://rlm:se/cret@127.0.0.1:5432/rlm')).toBe('postgres://***@127.0.0.1:5432/rlm');
    expect(redactUrl('postgres://rlm:9999/sEcReT@127.0.0.1:5432/rlm')).toBe(
      'postgres://***@127.0.0.1:5432/rlm',
    );
  });

  it('refuses a login with an unencoded reserved character, without showing it', () => {
    for (const url of [
      'postgres://rlm:se/cret@127.0.0.1:5432/rlm',
      'postgres://rlm:9999/sEcReT@127.0.0.1:5432/rlm',
    ]) {
      const err = thrown(() => parsePostgresUrl(url));
      expect(err.code).toBe('BAD_INPUT');
      expect(err.message).not.toMatch(/cret/i);
    }
    expect(thrown(() => parsePostgresUrl('postgres://rlm:9999/sEcReT@127.0.0.1:5432/rlm')).message).toBe(
      "store URL postgres://***@127.0.0.1:5432/rlm has an '@' after its host: percent-encode '/', '?', '#' and '@' in the user name and password (%2F, %3F, %23, %40)",
    );
    // An '@' in a parameter is no misplaced login.
    expect(parsePostgresUrl('postgres://u:secret@h/d?application_name=rlm@laptop').label).toBe(
      'postgres://u:***@h/d?application_name=rlm@laptop',
    );
    // Encoded, the same password is taken.
    expect(parsePostgresUrl('postgres://rlm:se%2Fcret@127.0.0.1:5432/rlm').label).toBe(
      'postgres://rlm:***@127.0.0.1:5432/rlm',
    );
  });

  it('refuses schema names the store cannot use: malformed, reserved words and PostgreSQL’s own', () => {
    const refused = (schema: string) => thrown(() => parsePostgresUrl(`postgres://u@h/d?schema=${schema}`));
    expect(refused('Team').message).toMatch(/must be 1-63 lower-case letters/);
    for (const schema of ['select', 'user', 'order', 'table', 'system_user'])
      expect(refused(schema).message).toBe(
        `schema "${schema}" in postgres://u@h/d?schema=${schema} is a reserved word of SQL: choose another name`,
      );
    for (const schema of ['pg_catalog', 'pg_temp', 'information_schema'])
      expect(refused(schema).message).toMatch(/is one of PostgreSQL's own: choose another name$/);
    // Non-reserved keywords name schemas unquoted.
    expect(parsePostgresUrl('postgres://u@h/d?schema=name').schema).toBe('name');
  });
});
