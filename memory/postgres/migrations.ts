/**
 * The steps that create and migrate a PostgreSQL store's tables, in order (memory/SCHEMA.md describes
 * the tables of the current version). A step is SQL, and may go on in code in the same transaction.
 * The versions are 1, 2, 4 and 5: no step is numbered 3 (see version 4), and none is ever renumbered
 * once released.
 */
import type { Sql } from './db.ts';
import { gramsByDocument, saveGrams } from './grams.ts';
import { newIndexSegment, SEGMENT_CHUNK_COLUMNS, type SegmentChunkRow, segmentRow } from './segments.ts';

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
    // Vectors (memory/postgres/vectors.ts) and chunk seams, as released: stores exist at this version.
    // Version 3 is never applied (its number was taken by the step that is now version 5); version 5
    // drops the seams again.
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
  {
    // The search index as BM25 segments read into each process and kept current from a change feed
    // (transaction ids on its rows), instead of postings rows ranked in SQL. Grep's trigram index moves
    // from every chunk's text to each document's tokens (grams.ts), made once the migration is done
    // (schema.ts). Documents and access stats carry the transaction that last wrote them, so the feed
    // also brings archiving and reads, and recall needs no other statement. The chunk seams of version
    // 4 go: grep's index of each document's tokens finds a literal across chunk edges too.
    version: 5,
    sql: `
DROP INDEX IF EXISTS chunks_seam_unknown, chunks_seam_trgm;
ALTER TABLE chunks DROP COLUMN seam;
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
-- Documents' tokens are set with their index segments (indexStoredChunks), from their chunks.
UPDATE documents SET grams = '';
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
 * order, keeping the signatures the linker gave them, and sets each document's tokens (grams.ts).
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
    const { rows } = await sql.query<
      SegmentChunkRow & { signature: string[] | null; start_at: number; end_at: number; chunker: string }
    >(
      `SELECT ${SEGMENT_CHUNK_COLUMNS}, c.start_at, c.end_at, d.chunker,
              (SELECT array_agg(s.term ORDER BY s.term) FROM signatures s WHERE s.seq = c.seq) AS signature
       FROM chunks c JOIN documents d ON d.id = c.document
       WHERE c.document = ANY($1::text[]) ORDER BY c.seq`,
      [batch],
    );
    const grams = gramsByDocument(rows);
    await saveGrams(
      sql,
      [...grams.keys()],
      [...grams.values()].map((d) => d.grams),
    );
    const seg = await newIndexSegment(sql, rows, (r) => r.signature ?? []);
    const row = segmentRow(seg);
    await sql.query('INSERT INTO bm25_segments (id, chunks, data, info) VALUES ($1, $2, $3, $4)', [
      row.id,
      rows.length,
      row.data,
      row.info,
    ]);
  }
}
