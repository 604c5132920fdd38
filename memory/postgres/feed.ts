/**
 * The change feed of a PostgreSQL store's search index. Every row of `bm25_segments` and `bm25_dead`
 * carries the id of the transaction that wrote it. A process that has applied every change visible in
 * snapshot S asks for the rows whose transaction is not visible in S (transaction ids at or above S's
 * xmin that S does not see): exactly the rows committed since, whatever order transactions took their
 * ids in and however long they ran. The same statement returns its own snapshot, from which the next
 * question starts. Sequence numbers or timestamps could not do this: a transaction that took a smaller
 * number may commit after one that took a bigger one.
 *
 * The same goes for documents (a memory's archiving) and access stats, whose rows carry the transaction
 * that last wrote them (a trigger sets it on update): the copy keeps both, so recall reads no row.
 *
 * Merges delete segments, which leave no row to find. Each merge adds one to the counter
 * `store_settings.bm25_merges`; when it differs from the one a process saw last, the statement also
 * returns the ids of every segment, and a segment the process holds that its snapshot sees written
 * but that is no longer there was merged away.
 */

/** A PostgreSQL snapshot (`pg_current_snapshot()` as text: `xmin:xmax:xip,…`). */
export interface Snapshot {
  text: string;
  xmin: number;
  xmax: number;
  /** Transactions in progress when it was taken. */
  xip: number[];
}

export function parseSnapshot(text: string): Snapshot {
  const [xmin, xmax, xip] = text.split(':');
  return {
    text,
    xmin: Number(xmin),
    xmax: Number(xmax),
    xip: xip ? xip.split(',').map(Number) : [],
  };
}

/** Whether `a` was taken after `b` (sees at least what `b` sees). */
export function laterSnapshot(a: Snapshot, b: Snapshot): boolean {
  if (a.xmax !== b.xmax) return a.xmax > b.xmax;
  if (a.xmin !== b.xmin) return a.xmin > b.xmin;
  return a.xip.length < b.xip.length;
}

/** Whether transaction `xid` had ended when `s` was taken (it committed, for a row one can read). */
export function endedIn(xid: number, s: Snapshot): boolean {
  return xid < s.xmin || (xid < s.xmax && !s.xip.includes(xid));
}

/** What changed in the index since a snapshot. */
export interface Feed {
  snapshot: Snapshot;
  /** Segments added: id and the transaction that wrote them. */
  added: { id: number; xid: number }[];
  /** Chunks removed (sequence numbers). */
  dead: number[];
  /** The merge counter. */
  merges: number;
  /** Every segment's id, when the merge counter is not the one asked with. */
  segments: number[] | null;
  /** Memories written or changed since: id and when they were archived (null: not archived). */
  archived: [string, string | null][];
  /** Access stats written since: chunk id, count, last access (epoch ms). */
  access: [string, number, number][];
}

/**
 * The feed's columns in a SELECT list: the previous snapshot's text is parameter `p`, the merge counter
 * seen with it parameter `m`.
 */
export function feedColumns(p: string, m: string): string {
  const since = (table: string) =>
    `FROM ${table} WHERE xid >= pg_snapshot_xmin(${p}::pg_snapshot) AND NOT pg_visible_in_snapshot(xid, ${p}::pg_snapshot)`;
  const merges = `coalesce((SELECT (value #>> '{}')::bigint FROM store_settings WHERE key = 'bm25_merges'), 0)`;
  return `pg_current_snapshot()::text AS feed_snapshot,
    ARRAY(SELECT id || ':' || xid ${since('bm25_segments')}) AS feed_added,
    ARRAY(SELECT seq ${since('bm25_dead')}) AS feed_dead,
    ${merges} AS feed_merges,
    CASE WHEN ${merges} <> ${m}::bigint THEN ARRAY(SELECT id FROM bm25_segments) END AS feed_segments,
    (SELECT coalesce(json_agg(json_build_array(id, archived_at)), '[]') ${since('documents')} AND topic IS NOT NULL) AS feed_archived,
    (SELECT coalesce(json_agg(json_build_array(id, count, last_ms)), '[]') ${since('access')}) AS feed_access`;
}

/** The feed columns of a row returned by a statement with {@link feedColumns}. */
export interface FeedRow {
  feed_snapshot: string;
  feed_added: string[];
  /** bigint[] arrive as text from the client. */
  feed_dead: (string | number)[];
  feed_merges: number;
  feed_segments: (string | number)[] | null;
  feed_archived: [string, string | null][];
  feed_access: [string, number, number][];
}

export function feedOf(row: FeedRow): Feed {
  return {
    snapshot: parseSnapshot(row.feed_snapshot),
    added: row.feed_added.map((a) => {
      const [id, xid] = a.split(':');
      return { id: Number(id), xid: Number(xid) };
    }),
    dead: row.feed_dead.map(Number),
    merges: Number(row.feed_merges),
    segments: row.feed_segments?.map(Number) ?? null,
    archived: row.feed_archived,
    access: row.feed_access,
  };
}
