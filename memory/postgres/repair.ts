/**
 * `rlm repair` for a PostgreSQL store. Documents and chunks are the source of truth, as the chunk
 * files are for a folder; everything else is derived and rebuilt from them: the search index segments
 * and related links (built and linked in store order as the writes do, memory/postgres/write.ts), each
 * chunk's BM25 length, each document's tokens for grep (grams.ts), order and token count; hand-made
 * links and access stats of chunks that are gone are removed, and vectors are added where missing,
 * rebuilt with another embedder, or removed. A document whose chunks are not all there (rows removed by hand) is dropped,
 * once confirmed, as the folder repair drops one whose chunks are unreadable.
 *
 * It runs while the store is in use. Vectors are embedded first, in small transactions beside the
 * store's own (a remote embedder may take long). The rest is one transaction under the store-wide
 * lock (memory/postgres/locks.ts) and the merge lock (merge.ts): writers wait for it and find everything
 * rebuilt; readers keep ranking with their copy of the index as it was until it commits, then the change
 * feed tells them the segments were replaced (as after a merge) and they read the new ones.
 */
import { isRlmError, RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import { createEmbedder, embedderConfig } from '../search/embedders/index.ts';
import type { RepairOptions, RepairReport } from '../types.ts';
import type { Db, Sql } from './db.ts';
import { gramsByDocument, saveGrams } from './grams.ts';
import { LiveIndex } from './live-index.ts';
import { lockStore } from './locks.ts';
import { COUNT_MERGE, mergeLockKey } from './merge.ts';
import { newIndexSegment, SEGMENT_CHUNK_COLUMNS, type SegmentChunkRow, segmentRow } from './segments.ts';
import {
  type EmbedderSetting,
  embedderSetting,
  embedTexts,
  enableVectors,
  insertVectors,
  type StoreVectors,
  saveEmbedderSetting,
} from './vectors.ts';
import { deleteDocuments, forgetAccess, lockDocuments } from './write.ts';

/** The embedder spec that removes vector search. */
const NO_EMBEDDER = 'none';
/** Document bytes per rebuilt batch: about what an ingest step writes. */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Chunks embedded per transaction while the store is in use. */
const EMBED_CHUNKS = 256;

type Dropped = RepairReport['dropped'];

/** Documents whose chunk rows are not ordinals 0 to `chunks - 1`. */
async function brokenDocuments(sql: Sql): Promise<Dropped> {
  const { rows } = await sql.query<{ id: string; path: string | null }>(
    `SELECT d.id, d.path FROM documents d LEFT JOIN chunks c ON c.document = d.id
     GROUP BY d.id, d.path, d.chunks
     HAVING count(c.seq) <> d.chunks OR coalesce(min(c.ordinal), 0) <> 0
        OR coalesce(max(c.ordinal), -1) <> d.chunks - 1
     ORDER BY d.id`,
  );
  return rows;
}

/** Repairs the store `db` holds (already at this code's schema version). */
export async function repairTables(db: Db, opts: RepairOptions): Promise<RepairReport> {
  const actions: string[] = [];
  const dropped = await brokenDocuments(db);
  if (dropped.length > 0 && !(await opts.confirm?.(dropped))) {
    const totals = await counts(db);
    for (const d of dropped)
      actions.push(
        `would drop document ${d.id}${d.path ? ` (${d.path})` : ''}: some of its chunks are missing`,
      );
    return { segments: 0, ...totals, actions, dropped, applied: false };
  }
  const current = await embedderSetting(db);
  const target = await targetVectors(db, current, opts);
  let report: RepairReport;
  try {
    if (target) {
      // Asked for by name, the store's own embedder embeds every chunk again, as in a folder.
      const again = opts.embedder !== undefined && target.spec === current?.spec;
      const added = await embedChunks(db, target, again);
      if (again) actions.push(`rebuilt vectors with ${target.spec}`);
      else if (added > 0 && target.spec === current?.spec)
        actions.push(`embedded ${plural(added, 'chunk')} that had no vector with ${target.spec}`);
    }
    report = await db.tx(async (sql) => {
      await lockStore(sql, db.target.schema);
      return rebuild(sql, { dropped, current, target, actions: [...actions], schema: db.target.schema });
    });
  } catch (err) {
    // Vectors of a new embedder are of no use until the swap the rebuild commits: take them out again.
    if (target && target.spec !== current?.spec)
      await db.query('DELETE FROM vectors WHERE embedder = $1', [target.spec]).catch(() => undefined);
    throw target && isRlmError(err, 'PROVIDER') ? embedderFailed(target.spec, err) : err;
  }
  await db.query('ANALYZE documents, chunks, bm25_segments, related, vectors').catch(() => undefined);
  return report;
}

/** The embedder the store has after the repair: asked for, kept, or none. */
async function targetVectors(
  db: Db,
  current: EmbedderSetting | null,
  opts: RepairOptions,
): Promise<StoreVectors | null> {
  const spec = opts.embedder ?? current?.spec;
  if (spec === undefined || spec === NO_EMBEDDER) return null;
  const embedder = createEmbedder(spec, opts.env);
  if (embedder.name === current?.spec) return { ...current, embedder };
  // A new embedder is of use only where vectors can be searched.
  await enableVectors(db);
  try {
    return { ...(await embedderConfig(embedder, { probe: true })), embedder };
  } catch (err) {
    throw isRlmError(err, 'PROVIDER') ? embedderFailed(embedder.name, err) : err;
  }
}

function embedderFailed(spec: string, err: unknown): RlmError {
  return new RlmError(
    'PROVIDER',
    `repair: the embedder ${spec} failed (${(err as Error).message}); nothing was changed. ` +
      `Try again when it works, or \`rlm repair --embedder ${NO_EMBEDDER}\` to go on without vectors`,
    {},
    { cause: err },
  );
}

/**
 * Chunks that have no vector of the embedder `spec` (with `all`, every chunk), `limit` at most, after
 * sequence number `after`.
 */
async function unembedded(
  sql: Sql,
  spec: string,
  after: number,
  limit: number,
  all = false,
): Promise<{ seq: number; document: string; text: string }[]> {
  const { rows } = await sql.query<{ seq: number; document: string; text: string }>(
    `SELECT c.seq, c.document, c.text FROM chunks c
     WHERE c.seq > $2 AND ($4 OR NOT EXISTS (SELECT 1 FROM vectors v WHERE v.seq = c.seq AND v.embedder = $1))
     ORDER BY c.seq LIMIT $3`,
    [spec, after, limit, all],
  );
  return rows;
}

/**
 * Embeds the chunks without a vector of `target`'s embedder (with `all`, every chunk, replacing the
 * vectors in place), a batch per transaction beside the store's writers: each batch locks its documents
 * shared, so a writer replacing one waits, and a chunk removed meanwhile gets no vector. Returns how
 * many were written.
 */
async function embedChunks(db: Db, target: StoreVectors, all: boolean): Promise<number> {
  let added = 0;
  for (let after = 0; ; ) {
    const batch = await unembedded(db, target.spec, after, EMBED_CHUNKS, all);
    if (batch.length === 0) return added;
    after = batch[batch.length - 1]!.seq;
    const vectors = await embedTexts(
      target,
      batch.map((c) => c.text),
    );
    await db.tx(async (sql) => {
      await lockDocuments(sql, db.target.schema, [...new Set(batch.map((c) => c.document))], true);
      const { rows } = await sql.query<{ seq: number }>(
        'SELECT seq FROM chunks WHERE seq = ANY($1::bigint[])',
        [batch.map((c) => c.seq)],
      );
      const live = new Set(rows.map((r) => r.seq));
      const kept = batch.flatMap((c, i) => (live.has(c.seq) ? [i] : []));
      await insertVectors(
        sql,
        target.spec,
        kept.map((i) => batch[i]!.seq),
        kept.map((i) => vectors[i]!),
      );
      added += kept.length;
    });
  }
}

/** Rows of the derived tables before the rebuild, to say what changed. */
interface Before {
  segments: number;
  indexed: number;
}

async function before(sql: Sql): Promise<Before> {
  const { rows } = await sql.query<Before>(
    `SELECT (SELECT count(*) FROM bm25_segments) AS segments,
            (SELECT coalesce(sum(chunks), 0) FROM bm25_segments) AS indexed`,
  );
  return rows[0]!;
}

async function counts(sql: Sql): Promise<{ documents: number; chunks: number }> {
  const { rows } = await sql.query<{ documents: number; chunks: number }>(
    'SELECT (SELECT count(*) FROM documents) AS documents, (SELECT count(*) FROM chunks) AS chunks',
  );
  return rows[0]!;
}

/** A chunk row as the rebuild reads it: what a segment is built of, and what it checks. */
interface ChunkRow extends SegmentChunkRow {
  start_at: number;
  end_at: number;
  terms: number;
  chunker: string;
  grams: string | null;
}

/** Everything but the vectors' embedding, in the repair's transaction, under the store-wide lock. */
async function rebuild(
  sql: Sql,
  plan: {
    dropped: Dropped;
    current: EmbedderSetting | null;
    target: StoreVectors | null;
    actions: string[];
    schema: string;
  },
): Promise<RepairReport> {
  const { actions } = plan;
  // What is broken now must be what was confirmed: a writer may have changed the store meanwhile.
  const broken = await brokenDocuments(sql);
  const confirmed = new Set(plan.dropped.map((d) => d.id));
  if (broken.some((d) => !confirmed.has(d.id)))
    throw new RlmError('BAD_INPUT', 'the store changed while repair ran; nothing was changed, run it again');
  const gone = broken.map((d) => d.id);
  await deleteDocuments(sql, gone);
  await forgetAccess(sql, gone);
  for (const d of broken)
    actions.push(`dropped document ${d.id}${d.path ? ` (${d.path})` : ''}: some of its chunks were missing`);

  const old = await before(sql);
  // Alone with the segments: no merge runs meanwhile, and one waiting finds its segments gone.
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [mergeLockKey(plan.schema)]);
  for (const table of ['bm25_segments', 'bm25_dead', 'related']) await sql.query(`DELETE FROM ${table}`);
  const live = LiveIndex.empty();
  const fixed = { terms: 0, grams: 0 };
  let chunks = 0;
  let segments = 0;
  for (let after = -1; ; ) {
    const { rows: docs } = await sql.query<{ id: string; bytes: number; first_seq: number }>(
      'SELECT id, bytes, first_seq FROM documents WHERE first_seq > $1 ORDER BY first_seq LIMIT 1000',
      [after],
    );
    if (docs.length === 0) break;
    const page: typeof docs = [];
    for (let bytes = 0, i = 0; i < docs.length && bytes < BATCH_BYTES; i++) {
      page.push(docs[i]!);
      bytes += docs[i]!.bytes;
    }
    after = page[page.length - 1]!.first_seq;
    const { rows } = await sql.query<ChunkRow>(
      `SELECT ${SEGMENT_CHUNK_COLUMNS}, c.start_at, c.end_at, c.terms, d.chunker, d.grams
       FROM chunks c JOIN documents d ON d.id = c.document
       WHERE c.document = ANY($1::text[]) ORDER BY array_position($1::text[], c.document), c.ordinal`,
      [page.map((d) => d.id)],
    );
    fixed.grams += await fixGrams(sql, page, rows);
    if (rows.length === 0) continue;
    const seg = await newIndexSegment(sql, rows, () => []);
    const related = live.link(seg);
    const row = segmentRow(seg);
    await sql.query(
      `WITH s AS (INSERT INTO bm25_segments (id, chunks, data, info) VALUES ($1, $2, $3, $4))
       INSERT INTO related (from_seq, to_seq, strength) SELECT * FROM unnest($5::bigint[], $6::bigint[], $7::float8[])`,
      [
        row.id,
        rows.length,
        row.data,
        row.info,
        related.map((r) => r[0]),
        related.map((r) => r[1]),
        related.map((r) => r[2]),
      ],
    );
    segments++;
    chunks += rows.length;
    // Each chunk's BM25 length (the segment's), where the row says otherwise.
    const lengths = seg.bm25.lengths;
    const changed = rows.flatMap((r, i) => (r.terms !== lengths[i] ? [i] : []));
    fixed.terms += changed.length;
    if (changed.length > 0)
      await sql.query(
        'UPDATE chunks c SET terms = u.terms FROM unnest($1::bigint[], $2::integer[]) AS u(seq, terms) WHERE c.seq = u.seq',
        [changed.map((i) => rows[i]!.seq), changed.map((i) => lengths[i])],
      );
  }
  // Every process's copy drops the old segments and reads these, as after a merge.
  await sql.query(COUNT_MERGE);
  const { rows: now } = await sql.query<{ related: number }>('SELECT count(*) AS related FROM related');
  const { related } = now[0]!;
  if (old.indexed !== chunks)
    actions.push(`search index: ${plural(chunks, 'chunk')}, it held ${plural(old.indexed, 'chunk')}`);
  if (fixed.terms > 0) actions.push(`fixed the BM25 length of ${plural(fixed.terms, 'chunk')}`);
  if (fixed.grams > 0) actions.push(`fixed grep's tokens of ${plural(fixed.grams, 'document')}`);
  actions.push(
    `rebuilt the search index (${plural(segments, 'segment')}, there were ${old.segments}), grep's tokens and related links of ${plural(chunks, 'chunk')} (${plural(related, 'related link')})`,
  );
  await fixDocuments(sql, actions);
  await fixVectors(sql, plan);
  return { segments: 0, ...(await counts(sql)), actions, dropped: broken, applied: true };
}

