/**
 * BM25 search in SQL, ranked like the folder store: the query is analysed by the shared analyzer, term
 * weights and typo expansion come from the shared BM25 module (memory/search/bm25.ts), and the scoring
 * sum, with the same k1, b, idf and length norm, runs over the postings table. N and the average length
 * come from the totals rows, document frequencies from the term counts, so nothing scans the store.
 */
import { RlmError } from '../../core/errors.ts';
import { defaultAnalyzer } from '../search/analyzer.ts';
import { BM25_B, BM25_K1, fuzzyCandidates, queryWeights } from '../search/bm25.ts';
import { FuzzyVocabulary } from '../search/fuzzy.ts';
import { acceptRows, candidateRows, candidateSql, type RankedRow, type RankOptions } from './candidates.ts';
import type { Sql } from './db.ts';

/** How long a process trusts its copy of the vocabulary (for typo expansion) before reading it again. */
const VOCABULARY_TTL_MS = 30_000;

/** The store's term list for typo expansion, read once and then again when stale or after a write. */
export class VocabularyCache {
  #vocabulary: FuzzyVocabulary | undefined;
  #readAt = 0;

  invalidate(): void {
    this.#vocabulary = undefined;
  }

  async get(sql: Sql): Promise<FuzzyVocabulary> {
    if (this.#vocabulary && Date.now() - this.#readAt < VOCABULARY_TTL_MS) return this.#vocabulary;
    const { rows } = await sql.query<{ term: string }>(
      'SELECT term FROM term_counts GROUP BY term HAVING sum(df) > 0',
    );
    const v = new FuzzyVocabulary();
    for (const r of rows) v.add(r.term);
    this.#vocabulary = v;
    this.#readAt = Date.now();
    return v;
  }
}

async function documentFrequencies(sql: Sql, terms: string[]): Promise<Map<string, number>> {
  if (terms.length === 0) return new Map();
  const { rows } = await sql.query<{ term: string; df: number }>(
    'SELECT term, sum(df) AS df FROM term_counts WHERE term = ANY($1::text[]) GROUP BY term',
    [terms],
  );
  return new Map(rows.filter((r) => r.df > 0).map((r) => [r.term, r.df]));
}

/**
 * Weights of the query's terms, before idf, with typo expansion for the words none of whose terms the
 * store has (as the folder store's index weighs them: memory/search/bm25.ts `queryWeights`). `df` holds
 * the document frequencies of the query's own terms.
 */
async function expandedWeights(
  sql: Sql,
  groups: string[][],
  df: Map<string, number>,
  vocabulary: VocabularyCache,
): Promise<Map<string, number>> {
  const vocab = await vocabulary.get(sql);
  const found = new Map<string, ReturnType<FuzzyVocabulary['near']>>();
  for (const g of groups) {
    if (g.some((t) => df.has(t))) continue;
    for (const { term, maxDistance } of fuzzyCandidates(g))
      found.set(`${term}\0${maxDistance}`, vocab.near(term, maxDistance));
  }
  const extra = await documentFrequencies(sql, [...new Set([...found.values()].flat().map((m) => m.term))]);
  const all = new Map([...df, ...extra]);
  return queryWeights(
    groups,
    (t) => all.get(t) ?? 0,
    (term, d) => found.get(`${term}\0${d}`) ?? [],
  );
}

/**
 * The best chunks for `query` under the search filters, best first, ties to the older chunk. One
 * statement does the whole ranking: N and the average length from the totals, each term's df and idf,
 * the BM25 sum over the postings, and the candidates' rows; only a query with a word the store does not
 * know (typo expansion) needs a second. Filters that pick few chunks (documents, a topic) restrict the
 * scoring itself; the others are applied to the best candidates, fetched in growing rounds until `k` pass.
 */
export async function rankChunks(
  sql: Sql,
  query: string,
  opts: RankOptions,
  vocabulary: VocabularyCache,
): Promise<RankedRow[]> {
  const groups = defaultAnalyzer().queryGroups(query);
  // Every query term weighs the number of words it stands for (those unknown to the store drop out).
  let weights = new Map<string, number>();
  for (const t of groups.flat()) weights.set(t, (weights.get(t) ?? 0) + 1);
  if (weights.size === 0) return [];

  const params: unknown[] = [[], [], BM25_K1, BM25_B];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const { restrict: restrictOn, filters } = candidateSql(opts, p);
  // Restrictions applied while scoring: they pick few chunks.
  const restrict = restrictOn('p.seq');
  const limit = p(0);
  // Same arithmetic, in the same order, as Bm25Index.rank: weight · idf · (k1 + 1), then tf / (tf + norm).
  const text = `WITH t AS (SELECT coalesce(sum(chunks), 0)::float8 AS n, coalesce(sum(terms), 0)::float8 AS len FROM totals),
    d AS (SELECT term, sum(df)::float8 AS df FROM term_counts WHERE term = ANY($1::text[]) GROUP BY term HAVING sum(df) > 0),
    q AS (SELECT q.term, q.w * ln(1 + (t.n - d.df + 0.5) / (d.df + 0.5)) * ($3::float8 + 1) AS w
          FROM unnest($1::text[], $2::float8[]) AS q(term, w) JOIN d ON d.term = q.term CROSS JOIN t),
    s AS (SELECT p.seq, sum(q.w * p.tf / (p.tf + $3::float8 * (1 - $4::float8 + ($4::float8 * p.len) /
            (SELECT CASE WHEN n > 0 AND len > 0 THEN len / n ELSE 1 END FROM t)))) AS score
          FROM q JOIN postings p ON p.term = q.term
          ${restrict.length > 0 ? `WHERE ${restrict.join(' AND ')}` : ''}
          GROUP BY p.seq ORDER BY score DESC, p.seq LIMIT ${limit}),
    r AS (${candidateRows('s', filters)})
    SELECT (SELECT n FROM t) AS total, (SELECT count(*) FROM s) AS scored,
      (SELECT coalesce(json_object_agg(term, df), '{}') FROM d) AS df,
      (SELECT coalesce(json_agg(r ORDER BY r.score DESC, r.seq), '[]') FROM r) AS rows`;
  let expanded = !(opts.fuzzy ?? true);
  for (let depth = Math.max(opts.k * 4, 50); ; ) {
    params[0] = [...weights.keys()];
    params[1] = [...weights.values()];
    params[params.length - 1] = depth;
    const { rows } = await sql.query<{
      total: number;
      scored: number;
      df: Record<string, number>;
      rows: RankedRow[];
    }>(text, params);
    const result = rows[0]!;
    if (!expanded) {
      expanded = true;
      const df = new Map(Object.entries(result.df));
      if (groups.some((g) => !g.some((t) => df.has(t)) && fuzzyCandidates(g).length > 0)) {
        weights = await expandedWeights(sql, groups, df, vocabulary);
        if (weights.size === 0) return [];
        continue;
      }
    }
    const out = acceptRows(result.rows, opts);
    // Enough, or the scoring returned fewer chunks than it was allowed: every candidate has been seen.
    if (out.length === opts.k || result.scored < depth || depth >= result.total) return out;
    depth *= 4;
  }
}

export function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1)
    throw new RlmError('BAD_INPUT', `k must be a positive integer, got ${k}`);
}
