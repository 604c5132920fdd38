/**
 * The store-wide lock of the PostgreSQL store, which only maintenance takes: every write transaction
 * holds it shared (writers never wait for each other on it), `rlm repair` and a change of embedder hold
 * it alone, so they see no write half done and none starts before they commit.
 */
import { RlmError } from '../../core/errors.ts';
import type { Sql } from './db.ts';

/** The advisory lock key `rlm repair` takes alone and every write transaction takes shared. */
function repairLockKey(schema: string): string {
  return `rlm-repair:${schema}`;
}

/**
 * Waits until no write transaction runs and keeps new ones waiting until this transaction ends: what
 * `rlm repair` and a change of embedder take. Readers are never held up.
 */
export async function lockStore(sql: Sql, schema: string): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [repairLockKey(schema)]);
}

/**
 * The first statements of every write transaction: it waits while `rlm repair` rebuilds the derived
 * tables (writers share the lock, so they never wait for each other here), then checks that the store's
 * embedder is still the one this process embeds with (`rlm repair --embedder` may have changed it
 * meanwhile): BAD_INPUT when it is not, before anything is written.
 */
export async function enterWrite(sql: Sql, schema: string, spec: string | null): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', [repairLockKey(schema)]);
  // A statement of its own: its snapshot is taken once the lock is held.
  const { rows } = await sql.query<{ spec: string | null }>(
    "SELECT value->>'spec' AS spec FROM store_settings WHERE key = 'embedder'",
  );
  const now = rows[0]?.spec ?? null;
  if (now !== spec)
    throw new RlmError(
      'BAD_INPUT',
      now === null
        ? `the store's embedder ${spec} was removed while this command ran; run it again`
        : `the store's embedder is now ${now}${spec === null ? '' : `, not ${spec}`} (changed while this command ran); run it again`,
    );
}