/**
 * Sets the grep tokens (grams.ts) of a page of documents whose chunks are `rows` (each document's in
 * ordinal order) where they differ from what the chunks make; returns how many were fixed.
 */
async function fixGrams(sql: Sql, page: { id: string }[], rows: ChunkRow[]): Promise<number> {
  const ids: string[] = [];
  const grams: string[] = [];
  const { rows: empty } = await sql.query<{ id: string; grams: string | null }>(
    'SELECT id, grams FROM documents WHERE id = ANY($1::text[]) AND chunks = 0',
    [page.map((d) => d.id)],
  );
  for (const e of empty)
    if (e.grams !== '') {
      ids.push(e.id);
      grams.push('');
    }
  for (const [id, d] of gramsByDocument(rows)) {
    if (d.grams === d.row.grams) continue;
    ids.push(id);
    grams.push(d.grams);
  }
  if (ids.length > 0) await saveGrams(sql, ids, grams);
  return ids.length;
}

/** Documents' order and token counts, links and access stats of chunks that are gone. */
async function fixDocuments(sql: Sql, actions: string[]): Promise<void> {
  const order = await sql.query(
    `UPDATE documents d SET first_seq = m.first FROM (SELECT document, min(seq) AS first FROM chunks GROUP BY document) m
     WHERE m.document = d.id AND d.first_seq <> m.first RETURNING d.id`,
  );
  if (order.rows.length > 0)
    actions.push(`fixed the place in store order of ${plural(order.rows.length, 'document')}`);
  const tokens = await sql.query(
    `UPDATE documents d SET tokens = m.tokens FROM (SELECT document, sum(tokens) AS tokens FROM chunks GROUP BY document) m
     WHERE m.document = d.id AND d.tokens <> m.tokens RETURNING d.id`,
  );
  if (tokens.rows.length > 0)
    actions.push(`fixed the token count of ${plural(tokens.rows.length, 'document')}`);
  const links = await sql.query(
    `DELETE FROM manual_links l WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document = l.from_doc AND c.ordinal = l.from_ordinal)
        OR NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document = l.to_doc AND c.ordinal = l.to_ordinal) RETURNING 1`,
  );
  if (links.rows.length > 0)
    actions.push(`removed ${plural(links.rows.length, 'hand-made link')} to or from chunks that are gone`);
  // An access id is DOCUMENT:ORDINAL, the document id possibly holding ':' itself.
  const access = await sql.query(
    `DELETE FROM access a WHERE NOT EXISTS (
       SELECT 1 FROM chunks c WHERE c.document = left(a.id, length(a.id) - position(':' IN reverse(a.id)))
         AND c.ordinal::text = reverse(split_part(reverse(a.id), ':', 1))) RETURNING 1`,
  );
  if (access.rows.length > 0)
    actions.push(`removed the access stats of ${plural(access.rows.length, 'chunk')} that are gone`);
}

