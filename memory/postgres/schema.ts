/**
 * The tables of a PostgreSQL store, created and migrated by rlm. `rlm_schema` records each version
 * applied; a store whose version is newer than this code is refused. Creation and migration run in one
 * transaction under an advisory lock, so processes opening a new store at once create it once.
 * memory/SCHEMA.md describes every table.
 */
import { RlmError } from '../../core/errors.ts';
import type { Db, Sql } from './db.ts';
import { vectorSchema } from './vectors.ts';

/** Version of the tables this code reads and writes. */
export const PG_SCHEMA_VERSION = 4;

/** Steps from version N-1 to N, in order. */
const MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
CREATE TABLE store_settings (key text PRIMARY KEY, value jsonb NOT NULL);
CREATE SEQUENCE chunk_seq;
CREATE TABLE documents (
  id text PRIMARY KEY,
  path text,
  hash text NOT NULL,
  bytes bigint NOT NULL,
  chunker text NOT NULL,
  chunks integer NOT NULL,
  tokens bigint NOT NULL,
  ingested_at text NOT NULL,
  tags text[],
  notes text[],
  meta json,
  topic text,
  importance text,
  source text,
  archived_at text,
  first_seq bigint NOT NULL
);
CREATE INDEX documents_path ON documents (path);
CREATE INDEX documents_order ON documents (first_seq);
CREATE INDEX documents_topic ON documents (topic) WHERE topic IS NOT NULL;
CREATE TABLE chunks (
  seq bigint PRIMARY KEY,
  document text NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
  ordinal integer NOT NULL,
  start_at integer NOT NULL,
  end_at integer NOT NULL,
  tokens integer NOT NULL,
  type text NOT NULL,
  tags text[] NOT NULL,
  section text,
  created_at text NOT NULL,
  time text,
  terms integer NOT NULL,
  text text NOT NULL,
  UNIQUE (document, ordinal)
);
CREATE TABLE postings (
  term text NOT NULL,
  seq bigint NOT NULL,
  tf integer NOT NULL,
  len integer NOT NULL,
  PRIMARY KEY (term, seq) INCLUDE (tf, len)
);
CREATE INDEX postings_seq ON postings (seq);
CREATE TABLE term_counts (term text NOT NULL, df bigint NOT NULL);
CREATE INDEX term_counts_term ON term_counts (term);
CREATE TABLE totals (chunks bigint NOT NULL, terms bigint NOT NULL);
CREATE TABLE signatures (term text NOT NULL, seq bigint NOT NULL, PRIMARY KEY (term, seq));
CREATE INDEX signatures_seq ON signatures (seq);
CREATE TABLE related (
  from_seq bigint NOT NULL,
  to_seq bigint NOT NULL,
  strength double precision NOT NULL,
  PRIMARY KEY (from_seq, to_seq)
);
CREATE INDEX related_to ON related (to_seq);
CREATE TABLE manual_links (
  from_doc text NOT NULL,
  from_ordinal integer NOT NULL,
  to_doc text NOT NULL,
  to_ordinal integer NOT NULL,
  type text NOT NULL,
  strength double precision NOT NULL,
  n bigserial NOT NULL,
  PRIMARY KEY (from_doc, from_ordinal, to_doc, to_ordinal, type)
);
CREATE INDEX manual_links_to ON manual_links (to_doc);
CREATE TABLE access (id text PRIMARY KEY, count bigint NOT NULL, last_ms bigint NOT NULL);
`,
  },
  {
    // A document's length in UTF-16 code units (list_documents, document reads); null for older rows.
    version: 2,
    sql: 'ALTER TABLE documents ADD COLUMN chars bigint;',
  },
  {
    // Vectors (memory/postgres/vectors.ts) and chunk seams (memory/postgres/seams.ts). Self-contained:
    // it reads nothing an earlier step left but the version 1 tables, so it can be renumbered.
    version: 4,
    sql: `
ALTER TABLE chunks ADD COLUMN seam text;
-- A first chunk starts no edge; the seams of older rows stay unknown (null) until rlm repair.
UPDATE chunks SET seam = '' WHERE ordinal = 0;
CREATE INDEX chunks_seam_unknown ON chunks (document) WHERE seam IS NULL;
CREATE TABLE vectors (
  seq bigint NOT NULL REFERENCES chunks (seq) ON DELETE CASCADE,
  embedder text NOT NULL,
  embedding real[] NOT NULL,
  PRIMARY KEY (seq, embedder)
);
ALTER TABLE vectors ALTER COLUMN embedding SET STORAGE EXTERNAL;
`,
  },
];

/** What the server offers beyond plain PostgreSQL, found when the store is opened. */
export interface Capabilities {
  /** pg_trgm's index on chunk text narrows grep to the chunks that can match. */
  trigrams: boolean;
  /** The schema of the pgvector extension, which vector search needs; null when it is not installed. */
  vectorSchema: string | null;
}

/**
 * Makes sure the store's tables exist at this code's version: creates them (with `create`) or migrates
 * them. STORE_MISSING when there is no store and `create` is not set; BAD_INPUT when the store is newer.
 */
export async function prepareSchema(db: Db, create: boolean): Promise<Capabilities> {
  const schema = db.target.schema;
  const version = await schemaVersion(db, schema);
  if (version > PG_SCHEMA_VERSION) throw newerSchema(db, version);
  if (version === PG_SCHEMA_VERSION) return capabilities(db);
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
      if (m.version <= now) continue;
      await sql.query(`SET LOCAL search_path = ${schema}, public`);
      await sql.query(m.sql);
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
 * The trigram index that lets grep skip chunks without the pattern's literal text. pg_trgm ships with
 * PostgreSQL (contrib) and is a trusted extension, but a user without CREATE on the database cannot add
 * it: the store then works without it, and grep reads every chunk.
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
  for (const column of ['text', 'seam'])
    await db
      .query(
        `CREATE INDEX IF NOT EXISTS chunks_${column}_trgm ON ${db.target.schema}.chunks USING gin (${column} gin_trgm_ops)`,
      )
      .catch(() => undefined);
}

/** What the server offers the store now. */
export async function capabilities(db: Db): Promise<Capabilities> {
  const { rows } = await db.query<{ trigrams: boolean }>(
    'SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS trigrams',
    [`${db.target.schema}.chunks_text_trgm`, `${db.target.schema}.chunks_seam_trgm`],
  );
  return { trigrams: rows[0]?.trigrams === true, vectorSchema: await vectorSchema(db) };
}
