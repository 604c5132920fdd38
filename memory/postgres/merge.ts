/**
 * Keeps a PostgreSQL store's search index in few segments and free of removed text. Each write adds a
 * segment, so `remember` after `remember` leaves many tiny ones: when 8 segments of one size tier (1-7
 * chunks, 8-63, 64-511, 512-4095) are there, they are merged into one, so each chunk is merged a few times
 * at most and an ingest step's segment (thousands of chunks) never. A segment holding removed chunks is
 * rewritten without them, like the folder store's purge: their terms leave the index with their text.
 *
 * A merge reads the live chunks' text again and builds their segment with the shared code, carrying
 * their signatures over; it commits the new segments, the removal of the old ones (and one more on the
 * merge counter the change feed watches) and of the dead marks of chunks the new segments do not hold,
 * in one transaction, under an advisory lock that one merger at a time holds (the others skip). Dead
 * marks of chunks a merge still carries (removed while it ran) stay and keep applying to the new
 * segment.
 */
import type { Db, Sql } from './db.ts';
import type { LiveIndex, SegmentSize } from './live-index.ts';
import {
  buildIndexSegment,
  type LoadedSegment,
  SEGMENT_CHUNK_COLUMNS,
  type SegmentChunk,
  type SegmentChunkRow,
  segmentChunkOf,
  segmentRow,
} from './segments.ts';

/** Segments of one tier merged at once. */
const MERGE_FACTOR = 8;
/** Segments with this many live chunks or more are never merged (only rewritten when chunks die). */
const MERGE_BELOW = MERGE_FACTOR ** 4;

function tier(live: number): number {
  return Math.floor(Math.log(Math.max(1, live)) / Math.log(MERGE_FACTOR));
}

/** Groups of segments to turn into one each: full tiers, then each other segment with dead chunks. */
export function mergePlan(sizes: SegmentSize[]): number[][] {
  const tiers = new Map<number, SegmentSize[]>();
  for (const s of sizes) {
    const live = s.chunks - s.dead;
    if (live >= MERGE_BELOW) continue;
    const t = tier(live);
    tiers.set(t, [...(tiers.get(t) ?? []), s]);
  }
  const groups: number[][] = [];
  const taken = new Set<number>();
  for (const list of tiers.values()) {
    if (list.length < MERGE_FACTOR) continue;
    groups.push(list.map((s) => s.id));
    for (const s of list) taken.add(s.id);
  }
  for (const s of sizes) if (s.dead > 0 && !taken.has(s.id)) groups.push([s.id]);
  return groups;
}

/** The key of the advisory lock a merge (or `rlm repair`, which replaces every segment) holds. */
export function mergeLockKey(schema: string): string {
  return `rlm-merge:${schema}`;
}

/**
 * Counts a change of the list of segments other than segments added: the change feed then sends the
 * whole list, and each process drops the segments no longer in it (live-index.ts).
 */
export const COUNT_MERGE = `INSERT INTO store_settings (key, value) VALUES ('bm25_merges', '1')
  ON CONFLICT (key) DO UPDATE SET value = to_jsonb((store_settings.value #>> '{}')::bigint + 1)`;

/**
 * Merges what {@link mergePlan} asks for, as one transaction, unless another process is merging. The
 * process's index takes the result at once. Returns the number of segments replaced.
 */
export async function mergeSegments(db: Db, live: LiveIndex): Promise<number> {
  const groups = mergePlan(live.sizes());
  if (groups.length === 0) return 0;
  const done = await db.tx(async (sql) => {
    const { rows: lock } = await sql.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS ok',
      [mergeLockKey(db.target.schema)],
    );
    if (!lock[0]?.ok) return undefined;
    const { rows: there } = await sql.query<{ id: number }>(
      'SELECT id FROM bm25_segments WHERE id = ANY($1::bigint[])',
      [groups.flat()],
    );
    const exists = new Set(there.map((r) => Number(r.id)));
    const olds = groups
      .map((g) => g.map((id) => live.segment(id)).filter((s): s is LoadedSegment => !!s && exists.has(s.id)))
      .filter((g) => g.length > 0);
    if (olds.length === 0) return undefined;
    const made = await rebuild(sql, olds);
    const dropped = olds.flat().map((s) => s.id);
    const kept = made.flatMap((s) => s.bm25.ids.map(Number));
    const rows = made.map(segmentRow);
    const { rows: written } = await sql.query<{ id: number; xid: string }>(
      `WITH del AS (DELETE FROM bm25_segments WHERE id = ANY($5::bigint[])),
       dead AS (DELETE FROM bm25_dead WHERE seq = ANY($6::bigint[]) AND NOT seq = ANY($7::bigint[])),
       counter AS (${COUNT_MERGE})
       INSERT INTO bm25_segments (id, chunks, data, info)
       SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[])
       RETURNING id, xid::text`,
      [
        rows.map((r) => r.id),
        made.map((s) => s.bm25.ids.length),
        rows.map((r) => r.data),
        rows.map((r) => r.info),
        dropped,
        olds.flat().flatMap((s) => s.bm25.ids.map(Number)),
        kept,
      ],
    );
    const xids = new Map(written.map((r) => [Number(r.id), Number(r.xid)]));
    for (const seg of made) seg.xid = xids.get(seg.id)!;
    return { made, dropped };
  });
  if (!done) return 0;
  live.replaced(done.dropped, done.made);
  return done.dropped.length;
}

/** The new segments of `groups`: each group's chunks that still have rows and are not dead. */
async function rebuild(sql: Sql, groups: LoadedSegment[][]): Promise<LoadedSegment[]> {
  const seqs = groups.flat().flatMap((s) => s.bm25.ids.map(Number));
  const { rows } = await sql.query<SegmentChunkRow>(
    `SELECT ${SEGMENT_CHUNK_COLUMNS}
     FROM chunks c JOIN documents d ON d.id = c.document
     WHERE c.seq = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM bm25_dead x WHERE x.seq = c.seq)
     ORDER BY c.seq`,
    [seqs],
  );
  const byGroup = new Map<number, number>();
  const signature = new Map<number, string[]>();
  groups.forEach((g, i) => {
    for (const s of g) {
      s.bm25.ids.forEach((seq, j) => {
        byGroup.set(Number(seq), i);
        signature.set(Number(seq), s.info.signatures[j] ?? []);
      });
    }
  });
  const chunks: SegmentChunk[][] = groups.map(() => []);
  for (const r of rows) {
    const seq = Number(r.seq);
    chunks[byGroup.get(seq)!]!.push(segmentChunkOf(r, signature.get(seq) ?? []));
  }
  const nonEmpty = chunks.filter((c) => c.length > 0);
  if (nonEmpty.length === 0) return [];
  const { rows: ids } = await sql.query<{ id: number }>(
    "SELECT nextval('bm25_segment_seq') AS id FROM generate_series(1, $1::integer)",
    [nonEmpty.length],
  );
  return nonEmpty.map((c, i) => buildIndexSegment(Number(ids[i]!.id), c));
}
