/**
 * The tables of a PostgreSQL store, created and migrated by rlm. `rlm_schema` records each version
 * applied; a store whose version is newer than this code is refused. Creation and migration run in one
 * transaction under an advisory lock, so processes opening a new store at once create it once.
 * memory/SCHEMA.md describes every table.
 */
import { RlmError } from '../../core/errors.ts';
import type { Db, Sql } from './db.ts';
import { MIGRATIONS } from './migrations.ts';
import { vectorSchema } from './vectors.ts';

/**
 * Version of the tables this code reads and writes. Version 3 is never applied: it was the number of
 * the in-memory index's step while version 4 (vectors, chunk seams) was released, and that step became
 * version 5 (migrations.ts).
 */
export const PG_SCHEMA_VERSION = 5;

/** What the server offers beyond plain PostgreSQL, found when the store is opened. */
export interface Capabilities {
  /** pg_trgm's index on documents' tokens narrows grep to the documents that can match. */
  trigrams: boolean;
  /** The schema of the pgvector extension, which vector search needs; null when it is not installed. */
  vectorSchema: string | null;
}

/**
 * Makes sure the store's tables exist at this code's version (or `upTo`, an older one, for tests of
 * migrations): creates them (with `create`) or migrates them. STORE_MISSING when there is no store and
 * `create` is not set; BAD_INPUT when the store is newer.
 */
export async function prepareSchema(
  db: Db,
  create: boolean,
  upTo: number = PG_SCHEMA_VERSION,
): Promise<Capabilities> {
  const schema = db.target.schema;
  const version = await schemaVersion(db, schema);
  if (version > PG_SCHEMA_VERSION) throw newerSchema(db, version);
  if (version >= upTo) return capabilities(db);
  if (version === 0 && !create) {
    throw new RlmError(
      'STORE_MISSING',
      `no rlm store at ${db.target.label} (create one with \`rlm ingest PATH --store URL\`)`,
      { store: db.target.label },
    );
  }
  await db.tx(async (sql) => {
    // One creator or migrator at a time per schema; the others wait, then find the work done.
    await sql.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rlm-schema:${schema}`]);
    await sql.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    const now = await schemaVersion(sql, schema);
    if (now > PG_SCHEMA_VERSION) throw newerSchema(db, now);
    if (now === 0)
      await sql.query(
        `CREATE TABLE ${schema}.rlm_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
    for (const m of MIGRATIONS) {
      if (m.version <= now || m.version > upTo) continue;
      await sql.query(`SET LOCAL search_path = ${schema}, public`);
      await sql.query(m.sql);
      await m.run?.(sql);
      await sql.query(`INSERT INTO ${schema}.rlm_schema (version) VALUES ($1)`, [m.version]);
    }
  });
  await addTrigramIndex(db);
  return capabilities(db);
}

/** The highest version applied in `schema`, 0 when it holds no store. */
async function schemaVersion(sql: Sql, schema: string): Promise<number> {
  const { rows } = await sql.query<{ table: string | null }>('SELECT to_regclass($1) AS table', [
    `${schema}.rlm_schema`,
  ]);
  if (rows[0]?.table === null || rows[0]?.table === undefined) return 0;
  const v = await sql.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${schema}.rlm_schema`,
  );
  return v.rows[0]?.version ?? 0;
}

function newerSchema(db: Db, version: number): RlmError {
  return new RlmError(
    'BAD_INPUT',
    `store ${db.target.label} has schema ${version}, newer than this rlm understands (${PG_SCHEMA_VERSION}); upgrade rlm`,
  );
}

/**
 * The trigram index that lets grep skip documents without the pattern's literal text: a GIN index of
 * each document's tokens (grams.ts). pg_trgm ships with PostgreSQL (contrib) and is a trusted
 * extension, but a user without CREATE on the database cannot add it: the store then works without it,
 * and grep tests every document's tokens, still without reading its chunks.
 */
async function addTrigramIndex(db: Db): Promise<void> {
  // In public when allowed, so every store of the database finds it on its search path.
  const created = await db
    .query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public')
    .then(() => true)
    .catch(() =>
      db
        .query('CREATE EXTENSION IF NOT EXISTS pg_trgm')
        .then(() => true)
        .catch(() => false),
    );
  if (!created) return;
  await db
    .query(
      `CREATE INDEX IF NOT EXISTS documents_grams_trgm ON ${db.target.schema}.documents USING gin (grams gin_trgm_ops)`,
    )
    .catch(() => undefined);
}

/** What the server offers the store now. */
export async function capabilities(db: Db): Promise<Capabilities> {
  const { rows } = await db.query<{ trigrams: boolean }>('SELECT to_regclass($1) IS NOT NULL AS trigrams', [
    `${db.target.schema}.documents_grams_trgm`,
  ]);
  return { trigrams: rows[0]?.trigrams === true, vectorSchema: await vectorSchema(db) };
}
