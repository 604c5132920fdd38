/**
 * The change feed of a PostgreSQL store's search index. Every row of `bm25_segments`, `bm25_dead` and
 * `bm25_dropped` carries the id of the transaction that wrote it. A process that has applied every
 * change visible in snapshot S asks for the rows whose transaction is not visible in S (transaction
 * ids at or above S's xmin that S does not see): exactly the changes committed since, whatever order
 * transactions took their ids in and however long they ran. The same statement returns its own
 * snapshot, from which the next question starts. Sequence numbers or timestamps could not do this: a
 * transaction that took a smaller number may commit after one that took a bigger one.
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

/** What changed in the index since a snapshot. */
export interface Feed {
  snapshot: Snapshot;
  /** Segments added (ids). */
  added: number[];
  /** Segments merged away or rewritten (ids). */
  dropped: number[];
  /** Chunks removed (sequence numbers). */
  dead: number[];
  /**
   * The newest transaction whose `bm25_dropped` rows were pruned (0: none): a process whose snapshot's
   * xmin is not above it may have missed one and loads the index again.
   */
  horizon: number;
}

/** The feed's columns in a SELECT list, the previous snapshot's text being parameter `p`. */
export function feedColumns(p: string): string {
  const since = (table: string) =>
    `FROM ${table} WHERE xid >= pg_snapshot_xmin(${p}::pg_snapshot) AND NOT pg_visible_in_snapshot(xid, ${p}::pg_snapshot)`;
  return `pg_current_snapshot()::text AS feed_snapshot,
    ARRAY(SELECT id ${since('bm25_segments')}) AS feed_added,
    ARRAY(SELECT segment ${since('bm25_dropped')}) AS feed_dropped,
    ARRAY(SELECT seq ${since('bm25_dead')}) AS feed_dead,
    (SELECT (value #>> '{}')::bigint FROM store_settings WHERE key = 'bm25_horizon') AS feed_horizon`;
}

/** The feed columns of a row returned by a statement with {@link feedColumns}. */
export interface FeedRow {
  feed_snapshot: string;
  /** bigint[] arrive as text from the client. */
  feed_added: (string | number)[];
  feed_dropped: (string | number)[];
  feed_dead: (string | number)[];
  feed_horizon: number | null;
}

export function feedOf(row: FeedRow): Feed {
  return {
    snapshot: parseSnapshot(row.feed_snapshot),
    added: row.feed_added.map(Number),
    dropped: row.feed_dropped.map(Number),
    dead: row.feed_dead.map(Number),
    horizon: row.feed_horizon ?? 0,
  };
}
