/**
 * The write path of the PostgreSQL store: one transaction per batch of documents (an ingest step, a
 * memory) that replaces their old versions, inserts documents, chunks and the batch's search index
 * segment (and vectors, with an embedder), and links the new chunks to related ones. No global lock: a
 * writer takes the store-wide lock shared (only `rlm repair` takes it alone) and locks only the
 * documents it writes (transaction-scoped advisory locks, taken in one order), so two writers of the same
 * file queue, and writers of different documents run side by side.
 */
import type { PendingDoc } from '../ingest/prepare.ts';
import type { ChunkRecord, DocumentRecord, IngestReport } from '../types.ts';
import { type Sql, storableJson } from './db.ts';
import { documentGrams } from './grams.ts';
import type { LiveIndex } from './live-index.ts';
import { checkEmbedder, sharedStoreLock, storeLockKey } from './locks.ts';
import { DOCUMENT_COLUMNS, type DocumentRow, documentOf } from './rows.ts';
import { buildIndexSegment, type LoadedSegment, segmentRow } from './segments.ts';
import { insertVectors } from './vectors.ts';

/**
 * The first statement of every write transaction: takes the store-wide lock shared (memory/postgres/
 * locks.ts: it waits while `rlm repair` runs), then locks the documents `ids` until the transaction
 * ends, always in the same order (no deadlock).
 */
export async function lockDocuments(sql: Sql, schema: string, ids: string[], shared = false): Promise<void> {
  const fn = shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await sql.query(
    `${sharedStoreLock(3)} UNION ALL
     (SELECT ${fn}(k) FROM (SELECT DISTINCT hashtextextended($1 || id, 0) AS k FROM unnest($2::text[]) AS id) x ORDER BY k)`,
    [`rlm-doc:${schema}:`, ids, storeLockKey(schema)],
  );
}

/** Stored versions of documents, by id. */
export async function documentsById(sql: Sql, ids: string[]): Promise<Map<string, DocumentRecord>> {
  const { rows } = await sql.query<DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE id = ANY($1::text[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, documentOf(r)]));
}

/**
 * Removes documents with their chunks, links and vectors (which go with their chunks), in one
 * statement, and marks their chunks dead in the search index (`bm25_dead`, read by the change feed;
 * merge.ts rewrites the segments that hold them). Call with the documents locked.
 */
export async function deleteDocuments(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql.query(
    `WITH gone AS (SELECT seq FROM chunks WHERE document = ANY($1::text[])),
       dead AS (INSERT INTO bm25_dead (seq) SELECT seq FROM gone),
       rel AS (DELETE FROM related WHERE from_seq IN (SELECT seq FROM gone) OR to_seq IN (SELECT seq FROM gone)),
       man AS (DELETE FROM manual_links WHERE from_doc = ANY($1::text[]) OR to_doc = ANY($1::text[]))
     DELETE FROM documents WHERE id = ANY($1::text[])`,
    [ids],
  );
}

/** Access stats of removed documents' chunks go with them (ids are `DOCUMENT:N`). */
export async function forgetAccess(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql.query(
    `DELETE FROM access WHERE left(id, length(id) - position(':' IN reverse(id))) = ANY($1::text[])`,
    [ids],
  );
}

/**
 * What a batch was embedded with: the writer's embedder (null without one, checked against the store's
 * in the transaction), and each chunk's vector by chunk id (none when it has no embedder or it failed).
 */
export interface BatchVectors {
  spec: string | null;
  byId?: Map<string, number[]>;
}

/** A batch numbered, indexed and linked, ready to be written in one statement. */
export interface PreparedBatch {
  documents: DocumentRecord[];
  records: ChunkRecord[];
  /** The chunks' sequence numbers, in record order. */
  seqs: number[];
  /** The batch's search index segment (none without chunks), already in the process's index. */
  segment: LoadedSegment | undefined;
  /** related_to links of its chunks: [from seq, to seq, strength]. */
  related: [number, number, number][];
  /** Each document's tokens, for grep's index (grams.ts). */
  grams: string[];
  vectors: BatchVectors;
}

/**
 * Numbers documents and their chunk records (sequence numbers are taken outside any transaction's
 * rollback, so `sql` may be the pool), builds their search index segment and links their chunks: `live`
 * (brought up to date by the caller) gives the linker its statistics and signatures and holds the segment
 * from then on; `track` receives it first, for the caller to take it out again if it is not committed.
 */
