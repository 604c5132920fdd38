/**
 * The write path of the PostgreSQL store: one transaction per batch of documents (an ingest step, a
 * memory) that replaces their old versions, inserts documents, chunks, postings, term counts and
 * signatures, and links the new chunks to related ones. No global lock: a writer locks only the
 * documents it writes (transaction-scoped advisory locks, taken in one order), so two writers of the same
 * file queue, and writers of different documents run side by side.
 */
import type { PendingDoc } from '../ingest/prepare.ts';
import { defaultAnalyzer } from '../search/analyzer.ts';
import { bm25Idf, rankTerms } from '../search/bm25.ts';
import { linkSegment, SignatureIndex } from '../search/linker.ts';
import type { ChunkRecord, DocumentRecord, IngestReport } from '../types.ts';
import type { Sql } from './db.ts';
import { checkEmbedder, sharedStoreLock, storeLockKey } from './locks.ts';
import { DOCUMENT_COLUMNS, type DocumentRow, documentOf } from './rows.ts';
import { seamsOf } from './seams.ts';
import { insertVectors } from './vectors.ts';

/** Signature terms per chunk and the minimum df of one, as the folder store's linker uses them. */
const SIGNATURE_TERMS = 8;
/** Rows per INSERT … SELECT unnest(…) statement. */
const INSERT_ROWS = 20_000;
const NUMBER = /^\p{N}+$/u;

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
 * Removes documents with their chunks, postings, signatures, links and vectors (which go with their
 * chunks), and counts their terms out of the statistics. Call with the documents locked.
 */
export async function deleteDocuments(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const seqs = 'SELECT seq FROM chunks WHERE document = ANY($1::text[])';
  await sql.query(
    `INSERT INTO term_counts (term, df)
     SELECT p.term, -count(*) FROM postings p WHERE p.seq IN (${seqs}) GROUP BY p.term`,
    [ids],
  );
  await sql.query(
    `INSERT INTO totals (chunks, terms)
     SELECT -count(*), -coalesce(sum(terms), 0) FROM chunks WHERE document = ANY($1::text[]) HAVING count(*) > 0`,
    [ids],
  );
  await sql.query(`DELETE FROM postings WHERE seq IN (${seqs})`, [ids]);
  await sql.query(`DELETE FROM signatures WHERE seq IN (${seqs})`, [ids]);
  await sql.query(`DELETE FROM related WHERE from_seq IN (${seqs}) OR to_seq IN (${seqs})`, [ids]);
  await sql.query('DELETE FROM manual_links WHERE from_doc = ANY($1::text[]) OR to_doc = ANY($1::text[])', [
    ids,
  ]);
  await sql.query('DELETE FROM documents WHERE id = ANY($1::text[])', [ids]);
}

/** Access stats of removed documents' chunks go with them (ids are `DOCUMENT:N`). */
export async function forgetAccess(sql: Sql, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql.query(
    `DELETE FROM access WHERE left(id, length(id) - position(':' IN reverse(id))) = ANY($1::text[])`,
    [ids],
  );
}

/** What one written batch leaves for the caller: the new records and their sequence numbers. */
export interface WrittenBatch {
  documents: DocumentRecord[];
  records: ChunkRecord[];
  seqs: number[];
  /** Distinct index terms of the batch (for the term-count compaction after the commit). */
  terms: string[];
}

/**
 * What a batch was embedded with: the writer's embedder (null without one, checked against the store's
 * in the transaction), and each chunk's vector by chunk id (none when it has no embedder or it failed).
 */
export interface BatchVectors {
  spec: string | null;
  byId?: Map<string, number[]>;
}

/**
 * Writes documents and their chunk records (whose ids the caller has locked, old versions deleted), with
 * their vectors when given, and links their chunks. The caller commits.
 */
