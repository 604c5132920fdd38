/**
 * A process's copy of a PostgreSQL store's search index: the stored BM25 segments (segments.ts) in the
 * shared BM25 index (memory/search/bm25.ts), so search ranks exactly as the folder store does, and what
 * filters need of each chunk. It is read once, on first use, then kept current from the change feed
 * (feed.ts): each search asks, in the same statement that reads its hits' rows, for the changes
 * committed since the snapshot the copy reflects, and ranks again when there were any. So a search sees
 * every commit made before it began, from any process, for the price of that one statement.
 */
import { RlmError } from '../../core/errors.ts';
import { type Bm25Index, Bm25Index as Index, type ScoredId } from '../search/bm25.ts';
import { linkSegment, SignatureIndex } from '../search/linker.ts';
import type { ChunkType } from '../types.ts';
import type { Db, Sql } from './db.ts';
import {
  endedIn,
  type Feed,
  type FeedRow,
  feedColumns,
  feedOf,
  laterSnapshot,
  parseSnapshot,
  type Snapshot,
} from './feed.ts';
import { type DocFacts, type LoadedSegment, parseSegmentRow, type SegmentRow } from './segments.ts';

/** Dead marks and dropped ids kept beyond the live chunks' number before the index is read again. */
const RELOAD_SLACK = 100_000;

/** What a search filter needs of a chunk. */
export interface ChunkInfo {
  /** The segment that holds it. */
  segment: number;
  document: string;
  ordinal: number;
  /** The memory's topic; null for a chunk of another document. */
  topic: string | null;
  type: ChunkType;
  tags: string[];
  tokens: number;
  /** What its document always is (shared by the document's chunks). */
  facts: DocFacts;
  /** A memory's text; null for another chunk (its text is read with its row). */
  text: string | null;
}

/** A segment's size as merging sees it. */
export interface SegmentSize {
  id: number;
  chunks: number;
  /** Its chunks that were removed. */
  dead: number;
}

/** One consistent copy of the index; a reload builds a new one and swaps it in. */
class IndexState {
  readonly bm25: Bm25Index = new Index();
  readonly segments = new Map<number, LoadedSegment>();
  readonly chunks = new Map<string, ChunkInfo>();
  /** Removed chunks (sequence numbers as text, as the segments name them). */
  readonly dead = new Set<string>();
  /** Segments seen dropped: a feed read earlier must not bring one back. */
  readonly dropped = new Set<number>();
  /** When a memory was archived (absent: not archived), and the snapshot that said so. */
  readonly archived = new Map<string, { at: string | null; from: Snapshot }>();
  /** Access stats by chunk id as the store holds them (counts only grow, so the largest seen is right). */
  readonly access = new Map<string, [count: number, lastMs: number]>();
  /** The linker's signatures, built on the first write. */
  signatures: SignatureIndex | undefined;
  readonly signed = new Set<string>();
  snapshot: Snapshot;
  /** The merge counter seen with {@link snapshot}. */
  merges: number;

  constructor(snapshot: Snapshot, merges: number) {
    this.snapshot = snapshot;
    this.merges = merges;
  }

  /** Adds a stored segment (`sign`: its signatures too, once the linker's index exists). */
  add(seg: LoadedSegment, sign = true): void {
    this.bm25.addSegment(String(seg.id), seg.bm25);
    this.segments.set(seg.id, seg);
    const ids = seg.bm25.ids;
    let i = 0;
    for (const [document, count, topic, facts] of seg.info.docs) {
      for (let ordinal = 0; ordinal < count; ordinal++, i++) {
        this.chunks.set(ids[i]!, {
          segment: seg.id,
          document,
          ordinal,
          topic,
          type: seg.info.types[i]!,
          tags: seg.info.tags[i]!,
          tokens: seg.info.tokens[i]!,
          facts,
          text: seg.info.texts[i] ?? null,
        });
      }
    }
    if (sign && this.signatures) this.sign(seg);
  }

  remove(id: number): boolean {
    const seg = this.segments.get(id);
    if (!seg) return false;
    this.bm25.removeSegment(String(id));
    this.segments.delete(id);
    // Dead marks stay: a merge that had not seen a chunk's removal carries the chunk into its segment.
    for (const seq of seg.bm25.ids) this.chunks.delete(seq);
    return true;
  }

