/**
 * Search in a PostgreSQL store: ranked by the process's copy of the index (live-index.ts), which is the
 * shared BM25 over the stored segments, so the ranking is the folder store's (same analyzer, scores and
 * typo expansion). Filters on what a chunk always is (document, type, tags, topic) run in the ranking;
 * one statement then reads the best chunks' rows and, with them, the changes committed since the copy's
 * snapshot. When there were any, the copy takes them and the search ranks again, so it sees every commit
 * made before it began; filters on what can change (archiving, weights, the caller's own) run on the
 * rows, fetched in growing rounds until `k` pass.
 */
import { RlmError } from '../../core/errors.ts';
import type { MemorySettings, SearchOptions } from '../types.ts';
import type { Db } from './db.ts';
import { type FeedRow, feedColumns } from './feed.ts';
import type { ChunkInfo, LiveIndex } from './live-index.ts';
import { type ChunkRow, DOCUMENT_COLUMNS, type DocumentRow, documentOf } from './rows.ts';

/** The document fields a ranked chunk carries (all of them when the search has a `where` test). */
export type RankedDocument = Pick<
  DocumentRow,
  'id' | 'path' | 'tags' | 'topic' | 'importance' | 'source' | 'ingested_at' | 'archived_at'
>;

/** The chunk fields a ranked chunk carries. */
type RankedChunk = Pick<ChunkRow, 'seq' | 'document' | 'ordinal' | 'tokens' | 'type' | 'tags' | 'text'>;

/** One ranked chunk with its row and its document's row. */
export interface RankedRow extends RankedChunk {
  score: number;
  doc: RankedDocument;
  /** The chunk's access stats (null when never read). */
  access_count: number | null;
  access_last: number | null;
}

const FULL_DOC_COLUMNS = DOCUMENT_COLUMNS.split(', ');

export interface RankOptions extends SearchOptions {
  k: number;
  /** A test on each candidate's rows (after the other filters), with the memory settings when read. */
  accept?: (row: RankedRow, settings: MemorySettings | null) => boolean;
  /** Read the memory settings in the same statement. */
  settings?: boolean;
  /** Reads of chunks (by id) this process counted but has not written yet: added to the rows' stats. */
  pendingAccess?: ReadonlyMap<string, readonly [count: number, lastMs: number]>;
  /**
   * Take what can change (archiving, access stats) from the copy, which the feed keeps current, when
   * it also holds the candidates' text (memories): the statement then reads the feed alone (recall).
   */
  fromCopy?: boolean;
}

/** Ranked chunks, best first, with the memory settings when they were asked for. */
export interface Ranked {
  rows: RankedRow[];
  settings: MemorySettings | null;
}

/** A row of the ranking statement: a candidate's columns, or the feed's. */
interface RankStatementRow extends FeedRow {
  seq: number | null;
  text: string | null;
  archived_at: string | null;
  access_count: number | null;
  access_last: number | null;
  settings: MemorySettings | null;
  [column: `d_${string}`]: unknown;
}

/**
 * The ranking statement: for each candidate what can change or is not kept in the copy (the text of
 * a chunk that is not a memory's, its document's archiving, `access`: its access stats, `full`: every
 * column of its document, for a `where` test), then one row with the feed and, when asked, the memory
 * settings. Each row carries either, so nothing is sent or parsed twice. A candidate whose chunk is
 * gone has no row. The lateral subqueries keep every plan, generic ones included, to index lookups of
 * the few candidates.
 */