export async function insertBatch(
  sql: Sql,
  built: { records: ChunkRecord[]; documents: DocumentRecord[] },
  vectors: BatchVectors,
): Promise<WrittenBatch> {
  const { records, documents } = built;
  // The store's embedder is read with the sequence numbers, after the transaction's locks.
  const seqRows = await sql.query<{ seq: number; spec: string | null }>(
    `SELECT nextval('chunk_seq') AS seq, (SELECT value->>'spec' FROM store_settings WHERE key = 'embedder') AS spec
     FROM generate_series(1, $1::integer)`,
    [records.length + documents.length],
  );
  if (seqRows.rows.length > 0) checkEmbedder(seqRows.rows[0]!.spec, vectors.spec);
  const seqs = seqRows.rows.map((r) => r.seq).sort((a, b) => a - b);
  const chunkSeqs = seqs.slice(0, records.length);
  const spare = seqs.slice(records.length);
  // Each document's place in the store's order: the sequence number of its first chunk (a spare one if empty).
  for (const [i, d] of documents.entries()) d.first = d.chunks > 0 ? chunkSeqs[d.first]! : spare[i]!;

  const analysis = analyzeTexts(records.map((r) => r.text));
  const { lengths } = analysis;

  await sql.query(
    `INSERT INTO documents (${DOCUMENT_COLUMNS})
     SELECT d.id, d.path, d.hash, d.bytes, d.chunker, d.chunks, d.tokens, d.ingested_at,
            CASE WHEN d.tags IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(d.tags)) END,
            CASE WHEN d.notes IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(d.notes)) END,
            d.meta, d.topic, d.importance, d.source, d.archived_at, d.first_seq, d.chars
     FROM json_to_recordset($1::json) AS d(id text, path text, hash text, bytes bigint, chunker text,
       chunks integer, tokens bigint, ingested_at text, tags json, notes json, meta json, topic text,
       importance text, source text, archived_at text, first_seq bigint, chars bigint)`,
    [
      JSON.stringify(
        documents.map((d) => ({
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
        })),
      ),
    ],
  );
  const chunkers = new Map(documents.map((d) => [d.id, d.chunker]));
  const seams = seamsOf(records, (id) => chunkers.get(id) ?? '');
  for (let i = 0; i < records.length; i += 2000) {
    const part = records.slice(i, i + 2000);
    await sql.query(
      `INSERT INTO chunks (seq, document, ordinal, start_at, end_at, tokens, type, tags, section, created_at, time, terms, text, seam)
       SELECT c.seq, c.document, c.ordinal, c.start_at, c.end_at, c.tokens, c.type,
              ARRAY(SELECT json_array_elements_text(c.tags)), c.section, c.created_at, c.time, c.terms, c.text, c.seam
       FROM json_to_recordset($1::json) AS c(seq bigint, document text, ordinal integer, start_at integer,
         end_at integer, tokens integer, type text, tags json, section text, created_at text, time text,
         terms integer, text text, seam text)`,
      [
        JSON.stringify(
          part.map((r, j) => ({
            seq: chunkSeqs[i + j],
            document: r.document,
            ordinal: r.ordinal,
            start_at: r.start,
            end_at: r.end,
            tokens: r.tokens,
            type: r.type,
            tags: r.tags,
            section: r.section ?? null,
            created_at: r.createdAt,
            time: r.time ?? null,
            terms: lengths[i + j],
            text: r.text,
            seam: seams[i + j],
          })),
        ),
      ],
    );
  }
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
  const terms = await indexChunks(sql, records, chunkSeqs, analysis);
  return { documents, records, seqs: chunkSeqs, terms };
}

/** What the analyzer makes of chunk texts: each one's term frequencies and length, and how many have each term. */
export interface Analysis {
  tfs: Map<string, number>[];
  lengths: number[];
  df: Map<string, number>;
}

/** Analyses chunk texts with the shared analyzer (memory/search/analyzer.ts). */
export function analyzeTexts(texts: string[]): Analysis {
  const analyzer = defaultAnalyzer();
  const tfs: Map<string, number>[] = [];
  const lengths: number[] = [];
  const df = new Map<string, number>();
  for (const text of texts) {
    const terms = analyzer.analyze(text);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    tfs.push(tf);
    lengths.push(terms.length);
  }
  return { tfs, lengths, df };
}

/** A chunk as the index and the linker name it. */
type ChunkName = Pick<ChunkRecord, 'id' | 'document' | 'ordinal'>;

/**
 * Indexes chunks whose rows are written (`seqs` their sequence numbers, `analysis` of their texts):
 * their postings, their terms in the term counts and the totals, their signatures and related links to
 * the chunks before them. Returns the distinct terms.
 */
export async function indexChunks(
  sql: Sql,
  chunks: ChunkName[],
  chunkSeqs: number[],
  analysis: Analysis,
): Promise<string[]> {
  const { tfs, lengths, df } = analysis;
  const pTerm: string[] = [];
  const pSeq: number[] = [];
  const pTf: number[] = [];
  const pLen: number[] = [];
  const flushPostings = async () => {
    if (pTerm.length === 0) return;
    await sql.query(
      'INSERT INTO postings (term, seq, tf, len) SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[])',
      [pTerm, pSeq, pTf, pLen],
    );
    pTerm.length = pSeq.length = pTf.length = pLen.length = 0;
  };
  for (const [i, tf] of tfs.entries()) {
    for (const [term, n] of tf) {
      pTerm.push(term);
      pSeq.push(chunkSeqs[i]!);
      pTf.push(n);
      pLen.push(lengths[i]!);
    }
    if (pTerm.length >= INSERT_ROWS) await flushPostings();
  }
  await flushPostings();
  const terms = [...df.keys()];
  if (terms.length > 0) {
    await sql.query('INSERT INTO term_counts (term, df) SELECT * FROM unnest($1::text[], $2::bigint[])', [
      terms,
      terms.map((t) => df.get(t)!),
    ]);
  }
  if (chunks.length > 0) {
    await sql.query('INSERT INTO totals (chunks, terms) VALUES ($1, $2)', [
      chunks.length,
      lengths.reduce((a, b) => a + b, 0),
    ]);
    await linkBatch(sql, chunks, chunkSeqs, tfs, terms);
  }
  return terms;
}

