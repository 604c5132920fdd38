/**
 * Access stats of a PostgreSQL store: reads are counted in memory and written in batches (one upsert
 * per batch, ids in one order so two flushes never deadlock). A lookup first writes what is pending, so
 * it sees this process's reads; other processes' reads appear once they flush (within a second). A read
 * that must not wait for a write ({@link AccessBuffer.read}, recall) adds the pending counts to what it
 * reads instead: no flush runs while it is in flight, and it starts only when none is, so each count is
 * either in the table it reads or in the pending ones it is given, never in both.
 */
import type { AccessStats } from '../types.ts';
import type { Db } from './db.ts';

const FLUSH_AT = 500;
const FLUSH_AFTER_MS = 1000;

export class AccessBuffer {
  readonly #db: Db;
  #pending = new Map<string, [count: number, lastMs: number]>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  /** Settles when the last flush asked for is done; reads wait for it. */
  #gate: Promise<void> | undefined;
  /** Reads in flight, and the flushes waiting for them to end. */
  #reads = 0;
  readonly #drained: (() => void)[] = [];

  constructor(db: Db) {
    this.#db = db;
  }

  touch(ids: string[], at: number = Date.now()): void {
    for (const id of ids) {
      const row = this.#pending.get(id) ?? [0, 0];
      row[0]++;
      row[1] = Math.max(row[1], at);
      this.#pending.set(id, row);
    }
    if (this.#pending.size >= FLUSH_AT) void this.flush().catch(() => undefined);
    else if (!this.#timer && this.#pending.size > 0) {
      this.#timer = setTimeout(() => void this.flush().catch(() => undefined), FLUSH_AFTER_MS);
      this.#timer.unref();
    }
  }

  /**
   * Writes pending counts of chunks that still exist (a read just before a delete must not bring the
   * deleted id back). Access stats are best effort: a failure drops them, never a read.
   */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const run = async () => {
      while (this.#reads > 0) await new Promise<void>((resolve) => this.#drained.push(resolve));
      const batch = [...this.#pending].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.#pending = new Map();
      if (batch.length === 0) return;
      await this.#db.query(
        `INSERT INTO access (id, count, last_ms)
         SELECT a.* FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS a(id, count, last_ms)
         WHERE EXISTS (SELECT 1 FROM chunks c
           WHERE c.document = left(a.id, length(a.id) - position(':' IN reverse(a.id)))
             AND c.ordinal::text = right(a.id, position(':' IN reverse(a.id)) - 1))
         ON CONFLICT (id) DO UPDATE SET count = access.count + excluded.count,
           last_ms = greatest(access.last_ms, excluded.last_ms)`,
        [batch.map((b) => b[0]), batch.map((b) => b[1][0]), batch.map((b) => b[1][1])],
      );
    };
    const done = this.#flushing.then(run, run);
    this.#flushing = done;
    const gate = done.then(
      () => undefined,
      () => undefined,
    );
    this.#gate = gate;
    void gate.then(() => {
      if (this.#gate === gate) this.#gate = undefined;
    });
    return done;
  }

  /**
   * Runs a read of access stats with this process's pending counts, which it adds to what it reads: it
   * starts when no flush is in flight, and none starts until it ends, so none of them is written while
   * it runs (those counted while it runs are reads that happened, and are not in the table either).
   */
  async read<T>(fn: (pending: ReadonlyMap<string, readonly [number, number]>) => Promise<T>): Promise<T> {
    while (this.#gate) await this.#gate;
    this.#reads++;
    try {
      return await fn(this.#pending);
    } finally {
      if (--this.#reads === 0) for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  /** Count and last access (epoch ms, 0: never) of chunk ids, this process's pending reads included. */
  async raw(ids: string[]): Promise<Map<string, [number, number]>> {
    await this.flush().catch(() => undefined);
    const out = new Map<string, [number, number]>();
    if (ids.length === 0) return out;
    const { rows } = await this.#db.query<{ id: string; count: number; last_ms: number }>(
      'SELECT id, count, last_ms FROM access WHERE id = ANY($1::text[])',
      [ids],
    );
    for (const r of rows) out.set(r.id, [r.count, r.last_ms]);
    return out;
  }

  async stats(id: string): Promise<AccessStats> {
    const [count, last] = (await this.raw([id])).get(id) ?? [0, 0];
    return { count, last: last > 0 ? new Date(last).toISOString() : null };
  }
}
