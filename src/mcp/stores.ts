/**
 * Open stores, one per folder or URL for the server's lifetime. Opening a folder store reads the
 * manifest and loads indexes lazily, so reopening per call would throw away warm indexes; instead each
 * use refreshes the handle so commits made by other processes (an `rlm ingest` in a terminal) are seen.
 * A PostgreSQL store keeps its connection pool; its reads always see the latest commit.
 */
import { type Env, readEnv } from '../../core/env.ts';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { discardEmptyStore } from '../../memory/files/discard.ts';
import { isForeignFolder } from '../../memory/files/foreign-folder.ts';
import { isPostgresUrl, openStore, redactUrl } from '../../memory/open.ts';
import type { Store } from '../../memory/store-api.ts';
import { storeLocation } from '../../memory/store-location.ts';

/**
 * How long a write of a tool call waits for a folder store's lock, ms. Another process's ingest holds it
 * for its whole run (an `rlm_ingest`, which runs in a child process, or an `rlm ingest` in a terminal),
 * and a call waits for it, as calls of one process wait for each other, instead of failing after the
 * CLI's 10 s.
 */
export const SERVER_LOCK_WAIT_MS = 10 * 60_000;

/** Opens stores on first use and hands out the same handle afterwards. */
export class StoreRegistry {
  readonly #env: Env;
  readonly #cwd: string;
  readonly #open = new Map<string, Promise<Store>>();
  #closed = false;

  constructor(env: Env, cwd: string) {
    this.#env = env;
    this.#cwd = cwd;
  }

  /** Absolute folder of `dir`, resolved against the server's working directory; a URL as given. */
  resolve(dir: string): string {
    return storeLocation(dir, this.#cwd, readEnv(this.#env).home);
  }

  /** What results and messages may show of a store's name: a folder, or a URL without its password. */
  label(dir: string): string {
    return isPostgresUrl(dir) ? redactUrl(dir) : this.resolve(dir);
  }

  /**
   * The store in `dir`, refreshed to its latest commit. With `create`, a missing store is created (ingest);
   * without it a missing store is STORE_MISSING and nothing is cached, so a later ingest can create it.
   */
  async get(dir: string, opts: { create?: boolean } = {}): Promise<Store> {
    if (this.#closed) throw new RlmError('ABORTED', 'the server is shutting down');
    const abs = this.resolve(dir);
    let pending = this.#open.get(abs);
    // As the CLI without --create: a store is not made among someone's own files.
    if (pending === undefined && opts.create && !isPostgresUrl(abs) && isForeignFolder(abs))
      throw new RlmError(
        'BAD_INPUT',
        `${abs} is not an rlm store and is not empty; name an empty or new folder (or make the store there with rlm ingest PATH --store DIR --create)`,
      );
    if (pending === undefined) {
      pending = openStore(abs, {
        env: this.#env,
        lockWaitMs: SERVER_LOCK_WAIT_MS,
        ...(opts.create ? { create: true } : {}),
      });
      this.#open.set(abs, pending);
      pending.catch(() => {
        if (this.#open.get(abs) === pending) this.#open.delete(abs);
      });
      return pending;
    }
    const store = await pending.catch((err: unknown) => {
      // A read's open without `create` was in flight when this call, which creates, came: that one's
      // STORE_MISSING is not this call's. Opened again, with create (the failed open is out of the map).
      if (opts.create && isRlmError(err, 'STORE_MISSING')) return this.get(dir, opts);
      throw err;
    });
    await store.refresh();
    return store;
  }

  /**
   * After a failed call that created the store in `dir`: closes it and removes it when it holds nothing,
   * so the failure leaves no empty store behind.
   */
  async discardIfEmpty(dir: string): Promise<void> {
    const abs = this.resolve(dir);
    const pending = this.#open.get(abs);
    this.#open.delete(abs);
    await (await pending?.catch(() => undefined))?.close();
    // A folder goes when empty; a PostgreSQL schema stays (its tables are the database owner's to drop).
    if (!isPostgresUrl(abs)) await discardEmptyStore(abs);
  }

  /** Stores currently open, as they may be shown. */
  get dirs(): string[] {
    return [...this.#open.keys()].map((d) => this.label(d));
  }

  /** Closes every open store (flushes access stats); later `get` calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close()));
  }
}