export async function prepareBatch(
  sql: Sql,
  live: LiveIndex,
  built: { records: ChunkRecord[]; documents: DocumentRecord[] },
  track: (seg: LoadedSegment) => void,
  vectors: BatchVectors,
): Promise<PreparedBatch> {
  const { records, documents } = built;
  const { rows: numbered } = await sql.query<{ seqs: number[]; segment: number }>(
    `SELECT array(SELECT nextval('chunk_seq') FROM generate_series(1, $1::integer)) AS seqs,
            nextval('bm25_segment_seq') AS segment`,
    [records.length + documents.length],
  );
  const all = numbered[0]!.seqs.map(Number).sort((a, b) => a - b);
  const seqs = all.slice(0, records.length);
  const spare = all.slice(records.length);
  // Each document's place in the store's order: the sequence number of its first chunk (a spare one if empty).
  for (const [i, d] of documents.entries()) d.first = d.chunks > 0 ? seqs[d.first]! : spare[i]!;
  const chunks = new Map<string, ChunkRecord[]>(documents.map((d) => [d.id, []]));
  for (const r of records) chunks.get(r.document)?.push(r);
  const grams = documents.map((d) => documentGrams(chunks.get(d.id) ?? [], d.chunker));
  if (records.length === 0)
    return { documents, records, seqs, segment: undefined, related: [], grams, vectors };
  const byId = new Map(documents.map((d) => [d.id, d]));
  const segment = buildIndexSegment(
    Number(numbered[0]!.segment),
    records.map((r, i) => {
      const d = byId.get(r.document)!;
      return {
        seq: seqs[i]!,
        document: r.document,
        ordinal: r.ordinal,
        topic: d.memory?.topic ?? null,
        type: r.type,
        tags: r.tags,
        tokens: r.tokens,
        text: r.text,
        facts: {
          path: d.path,
          tags: d.tags ?? null,
          created: d.ingestedAt,
          memory: d.memory ? { importance: d.memory.importance, source: d.memory.source } : null,
        },
      };
    }),
  );
  track(segment);
  return { documents, records, seqs, segment, related: live.link(segment), grams, vectors };
}

/**
 * Writes documents and their chunk records (whose ids the caller has locked, old versions deleted) as
 * {@link prepareBatch} left them. The caller commits.
 */
export async function insertBatch(
  sql: Sql,
  live: LiveIndex,
  built: { records: ChunkRecord[]; documents: DocumentRecord[] },
  track: (seg: LoadedSegment) => void,
  vectors: BatchVectors,
): Promise<PreparedBatch> {
  const prepared = await prepareBatch(sql, live, built, track, vectors);
  await writePrepared(sql, prepared);
  return prepared;
}

/**
 * Inserts a prepared batch's documents, chunks, index segment and links in one statement, then its
 * vectors. The statement also reads the store's embedder: one that is not the batch's (`rlm repair
 * --embedder` changed it meanwhile) fails the write, and the caller's transaction rolls back.
 */
