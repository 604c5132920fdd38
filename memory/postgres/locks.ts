/**
 * The store-wide lock of the PostgreSQL store, which only maintenance takes alone: every write
 * transaction takes it shared with its first lock (memory/postgres/write.ts `lockDocuments`), so writers
 * never wait for each other on it; `rlm repair` and a change of embedder hold it alone, so they see no
 * write half done and none starts before they commit. A writer that embeds checks, once it holds it,
 * that the store's embedder is still its own.
 */
import { RlmError } from '../../core/errors.ts';
import { fileIdOf, isPart } from '../graph-rules.ts';
import type { DocumentRecord } from '../types.ts';
import type { Sql } from './db.ts';

/**
 * The key of the lock on a file stored in parts (`base`: its first part's id) while an ingest writes it:
 * its parts go in several transactions, so the ingest holds this on a session of its own
 * (memory/postgres/batch-writes.ts) from before its first part until its last one is committed.
 * Another ingest of the file takes it the same way and waits; a delete of the file takes it in its
 * transaction and waits; the ingest's own transactions run on that session. Without it, two versions' parts could interleave, or a
 * file removed mid-ingest could come back headless.
 */
export function fileLockKey(schema: string, base: string): string {
  return `rlm-file:${schema}:${base}`;
}

/** How long an ingest waits for another one writing the same big file, ms. */
export const FILE_LOCK_TIMEOUT_MS = 10 * 60_000;

/**
 * The first statement of a delete of `docs`: takes their files' locks (memories have none), so it waits
 * for an ingest still writing one of them, and returns the ids of the later parts, stored by then, of
 * those named whole (a file's first part; a part named alone stays alone). Call before the documents'
 * own locks (lockDocuments), in the order every writer takes them.
 */
export async function lockFilesToDelete(
  sql: Sql,
  schema: string,
  docs: readonly DocumentRecord[],
): Promise<string[]> {
  const files = docs.filter((d) => d.memory === undefined);
  if (files.length === 0) return [];
  const keys = [...new Set(files.map((d) => fileLockKey(schema, fileIdOf(d.id))))].sort();
  await sql.query(
    'SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM (SELECT unnest($1::text[]) AS k ORDER BY 1) x',
    [keys],
  );
  const { rows } = await sql.query<{ id: string }>(
    `SELECT d.id FROM documents d JOIN unnest($1::text[]) AS f(base)
       ON left(d.id, length(f.base) + 2) = f.base || '.p' AND substr(d.id, length(f.base) + 3) ~ '^[0-9]+$'`,
    [files.filter((d) => !isPart(d.id)).map((d) => d.id)],
  );
  return rows.map((r) => r.id);
}

/** The key of the store-wide lock of `schema` (an advisory lock on its hash). */
export function storeLockKey(schema: string): string {
  return `rlm-store:${schema}`;
}

/**
 * Waits until no write transaction runs and keeps new ones waiting until this transaction ends: what
 * `rlm repair` and a change of embedder take. Readers are never held up.
 */
export async function lockStore(sql: Sql, schema: string): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [storeLockKey(schema)]);
}

/**
 * Statement text that takes the store-wide lock shared, as the first lock of a write transaction; `$n`
 * is the parameter holding {@link storeLockKey}. Writers share it, so they never wait for each other
 * here; they wait while `rlm repair` holds it alone.
 */
export function sharedStoreLock(n: number): string {
  return `SELECT pg_advisory_xact_lock_shared(hashtextextended($${n}, 0))`;
}

/**
 * Throws BAD_INPUT, before anything is written, when the store's embedder (`now`, read in the write's
 * transaction after its locks) is not the one the writer embedded with (`spec`): `rlm repair
 * --embedder` changed it meanwhile.
 */
export function checkEmbedder(now: string | null, spec: string | null): void {
  if (now === spec) return;
  throw new RlmError(
    'BAD_INPUT',
    now === null
      ? `the store's embedder ${spec} was removed while this command ran; run it again`
      : `the store's embedder is now ${now}${spec === null ? '' : `, not ${spec}`} (changed while this command ran); run it again`,
  );
}