/**
 * The vectors of the embedder the store keeps (written beside the store's until now): the chunks still
 * without one are embedded, vectors of any other embedder go, and the setting names the embedder.
 */
async function fixVectors(
  sql: Sql,
  plan: { current: EmbedderSetting | null; target: StoreVectors | null; actions: string[] },
): Promise<void> {
  const { current, target, actions } = plan;
  if (target === null) {
    const { rows } = await sql.query('DELETE FROM vectors RETURNING 1');
    if (current !== null) {
      await saveEmbedderSetting(sql, null);
      actions.push(`removed the embedder ${current.spec} and its vectors`);
    } else if (rows.length > 0) actions.push(`removed ${plural(rows.length, 'vector')} of no embedder`);
    return;
  }
  for (let after = 0; ; ) {
    const batch = await unembedded(sql, target.spec, after, EMBED_CHUNKS);
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.seq;
    const vectors = await embedTexts(
      target,
      batch.map((c) => c.text),
    );
    await insertVectors(
      sql,
      target.spec,
      batch.map((c) => c.seq),
      vectors,
    );
  }
  const { rows } = await sql.query('DELETE FROM vectors WHERE embedder <> $1 RETURNING 1', [target.spec]);
  if (current?.spec === target.spec) {
    if (rows.length > 0) actions.push(`removed ${plural(rows.length, 'vector')} of other embedders`);
    return;
  }
  await saveEmbedderSetting(sql, target);
  actions.push(`rebuilt vectors with ${target.spec}`);
}