export async function writePrepared(sql: Sql, batch: PreparedBatch): Promise<void> {
  const { documents, records, seqs: chunkSeqs, segment, related, grams, vectors } = batch;
  const row = segment ? segmentRow(segment) : undefined;
  const params: unknown[] = [];
  const p = (v: unknown, type: string) => {
    params.push(v);
    return `$${params.length}::${type}`;
  };
  // Arrays of plain values rather than JSON for the chunks: the server reads them twice as fast.
  const chunkArrays: [unknown[], string][] = [
    [chunkSeqs, 'bigint[]'],
    [records.map((r) => r.document), 'text[]'],
    [records.map((r) => r.ordinal), 'integer[]'],
    [records.map((r) => r.start), 'integer[]'],
    [records.map((r) => r.end), 'integer[]'],
    [records.map((r) => r.tokens), 'integer[]'],
    [records.map((r) => r.type), 'text[]'],
    [records.map((r) => storableJson(r.tags)), 'text[]'],
    [records.map((r) => r.section ?? null), 'text[]'],
    [records.map((r) => r.createdAt), 'text[]'],
    [records.map((r) => r.time ?? null), 'text[]'],
    [segment?.bm25.lengths ?? [], 'integer[]'],
    [records.map((r) => r.text), 'text[]'],
  ];
  const chunkColumns = chunkArrays.map(([values, type]) => p(values, type));
  const relatedColumns = [0, 1, 2].map((i) =>
    p(
      related.map((r) => r[i]),
      i < 2 ? 'bigint[]' : 'float8[]',
    ),
  );
  const { rows } = await sql.query<{ xid: string; spec: string | null }>(
    `WITH d AS (
       INSERT INTO documents (${DOCUMENT_COLUMNS}, grams)
       SELECT d.id, d.path, d.hash, d.bytes, d.chunker, d.chunks, d.tokens, d.ingested_at,
              CASE WHEN d.tags IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(d.tags)) END,
              CASE WHEN d.notes IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(d.notes)) END,
              d.meta, d.topic, d.importance, d.source, d.archived_at, d.first_seq, d.chars, d.grams
       FROM json_to_recordset(${p(storableJson(documents.map((d, i) => ({ ...documentJson(d), grams: grams[i] }))), 'json')})
         AS d(id text, path text, hash text, bytes bigint, chunker text, chunks integer, tokens bigint,
         ingested_at text, tags json, notes json, meta json, topic text, importance text, source text,
         archived_at text, first_seq bigint, chars bigint, grams text)),
     c AS (
       INSERT INTO chunks (seq, document, ordinal, start_at, end_at, tokens, type, tags, section, created_at, time, terms, text)
       SELECT c.seq, c.document, c.ordinal, c.start_at, c.end_at, c.tokens, c.type,
              CASE WHEN c.tags = '[]' THEN '{}'::text[] ELSE ARRAY(SELECT json_array_elements_text(c.tags::json)) END,
              c.section, c.created_at, c.time, c.terms, c.text
       FROM unnest(${chunkColumns.join(', ')})
         AS c(seq, document, ordinal, start_at, end_at, tokens, type, tags, section, created_at, time, terms, text)),
     s AS (
       INSERT INTO bm25_segments (id, chunks, data, info)
       SELECT ${p(row?.id ?? null, 'bigint')}, ${p(records.length, 'integer')}, ${p(row?.data ?? null, 'text')},
              ${p(row?.info ?? null, 'text')}
       WHERE ${p(row !== undefined, 'boolean')}
       RETURNING xid),
     r AS (
       INSERT INTO related (from_seq, to_seq, strength)
       SELECT * FROM unnest(${relatedColumns.join(', ')}))
     SELECT (SELECT xid::text FROM s) AS xid,
            (SELECT value->>'spec' FROM store_settings WHERE key = 'embedder') AS spec`,
    params,
  );
  checkEmbedder(rows[0]!.spec, vectors.spec);
  const { spec, byId } = vectors;
  if (spec !== null && byId) {
    const at = records.flatMap((r, i) => (byId.has(r.id) ? [i] : []));
    await insertVectors(
      sql,
      spec,
      at.map((i) => chunkSeqs[i]!),
      at.map((i) => byId.get(records[i]!.id)!),
    );
  }
  // Known from now on, so the feed can tell this segment from one merged away (live-index.ts).
  if (segment) segment.xid = Number(rows[0]!.xid);
}

function documentJson(d: DocumentRecord): Record<string, unknown> {
  return {
    id: d.id,
    path: d.path,
    hash: d.hash,
    bytes: d.bytes,
    chunker: d.chunker,
    chunks: d.chunks,
    tokens: d.tokens,
    ingested_at: d.ingestedAt,
    tags: d.tags ?? null,
    notes: d.notes ?? null,
    meta: d.meta ?? null,
    topic: d.memory?.topic ?? null,
    importance: d.memory?.importance ?? null,
    source: d.memory?.source ?? null,
    archived_at: d.memory?.archivedAt ?? null,
    first_seq: d.first,
    chars: d.chars ?? null,
  };
}

/** Whether a stored document is the same as a prepared one (another writer committed it meanwhile). */
export function sameDocument(stored: DocumentRecord, doc: PendingDoc): boolean {
  const a = stored.tags ?? [];
  const b = doc.record.tags ?? [];
  return (
    stored.hash === doc.record.hash &&
    stored.chunker === doc.record.chunker &&
    a.length === b.length &&
    a.every((t, i) => t === b[i]) &&
    JSON.stringify(stored.meta ?? null) === JSON.stringify(doc.record.meta ?? null)
  );
}

/** Moves a report's count of a document from added/updated to skipped. */
export function countSkipped(report: IngestReport, doc: PendingDoc): void {
  if (doc.replaced) report.updated--;
  else report.added--;
  report.skipped++;
}