  /** Archiving and access stats a feed (or the load) read in snapshot `from`. */
  note(from: Snapshot, archived: [string, string | null][], access: [string, number, number][]): void {
    for (const [id, at] of archived) {
      const seen = this.archived.get(id);
      if (!seen || !laterSnapshot(seen.from, from)) this.archived.set(id, { at, from });
    }
    for (const [id, count, last] of access) {
      const seen = this.access.get(id);
      this.access.set(id, seen ? [Math.max(seen[0], count), Math.max(seen[1], last)] : [count, last]);
    }
  }

  /** Adds a segment's signatures to the linker's index (chunks it already has are skipped). */
  sign(seg: LoadedSegment): void {
    const ids = seg.bm25.ids;
    for (let i = 0; i < ids.length; i++) {
      const seq = ids[i]!;
      if (this.signed.has(seq)) continue;
      const c = this.chunks.get(seq)!;
      this.signed.add(seq);
      this.signatures!.add({
        id: seq,
        segment: String(seg.id),
        document: c.document,
        ordinal: c.ordinal,
        terms: [...seg.info.signatures[i]!],
      });
    }
  }
}

export class LiveIndex {
  #state: IndexState | undefined;
  #loading: Promise<IndexState> | undefined;
  /** Segments being read, so concurrent searches read each once. */
  readonly #fetching = new Map<number, Promise<LoadedSegment | undefined>>();

  /**
   * An empty copy that reads nothing from a store: for `rlm repair`, which builds the whole index
   * again and links every chunk in store order, as the writes did.
   */
  static empty(): LiveIndex {
    const live = new LiveIndex();
    live.#state = new IndexState(parseSnapshot('1:1:'), 0);
    return live;
  }