/**
 * related_to links of the batch's chunks, by the shared linker (memory/search/linker.ts): each chunk's
 * signature is its 8 best tf·idf terms among those another chunk also has; it is compared with the most
 * recent chunks whose signature shares a term, read from the signatures table.
 */
async function linkBatch(
  sql: Sql,
  records: ChunkName[],
  seqs: number[],
  tfs: Map<string, number>[],
  terms: string[],
): Promise<void> {
  const stats = await sql.query<{ term: string; df: number }>(
    'SELECT term, sum(df) AS df FROM term_counts WHERE term = ANY($1::text[]) GROUP BY term',
    [terms],
  );
  const df = new Map(stats.rows.map((r) => [r.term, r.df]));
  const total =
    (await sql.query<{ n: number | null }>('SELECT sum(chunks) AS n FROM totals')).rows[0]?.n ?? 0;
  const idf = (t: string) => bm25Idf(total, df.get(t) ?? 0);
  const signatures = tfs.map((tf) =>
    rankTerms(
      [...tf]
        .filter(([t]) => (df.get(t) ?? 0) >= 2 && !NUMBER.test(t))
        .map(([term, n]) => ({ term, score: n * idf(term) })),
      SIGNATURE_TERMS,
    ),
  );
  const wanted = [...new Set(signatures.flat())];
  const index = new SignatureIndex();
  if (wanted.length > 0) {
    const found = await sql.query<{ term: string; seq: number; document: string; ordinal: number }>(
      `SELECT t.term, s.seq, c.document, c.ordinal
       FROM unnest($1::text[]) AS t(term)
       CROSS JOIN LATERAL (SELECT count(*) AS n FROM (SELECT 1 FROM signatures WHERE term = t.term LIMIT 401) x) k
       CROSS JOIN LATERAL (SELECT seq FROM signatures WHERE term = t.term AND k.n <= 400 ORDER BY seq DESC LIMIT 48) s
       JOIN chunks c ON c.seq = s.seq
       ORDER BY s.seq`,
      [wanted],
    );
    // Existing chunks enter the index in store order with the signature terms this batch asks about.
    const byChunk = new Map<number, { document: string; ordinal: number; terms: string[] }>();
    for (const r of found.rows) {
      const c = byChunk.get(r.seq) ?? { document: r.document, ordinal: r.ordinal, terms: [] };
      c.terms.push(r.term);
      byChunk.set(r.seq, c);
    }
    for (const [seq, c] of byChunk)
      index.add({ id: `${c.document}:${c.ordinal}`, segment: String(seq), ...c });
  }
  const batch = 'new';
  const top = { idf, segmentTopTerms: () => signatures };
  const { related } = linkSegment(top, index, batch, records, () => true);
  const seqOf = new Map(records.map((r, i) => [r.id, seqs[i]!]));
  const from: number[] = [];
  const to: number[] = [];
  const strength: number[] = [];
  const seen = new Set<string>();
  for (const [fromId, toId, toSegment, s] of related) {
    const target = toSegment === batch ? seqOf.get(toId) : Number(toSegment);
    const key = `${seqOf.get(fromId)} ${target}`;
    if (target === undefined || seen.has(key)) continue;
    seen.add(key);
    from.push(seqOf.get(fromId)!);
    to.push(target);
    strength.push(s);
  }
  if (from.length > 0) {
    await sql.query(
      'INSERT INTO related (from_seq, to_seq, strength) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::float8[])',
      [from, to, strength],
    );
  }
  const sTerm: string[] = [];
  const sSeq: number[] = [];
  signatures.forEach((list, i) => {
    for (const t of list) {
      sTerm.push(t);
      sSeq.push(seqs[i]!);
    }
  });
  if (sTerm.length > 0)
    await sql.query('INSERT INTO signatures (term, seq) SELECT * FROM unnest($1::text[], $2::bigint[])', [
      sTerm,
      sSeq,
    ]);
}

/**
 * Folds the per-transaction rows of term counts (and totals) into one row per term. Every writer adds
 * rows instead of updating shared counters, so writers never wait on each other there; this keeps the
 * rows few. Each run deletes exactly the rows it read and inserts their sum, so runs at once stay exact.
 */
export async function compactCounts(sql: Sql, terms: string[]): Promise<void> {
  if (terms.length > 0) {
    await sql.query(
      `WITH gone AS (DELETE FROM term_counts WHERE term = ANY($1::text[]) RETURNING term, df)
       INSERT INTO term_counts (term, df) SELECT term, sum(df) FROM gone GROUP BY term HAVING sum(df) <> 0`,
      [terms],
    );
  }
  await sql.query(
    `WITH gone AS (DELETE FROM totals RETURNING chunks, terms)
     INSERT INTO totals (chunks, terms) SELECT sum(chunks), sum(terms) FROM gone HAVING count(*) > 0`,
  );
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
