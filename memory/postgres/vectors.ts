/**
 * Vector search in a PostgreSQL store, by pgvector. A store's embedder (`store_settings.embedder`:
 * `{spec, dimensions}`) is set when an empty store is given `--embedder` or by `rlm repair --embedder`;
 * each chunk then has a row in `vectors` (its sequence number, the embedder's spec, the vector as
 * `real[]`), written in the transaction that writes the chunk and removed with it. Plain arrays keep the
 * table readable by a server without pgvector (a copy, a restore); ranking casts them to pgvector's
 * `vector` and orders by its cosine distance, over every vector like the folder store's index, so the
 * two backends rank alike. The spec is part of each row's key: `rlm repair --embedder` writes the new
 * vectors beside the old ones and swaps in one commit, and a process still holding the old embedder
 * finds none of the new ones instead of mixing two spaces.
 */
import { isRlmError, RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import { embedderConfig } from '../search/embedders/index.ts';
import type { Embedder } from '../search/embedders/types.ts';
import type { MemorySettings } from '../types.ts';
import { acceptRows, candidateRows, candidateSql } from './candidates.ts';
import type { Db, Sql } from './db.ts';
import { lockStore } from './locks.ts';
import type { Ranked, RankedRow, RankOptions } from './search.ts';

/** Texts per request to the embedder. */
const EMBED_BATCH = 256;

/** What `store_settings.embedder` holds. */
export interface EmbedderSetting {
  spec: string;
  dimensions: number;
}

/** A store's embedder at work: the setting and the client that embeds with it. */
export interface StoreVectors extends EmbedderSetting {
  embedder: Embedder;
}

/** The store's embedder setting, or null when it has none. */
export async function embedderSetting(sql: Sql): Promise<EmbedderSetting | null> {
  const { rows } = await sql.query<{ value: EmbedderSetting }>(
    "SELECT value FROM store_settings WHERE key = 'embedder'",
  );
  return rows[0]?.value ?? null;
}

/** Sets (or with null removes) the store's embedder setting. */
export async function saveEmbedderSetting(sql: Sql, setting: EmbedderSetting | null): Promise<void> {
  if (setting === null) {
    await sql.query("DELETE FROM store_settings WHERE key = 'embedder'");
    return;
  }
  await sql.query(
    `INSERT INTO store_settings (key, value) VALUES ('embedder', $1)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    [JSON.stringify({ spec: setting.spec, dimensions: setting.dimensions })],
  );
}

/** The schema pgvector is installed in, or null when the database does not have it. */
export async function vectorSchema(sql: Sql): Promise<string | null> {
  const { rows } = await sql.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'vector'`,
  );
  return rows[0]?.schema ?? null;
}

/**
 * Makes sure the database has pgvector, creating the extension when the server offers it and the user
 * may; returns the schema it is in. BAD_INPUT in one line when the server has no pgvector, ACCESS_DENIED
 * when the user may not create it.
 */
export async function enableVectors(db: Db): Promise<string> {
  const have = await vectorSchema(db);
  if (have !== null) return have;
  const host = new URL(db.target.connectionString).host;
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*) AS n FROM pg_available_extensions WHERE name = 'vector'",
  );
  if ((rows[0]?.n ?? 0) === 0)
    throw new RlmError(
      'BAD_INPUT',
      `PostgreSQL at ${host} has no pgvector extension, so ${db.target.label} cannot keep vectors; BM25 search works without --embedder`,
      { store: db.target.label, pgvector: false },
    );
  try {
    await db
      .query('CREATE EXTENSION IF NOT EXISTS vector SCHEMA public')
      .catch(() => db.query('CREATE EXTENSION IF NOT EXISTS vector'));
  } catch (err) {
    if (!isRlmError(err, 'ACCESS_DENIED')) throw err;
    throw new RlmError(
      'ACCESS_DENIED',
      `PostgreSQL at ${host} has pgvector, but this user may not add it to the database; ask its owner to run CREATE EXTENSION vector`,
      { store: db.target.label },
    );
  }
  return (await vectorSchema(db))!;
}

/** `name` quoted as an SQL identifier. */
function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Embeds `texts` with the store's embedder, in batches, checking each vector: as long as the setting
 * says, finite numbers only. PROVIDER when the embedder fails or answers with other vectors.
 */
export async function embedTexts(
  vectors: StoreVectors,
  texts: string[],
  signal?: AbortSignal,
): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += EMBED_BATCH) {
    signal?.throwIfAborted();
    const got = await vectors.embedder.embed(texts.slice(i, i + EMBED_BATCH), signal);
    for (const v of got) {
      const vector = Array.from(v);
      if (vector.length !== vectors.dimensions || !vector.every(Number.isFinite))
        throw new RlmError(
          'PROVIDER',
          `embedder ${vectors.spec} returned a vector of ${plural(vector.length, 'dimension')} (or not all numbers); the store keeps ${vectors.dimensions}`,
        );
      out.push(vector);
    }
  }
  return out;
}

