/**
 * The steps that create and migrate a PostgreSQL store's tables, in order (memory/SCHEMA.md describes
 * the tables of the current version). A step is SQL, and may go on in code in the same transaction.
 */
import type { Sql } from './db.ts';
import {
  buildIndexSegment,
  SEGMENT_CHUNK_COLUMNS,
  type SegmentChunkRow,
  segmentChunkOf,
  segmentRow,
} from './segments.ts';

/** One step: from version N-1 to N. */
interface Migration {
  version: number;
  sql: string;
  run?: (sql: Sql) => Promise<void>;
}

/** Chunks per index segment a migration builds. */
const MIGRATION_SEGMENT_CHUNKS = 4000;

export const MIGRATIONS: Migration[] = [
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
    // The search index as BM25 segments read into each process and kept current from a change feed
    // (transaction ids on its rows), instead of postings rows ranked in SQL. Grep's trigram index moves
    // from every chunk's text to each document's tokens (grams.ts), made once the migration is done
    // (schema.ts). Documents and access stats carry the transaction that last wrote them, so the feed
    // also brings archiving and reads, and recall needs no other statement.
    version: 3,
    sql: `
CREATE SEQUENCE bm25_segment_seq;
CREATE TABLE bm25_segments (
  id bigint PRIMARY KEY,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  chunks integer NOT NULL,
  data text NOT NULL,
  info text NOT NULL
);
ALTER TABLE bm25_segments ALTER COLUMN data SET STORAGE EXTERNAL, ALTER COLUMN info SET STORAGE EXTERNAL;
CREATE INDEX bm25_segments_xid ON bm25_segments (xid);
CREATE TABLE bm25_dead (seq bigint PRIMARY KEY, xid xid8 NOT NULL DEFAULT pg_current_xact_id());
CREATE INDEX bm25_dead_xid ON bm25_dead (xid);
DROP INDEX IF EXISTS chunks_text_trgm;
ALTER TABLE documents ADD COLUMN grams text;
ALTER TABLE documents ALTER COLUMN grams SET STORAGE EXTERNAL;
UPDATE documents d SET grams = g.grams
FROM (SELECT c.document, string_agg(DISTINCT t, ' ') AS grams
      FROM chunks c CROSS JOIN LATERAL regexp_split_to_table(c.text, '[ \t\n\r]+') AS t
      WHERE t <> '' GROUP BY c.document) g
WHERE g.document = d.id;
UPDATE documents SET grams = '' WHERE grams IS NULL;
ALTER TABLE documents ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX documents_xid ON documents (xid);
ALTER TABLE access ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX access_xid ON access (xid);
CREATE FUNCTION rlm_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.xid := pg_current_xact_id(); RETURN NEW; END $$;
CREATE TRIGGER documents_written BEFORE UPDATE ON documents FOR EACH ROW EXECUTE FUNCTION rlm_written();
CREATE TRIGGER access_written BEFORE UPDATE ON access FOR EACH ROW EXECUTE FUNCTION rlm_written();
`,
    run: async (sql) => {
      await indexStoredChunks(sql);
      await sql.query('DROP TABLE postings, term_counts, totals, signatures');
    },
  },
];

/**
 * Builds the index segments of the chunks a store already holds, whole documents at a time in store
 * order, keeping the signatures the linker gave them.
 */
async function indexStoredChunks(sql: Sql): Promise<void> {
  const { rows: docs } = await sql.query<{ id: string; chunks: number }>(
    'SELECT id, chunks FROM documents WHERE chunks > 0 ORDER BY first_seq',
  );
  for (let i = 0; i < docs.length; ) {
    const batch: string[] = [];
    for (let n = 0; i < docs.length && n < MIGRATION_SEGMENT_CHUNKS; i++) {
      batch.push(docs[i]!.id);
      n += docs[i]!.chunks;
    }
    const { rows } = await sql.query<SegmentChunkRow & { signature: string[] | null }>(
      `SELECT ${SEGMENT_CHUNK_COLUMNS},
              (SELECT array_agg(s.term ORDER BY s.term) FROM signatures s WHERE s.seq = c.seq) AS signature
       FROM chunks c JOIN documents d ON d.id = c.document
       WHERE c.document = ANY($1::text[]) ORDER BY c.seq`,
      [batch],
    );
    const { rows: id } = await sql.query<{ id: number }>("SELECT nextval('bm25_segment_seq') AS id");
    const seg = buildIndexSegment(
      Number(id[0]!.id),
      rows.map((r) => segmentChunkOf(r, r.signature ?? [])),
    );
    const row = segmentRow(seg);
    await sql.query('INSERT INTO bm25_segments (id, chunks, data, info) VALUES ($1, $2, $3, $4)', [
      row.id,
      rows.length,
      row.data,
      row.info,
    ]);
  }
}