  /** The index, read from the store on first use. */
  async ready(db: Db): Promise<void> {
    if (this.#state) return;
    this.#loading ??= load(db).finally(() => {
      this.#loading = undefined;
    });
    this.#state = await this.#loading;
  }

  get #s(): IndexState {
    if (!this.#state) throw new RlmError('RUNTIME', 'search index used before it was read');
    return this.#state;
  }

  /** The snapshot the copy reflects (its text) and the merge counter seen with it: what to ask the feed from. */
  get since(): [snapshot: string, merges: number] {
    return [this.#s.snapshot.text, this.#s.merges];
  }

  /** The index for ranking (and the chunk fields filters read). */
  get bm25(): Bm25Index {
    return this.#s.bm25;
  }

  chunk(seq: string): ChunkInfo | undefined {
    return this.#s.chunks.get(seq);
  }

  /** Whether the chunk was removed. */
  isDead(seq: string): boolean {
    return this.#s.dead.has(seq);
  }

  /**
   * Whether the chunk's segment was committed by the copy's snapshot: one this process is writing is in
   * the copy (the linker needs it) before it is in the store.
   */
  committed(seq: string): boolean {
    const s = this.#s;
    const c = s.chunks.get(seq);
    const xid = c ? s.segments.get(c.segment)?.xid : undefined;
    return xid !== undefined && endedIn(xid, s.snapshot);
  }

  /** When the memory `document` was archived, null if it is not (as of the copy's snapshot). */
  archivedAt(document: string): string | null {
    return this.#s.archived.get(document)?.at ?? null;
  }

  /** Access count and last access (epoch ms) of a chunk id as the store holds them, or undefined. */
  access(id: string): readonly [number, number] | undefined {
    return this.#s.access.get(id);
  }

  /** Best chunks for `query`: sequence numbers as text, best first. */
  search(query: string, k: number, filter: (seq: string) => boolean, fuzzy: boolean): ScoredId[] {
    const s = this.#s;
    return s.bm25.search(query, { k, fuzzy, filter: (seq) => !s.dead.has(seq) && filter(seq) });
  }

  /**
   * Applies the feed a statement returned (asked with {@link since}): 'same' when nothing changed since,
   * 'changed' when the copy now reflects the statement's snapshot, 'stale' when a segment the feed named
   * was merged away before it could be read (ask again: the merge is in the next feed).
   */
  async apply(db: Db, row: FeedRow): Promise<'same' | 'changed' | 'stale'> {
    const feed = feedOf(row);
    const before = this.#s;
    // Archiving and reads change no ranking: taken as they come.
    before.note(feed.snapshot, feed.archived, feed.access);
    if (feed.added.length + feed.dead.length === 0 && feed.segments === null) {
      this.#advance(before, feed);
      return 'same';
    }
    const wanted = feed.added.filter((a) => !before.segments.has(a.id) && !before.dropped.has(a.id));
    const fetched = wanted.length > 0 ? await this.#fetch(db, wanted) : [];
    // A reload while the segments were read replaced the state: it holds all of this already.
    const s = this.#s;
    if (s !== before) return 'changed';
    s.note(feed.snapshot, feed.archived, feed.access);
    let merged = false;
    if (feed.segments) {
      // Merged away: written before this snapshot (so its transaction is one the snapshot has seen
      // end) and no longer there. A segment written since, or by this process and not yet committed,
      // cannot be judged by this snapshot.
      const there = new Set(feed.segments);
      for (const seg of [...s.segments.values()]) {
        if (seg.xid === undefined || there.has(seg.id) || !endedIn(seg.xid, feed.snapshot)) continue;
        s.remove(seg.id);
        s.dropped.add(seg.id);
        merged = true;
      }
    }
    for (const seg of fetched) if (!s.segments.has(seg.id) && !s.dropped.has(seg.id)) s.add(seg);
    for (const seq of feed.dead) s.dead.add(String(seq));
    if (fetched.length < wanted.length) return 'stale';
    // Dead marks and dropped ids of merged segments are kept (see IndexState.remove): read the index
    // again once they outnumber what is live, which leaves only the current ones.
    if (s.dead.size + s.dropped.size > s.chunks.size + RELOAD_SLACK) {
      this.#state = await load(db);
      return 'changed';
    }
    this.#advance(s, feed);
    // Merges that only dropped segments this copy had already let go of leave its ranking as it was.
    return feed.added.length + feed.dead.length > 0 || merged ? 'changed' : 'same';
  }

  #advance(s: IndexState, feed: Feed): void {
    if (!laterSnapshot(feed.snapshot, s.snapshot)) return;
    s.snapshot = feed.snapshot;
    s.merges = feed.merges;
  }

  /** Reads segments (those merged away meanwhile are missing), each at most once at a time. */
  async #fetch(db: Db, added: { id: number; xid: number }[]): Promise<LoadedSegment[]> {
    const ids = added.map((a) => a.id);
    const todo = ids.filter((id) => !this.#fetching.has(id));
    if (todo.length > 0) {
      const read = db
        .query<SegmentRow>(
          'SELECT id, xid::text, data, info FROM bm25_segments WHERE id = ANY($1::bigint[])',
          [todo],
        )
        .then(
          ({ rows }) => new Map(rows.map((r) => [Number(r.id), parseSegmentRow({ ...r, id: Number(r.id) })])),
        );
      for (const id of todo) {
        const one = read.then((m) => m.get(id));
        this.#fetching.set(id, one);
        void one.finally(() => this.#fetching.delete(id)).catch(() => undefined);
      }
    }
    const out = await Promise.all(ids.map((id) => this.#fetching.get(id)!));
    return out.filter((s) => s !== undefined);
  }

  /**
   * Brings the copy up to date with every commit made before the call: for a writer, whose linker
   * weighs terms by the store's statistics.
   */
  async sync(db: Db): Promise<void> {
    await this.ready(db);
    for (;;) {
      const { rows } = await db.query<FeedRow>(`SELECT ${feedColumns('$1', '$2')}`, this.since, 'rlm_feed');
      if ((await this.apply(db, rows[0]!)) !== 'stale') return;
    }
  }

  // ---- writers -----------------------------------------------------------------------------------

  /**
   * Adds a segment being written and links its chunks: each one's signature and its related_to edges to
   * chunks already in the store ([from seq, to seq, strength]), as the folder store's linker does. Until
   * the transaction commits its chunks have no rows, so searches of this process skip them; if it fails,
   * {@link discard} takes the segment out again.
   */
  link(seg: LoadedSegment): [number, number, number][] {
    const s = this.#s;
    s.add(seg, false);
    if (!s.signatures) {
      s.signatures = new SignatureIndex();
      // Oldest first: the linker compares a new chunk with the most recent ones sharing a term.
      const all = [...s.segments.values()].filter((x) => x !== seg);
      all.sort((a, b) => Number(a.bm25.ids[0] ?? 0) - Number(b.bm25.ids[0] ?? 0));
      for (const x of all) s.sign(x);
    }
    const chunks = seg.bm25.ids.map((seq) => ({ id: seq, ...s.chunks.get(seq)! }));
    const links = linkSegment(s.bm25, s.signatures, String(seg.id), chunks, (c) => !s.dead.has(c.id));
    seg.info.signatures = links.signatures;
    for (const seq of seg.bm25.ids) s.signed.add(seq);
    return links.related.map(([from, to, , strength]) => [Number(from), Number(to), strength]);
  }

  /** Takes out a segment whose transaction failed; its chunks will never exist. */
  discard(seg: LoadedSegment | undefined): void {
    const s = this.#state;
    if (!s || !seg) return;
    s.remove(seg.id);
    for (const seq of seg.bm25.ids) s.dead.add(seq);
  }

  /** Takes a merge this process committed: `dropped` segments are gone, `made` ones replace them. */
  replaced(dropped: number[], made: LoadedSegment[]): void {
    const s = this.#state;
    if (!s) return;
    for (const id of dropped) {
      s.remove(id);
      s.dropped.add(id);
    }
    for (const seg of made) if (!s.segments.has(seg.id) && !s.dropped.has(seg.id)) s.add(seg);
  }

  /** Records chunks this process removed (the feed brings them too; merging plans with them at once). */
  markDead(seqs: number[]): void {
    for (const seq of seqs) this.#state?.dead.add(String(seq));
  }

  /** The loaded segments with their sizes (for merge plans). */
  sizes(): SegmentSize[] {
    const s = this.#state;
    if (!s) return [];
    const dead = new Map<number, number>();
    for (const seq of s.dead) {
      const c = s.chunks.get(seq);
      if (c) dead.set(c.segment, (dead.get(c.segment) ?? 0) + 1);
    }
    return [...s.segments.values()].map((seg) => ({
      id: seg.id,
      chunks: seg.bm25.ids.length,
      dead: dead.get(seg.id) ?? 0,
    }));
  }

  /** A loaded segment by id. */
  segment(id: number): LoadedSegment | undefined {
    return this.#state?.segments.get(id);
  }
}

/** Reads the whole index in one snapshot. */
async function load(db: Db): Promise<IndexState> {
  return db.tx(async (sql: Sql) => {
    await sql.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows: snap } = await sql.query<{ snapshot: string; merges: number }>(
      `SELECT pg_current_snapshot()::text AS snapshot,
              coalesce((SELECT (value #>> '{}')::bigint FROM store_settings WHERE key = 'bm25_merges'), 0) AS merges`,
    );
    const state = new IndexState(parseSnapshot(snap[0]!.snapshot), Number(snap[0]!.merges));
    const { rows: archived } = await sql.query<{ id: string; archived_at: string }>(
      'SELECT id, archived_at FROM documents WHERE topic IS NOT NULL AND archived_at IS NOT NULL',
    );
    const { rows: access } = await sql.query<{ id: string; count: number; last_ms: number }>(
      'SELECT id, count, last_ms FROM access',
    );
    state.note(
      state.snapshot,
      archived.map((r) => [r.id, r.archived_at]),
      access.map((r) => [r.id, r.count, r.last_ms]),
    );
    const { rows: dead } = await sql.query<{ seq: number }>('SELECT seq FROM bm25_dead');
    for (const r of dead) state.dead.add(String(r.seq));
    const { rows } = await sql.query<SegmentRow>(
      'SELECT id, xid::text, data, info FROM bm25_segments ORDER BY id',
    );
    for (const r of rows) state.add(parseSegmentRow({ ...r, id: Number(r.id) }));
    return state;
  });
}