/** Writes vectors of chunks by sequence number (the caller holds their documents' locks). */
export async function insertVectors(
  sql: Sql,
  spec: string,
  seqs: number[],
  vectors: number[][],
): Promise<void> {
  for (let i = 0; i < seqs.length; i += 1000) {
    await sql.query(
      `INSERT INTO vectors (seq, embedder, embedding)
       SELECT v.seq, $1, v.e FROM json_to_recordset($2::json) AS v(seq bigint, e real[])
       ON CONFLICT (seq, embedder) DO UPDATE SET embedding = excluded.embedding`,
      [spec, JSON.stringify(seqs.slice(i, i + 1000).map((seq, j) => ({ seq, e: vectors[i + j] })))],
    );
  }
}

/**
 * The chunks nearest to `vector` (cosine similarity, best first, ties to the older chunk) that pass
 * the search filters, as BM25's ranking (search.ts) returns them: restrictions to documents or a topic
 * apply while ranking, the other filters to the best, fetched in growing rounds until `k` pass; the
 * memory settings are read in the same statement when asked. `schema` is where pgvector is installed.
 */
export async function vectorChunks(
  sql: Sql,
  schema: string,
  spec: string,
  vector: number[],
  opts: RankOptions,
): Promise<Ranked> {
  const params: unknown[] = [`[${vector.join(',')}]`, spec];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const { restrict, filters } = candidateSql(opts, p);
  const limit = p(0);
  const type = `${ident(schema)}.vector`;
  const distance = `v.embedding::${type} OPERATOR(${ident(schema)}.<=>) $1::${type}`;
  const text = `WITH s AS (SELECT v.seq, 1 - (${distance}) AS score FROM vectors v
          WHERE v.embedder = $2 ${restrict('v.seq')
            .map((r) => `AND ${r}`)
            .join(' ')}
          ORDER BY ${distance}, v.seq LIMIT ${limit}),
    r AS (${candidateRows('s', [...filters, "s.score IS NOT NULL AND s.score <> 'NaN'"])})
    SELECT (SELECT count(*) FROM s) AS scored,
      (SELECT count(*) FROM vectors WHERE embedder = $2) AS total,
      (SELECT coalesce(json_agg(r ORDER BY r.score DESC, r.seq), '[]') FROM r) AS rows,
      ${opts.settings === true ? "(SELECT value FROM store_settings WHERE key = 'memory')" : 'NULL::jsonb'} AS settings`;
  for (let depth = Math.max(opts.k, 50); ; depth *= 4) {
    params[params.length - 1] = depth;
    const { rows } = await sql.query<{
      scored: number;
      total: number;
      rows: RankedRow[];
      settings: MemorySettings | null;
    }>(text, params);
    const result = rows[0]!;
    const out = acceptRows(result.rows, opts, result.settings);
    if (out.length === opts.k || result.scored < depth || depth >= result.total)
      return { rows: out, settings: result.settings };
  }
}

/**
 * Gives a store without an embedder one, when it holds no document yet (else BAD_INPUT naming the
 * repair that adds vectors): pgvector is enabled, the embedder is asked once for a vector (one that
 * does not answer leaves the store without vector search, with a warning: BM25 works), and the setting
 * is saved while no writer runs. Returns the setting the store has then.
 */
export async function giveEmbedder(
  db: Db,
  embedder: Embedder,
  opts: { embedder?: string; onWarning?: (message: string) => void },
): Promise<EmbedderSetting | null> {
  const { label, schema } = db.target;
  const given = opts.embedder ?? embedder.name;
  const built = () =>
    new RlmError(
      'BAD_INPUT',
      `store ${label} was built without an embedder; run \`rlm repair --store URL --embedder ${given}\` to add vectors`,
    );
  const count = async (sql: Sql) =>
    (await sql.query<{ n: number }>('SELECT count(*) AS n FROM documents')).rows[0]?.n ?? 0;
  if ((await count(db)) > 0) throw built();
  await enableVectors(db);
  let setting: EmbedderSetting;
  try {
    setting = await embedderConfig(embedder, { probe: true });
  } catch (err) {
    if (!isRlmError(err, 'PROVIDER')) throw err;
    opts.onWarning?.(
      `the embedder ${embedder.name} failed (${err.message}): the store was made without vector search, and its ` +
        `documents are searchable with BM25. When the embedder works, \`rlm repair --store URL --embedder ${given}\` adds vectors.`,
    );
    return null;
  }
  return db.tx(async (sql) => {
    // Alone, as a repair: writers that opened the store without an embedder finish first, and any that
    // come after find it set (memory/postgres/locks.ts `checkEmbedder`).
    await lockStore(sql, schema);
    const now = await embedderSetting(sql);
    if (now !== null) {
      if (now.spec !== setting.spec)
        throw new RlmError(
          'BAD_INPUT',
          `store ${label} uses embedder ${now.spec}, not ${given}; run \`rlm repair --store URL --embedder ${given}\` to re-embed`,
        );
      return now;
    }
    if ((await count(sql)) > 0) throw built();
    await saveEmbedderSetting(sql, setting);
    return setting;
  });
}
