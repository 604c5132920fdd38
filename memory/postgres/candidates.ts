/**
 * The search filters of the PostgreSQL store in SQL, for the ranking of vectors (memory/postgres/
 * vectors.ts), which pgvector runs on the server: it scores chunks by sequence number, and these turn
 * the best of them into rows that pass the filters, best first. BM25 ranks in the process's copy of the
 * index, which applies the same filters itself (memory/postgres/search.ts).
 */
import type { ChunkType, MemorySettings, SearchOptions } from '../types.ts';
import { CHUNK_COLUMNS, type DocumentRow, documentOf } from './rows.ts';
import type { RankedRow, RankOptions } from './search.ts';

/** Adds a statement parameter and returns its placeholder (`$N`). */
export type Param = (value: unknown) => string;

/** The filters of `opts` in SQL, in two parts by where they apply. */
export interface CandidateSql {
  /**
   * Conditions on the sequence number column `seq` that pick few chunks (documents, a topic): applied
   * while scoring.
   */
  restrict: (seq: string) => string[];
  /** Conditions on the candidates' `c` (chunk) and `d` (document) rows: applied to the best scored. */
  filters: string[];
}

function list<T extends string>(v: T | T[] | undefined): T[] | undefined {
  if (v === undefined) return undefined;
  const l = Array.isArray(v) ? v : [v];
  return l.length > 0 ? l : undefined;
}

/** The SQL of the search filters of `opts`, its values added with `p`. */
export function candidateSql(opts: SearchOptions, p: Param): CandidateSql {
  const docs = list(opts.document);
  const wanted = list(opts.type);
  const memoriesOnly = wanted?.includes('memory') === true;
  const types = wanted?.filter((t): t is ChunkType => t !== 'memory');
  const restrictions: ((seq: string) => string)[] = [];
  if (docs) {
    const v = p(docs);
    restrictions.push((seq) => `${seq} IN (SELECT seq FROM chunks WHERE document = ANY(${v}::text[]))`);
  }
  if (opts.topic !== undefined) {
    const v = p(opts.topic);
    restrictions.push(
      (seq) =>
        `${seq} IN (SELECT c.seq FROM chunks c JOIN documents d ON d.id = c.document WHERE d.topic = ${v})`,
    );
  }
  const filters: string[] = [];
  if (opts.archived !== true) filters.push('d.archived_at IS NULL');
  if (memoriesOnly || opts.topic !== undefined) filters.push('d.topic IS NOT NULL');
  if (types && types.length > 0) filters.push(`c.type = ANY(${p(types)}::text[])`);
  if (opts.tags && opts.tags.length > 0) filters.push(`c.tags @> ${p(opts.tags)}::text[]`);
  return { restrict: (seq) => restrictions.map((r) => r(seq)), filters };
}

/**
 * SQL of the rows of the scored chunks in `scored` (a relation of `seq` and `score`) that pass
 * `filters`: each chunk row with its document's row (`doc`) and its access stats.
 */
export function candidateRows(scored: string, filters: string[]): string {
  return `SELECT s.score, c.*, row_to_json(d) AS doc, a.count AS access_count, a.last_ms AS access_last
          FROM ${scored} s CROSS JOIN LATERAL (SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.seq = s.seq) c
          CROSS JOIN LATERAL (SELECT * FROM documents d WHERE d.id = c.document) d
          LEFT JOIN LATERAL (SELECT count, last_ms FROM access a WHERE a.id = c.document || ':' || c.ordinal) a ON true
          ${filters.length > 0 ? `WHERE ${filters.join(' AND ')}` : ''}`;
}

/**
 * The first `opts.k` of `rows` (best first) that the caller's own checks keep, with this process's
 * access counts not yet written added to theirs.
 */
export function acceptRows(
  rows: RankedRow[],
  opts: RankOptions,
  settings: MemorySettings | null,
): RankedRow[] {
  const out: RankedRow[] = [];
  for (const r of rows) {
    if (opts.where && !opts.where(documentOf(r.doc as DocumentRow))) continue;
    const pending = opts.pendingAccess?.get(`${r.document}:${r.ordinal}`);
    if (pending) {
      r.access_count = (r.access_count ?? 0) + pending[0];
      r.access_last = Math.max(r.access_last ?? 0, pending[1]);
    }
    if (opts.accept && !opts.accept(r, settings)) continue;
    out.push(r);
    if (out.length === opts.k) break;
  }
  return out;
}