function statement(opts: { settings: boolean; access: boolean; full: boolean }): string {
  const doc = opts.full ? FULL_DOC_COLUMNS.map((c) => `, d.${c} AS d_${c}`).join('') : '';
  const columns = 5 + (opts.full ? FULL_DOC_COLUMNS.length : 0);
  return `SELECT s.seq, c.text, d.archived_at${doc}, a.count AS access_count, a.last_ms AS access_last,
      NULL::text AS feed_snapshot, NULL::text[] AS feed_added, NULL::bigint[] AS feed_dead,
      NULL::bigint AS feed_merges, NULL::bigint[] AS feed_segments, NULL::json AS feed_archived,
      NULL::json AS feed_access, NULL::jsonb AS settings
    FROM unnest($3::bigint[], $4::text[], $5::boolean[], $6::text[]) AS s(seq, document, read_text, id)
    CROSS JOIN LATERAL (SELECT CASE WHEN s.read_text THEN c.text END AS text FROM chunks c WHERE c.seq = s.seq LIMIT 1) c
    CROSS JOIN LATERAL (SELECT * FROM documents d WHERE d.id = s.document LIMIT 1) d
    LEFT JOIN LATERAL (SELECT count, last_ms FROM access a WHERE ${opts.access ? 'a.id = s.id' : 'false'} LIMIT 1) a ON true
    UNION ALL
    SELECT ${Array(columns).fill('NULL').join(', ')}, ${feedColumns('$1', '$2')},
      ${opts.settings ? "(SELECT value FROM store_settings WHERE key = 'memory')" : 'NULL::jsonb'}`;
}

/**
 * A candidate's row as the copy knows it (it reflects the statement's snapshot once the feed is
 * applied); none for a chunk removed meanwhile or one whose writer has not committed.
 */
function fromCopy(live: LiveIndex, seq: string, c: ChunkInfo): RankStatementRow | undefined {
  if (live.isDead(seq) || !live.committed(seq)) return undefined;
  const access = live.access(`${c.document}:${c.ordinal}`);
  return {
    seq: Number(seq),
    text: null,
    archived_at: live.archivedAt(c.document),
    access_count: access?.[0] ?? null,
    access_last: access?.[1] ?? null,
  } as RankStatementRow;
}

/** A candidate as {@link RankedRow}: what the copy keeps of it, with what its row says. */
function candidate(seq: number, c: ChunkInfo, r: RankStatementRow, full: boolean): Omit<RankedRow, 'score'> {
  const doc: RankedDocument = full
    ? (Object.fromEntries(FULL_DOC_COLUMNS.map((k) => [k, r[`d_${k}`]])) as unknown as DocumentRow)
    : {
        id: c.document,
        path: c.facts.path,
        tags: c.facts.tags,
        topic: c.topic,
        importance: c.facts.memory?.importance ?? null,
        source: c.facts.memory?.source ?? null,
        ingested_at: c.facts.created,
        archived_at: r.archived_at,
      };
  return {
    seq,
    document: c.document,
    ordinal: c.ordinal,
    tokens: c.tokens,
    type: c.type,
    tags: c.tags,
    text: c.text ?? r.text ?? '',
    doc,
    access_count: r.access_count,
    access_last: r.access_last,
  };
}

/**
 * The best chunks for `query` under the search filters, best first (ties as the shared index breaks
 * them), with the memory settings when asked.
 */
export async function rankChunks(db: Db, live: LiveIndex, query: string, opts: RankOptions): Promise<Ranked> {
  await live.ready(db);
  const filter = chunkFilter(live, opts);
  const fuzzy = opts.fuzzy ?? true;
  const full = opts.where !== undefined;
  const access = opts.settings === true;
  const text = statement({ settings: opts.settings === true, access, full });
  const feedOnly = `SELECT ${feedColumns('$1', '$2')},
    ${opts.settings === true ? "(SELECT value FROM store_settings WHERE key = 'memory')" : 'NULL::jsonb'} AS settings`;
  // Room for candidates the tests on rows turn down (a memory faded out, one outside the dates asked).
  let depth = opts.accept || opts.where ? opts.k + Math.max(5, Math.ceil(opts.k / 5)) : opts.k;
  let fresh = false;
  for (;;) {
    // What the copy reflects, taken with the ranking: the feed says what the ranking could not see.
    const since = live.since;
    const ranked = live.search(query, depth, filter, fuzzy);
    const infos = ranked.map((h) => live.chunk(h.id)!);
    const copy = opts.fromCopy === true && !full && infos.every((c) => c.text !== null);
    const { rows } = copy
      ? await db.query<RankStatementRow>(
          feedOnly,
          since,
          `rlm_feed${opts.settings === true ? '_settings' : ''}`,
        )
      : await db.query<RankStatementRow>(
          text,
          [
            ...since,
            ranked.map((h) => Number(h.id)),
            infos.map((c) => c.document),
            infos.map((c) => c.text === null),
            infos.map((c) => `${c.document}:${c.ordinal}`),
          ],
          `rlm_rank${opts.settings === true ? '_settings' : ''}${full ? '_full' : ''}`,
        );
    const result = rows.find((r) => r.feed_snapshot !== null)!;
    const state = await live.apply(db, result);
    if (!fresh) {
      // Not yet known to hold every commit made before the search began: ask again.
      if (state === 'stale') continue;
      fresh = true;
      // The copy took changes: rank again on it.
      if (state === 'changed') continue;
    }
    const bySeq = new Map(rows.filter((r) => r !== result).map((r) => [Number(r.seq), r]));
    const out: RankedRow[] = [];
    for (const [i, h] of ranked.entries()) {
      // No row: removed since the ranking, or written by a transaction of this process not yet committed.
      const found = copy ? fromCopy(live, h.id, infos[i]!) : bySeq.get(Number(h.id));
      if (!found) continue;
      const r = candidate(Number(h.id), infos[i]!, found, full);
      if (opts.archived !== true && r.doc.archived_at !== null) continue;
      // With a `where` test the statement read every column of the document.
      if (opts.where && !opts.where(documentOf(r.doc as DocumentRow))) continue;
      const row: RankedRow = { ...r, score: h.score };
      const pending = opts.pendingAccess?.get(`${r.document}:${r.ordinal}`);
      if (pending) {
        row.access_count = (row.access_count ?? 0) + pending[0];
        row.access_last = Math.max(row.access_last ?? 0, pending[1]);
      }
      if (opts.accept && !opts.accept(row, result.settings)) continue;
      out.push(row);
      if (out.length === opts.k) return { rows: out, settings: result.settings };
    }
    // The ranking returned fewer chunks than it was allowed: every candidate has been seen.
    if (ranked.length < depth) return { rows: out, settings: result.settings };
    depth *= 4;
  }
}

/** The filters on what a chunk always is, for the ranking. */
function chunkFilter(live: LiveIndex, opts: SearchOptions): (seq: string) => boolean {
  const docs = set(opts.document);
  const wanted = set(opts.type);
  // `memory` is not a chunk type but a kind of document: it keeps memories, the rest filter chunks.
  const memoriesOnly = wanted?.delete('memory') === true;
  const types = wanted && wanted.size > 0 ? wanted : undefined;
  const tags = opts.tags && opts.tags.length > 0 ? opts.tags : undefined;
  const topic = opts.topic;
  return (seq) => {
    const c: ChunkInfo | undefined = live.chunk(seq);
    if (!c) return false;
    if (docs && !docs.has(c.document)) return false;
    if ((memoriesOnly || topic !== undefined) && c.topic === null) return false;
    if (topic !== undefined && c.topic !== topic) return false;
    if (types && !types.has(c.type)) return false;
    if (tags && !tags.every((t) => c.tags.includes(t))) return false;
    return true;
  };
}

function set<T extends string>(v: T | T[] | undefined): Set<T> | undefined {
  if (v === undefined) return undefined;
  const l = Array.isArray(v) ? v : [v];
  return l.length > 0 ? new Set(l) : undefined;
}

export function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1)
    throw new RlmError('BAD_INPUT', `k must be a positive integer, got ${k}`);
}
