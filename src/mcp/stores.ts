/**
 * Open chunk stores, one per folder for the server's lifetime. Opening reads the manifest and loads indexes
 * lazily, so reopening per call would throw away warm indexes; instead each use refreshes the handle so
 * commits made by other processes (an `rlm ingest` in a terminal) are seen.
 */
import path from 'node:path';
import { type Env, readEnv } from '../../core/env.ts';
import { RlmError } from '../../core/errors.ts';
import { discardEmptyStore } from '../../memory/files/discard.ts';
import { ChunkStore } from '../../memory/files/store.ts';
import { expandHome } from '../../memory/fsutil.ts';

/** Opens stores on first use and hands out the same handle afterwards. */
export class StoreRegistry {
  readonly #env: Env;
  readonly #cwd: string;
  readonly #open = new Map<string, Promise<ChunkStore>>();
  #closed = false;

  constructor(env: Env, cwd: string) {
    this.#env = env;
    this.#cwd = cwd;
  }

  /** Absolute folder of `dir`, resolved against the server's working directory. */
  resolve(dir: string): string {
    return path.resolve(this.#cwd, expandHome(dir, readEnv(this.#env).home));
  }

  /**
   * The store in `dir`, refreshed to its latest commit. With `create`, a missing store is created (ingest);
   * without it a missing store is STORE_MISSING and nothing is cached, so a later ingest can create it.
   */
  async get(dir: string, opts: { create?: boolean } = {}): Promise<ChunkStore> {
    if (this.#closed) throw new RlmError('ABORTED', 'the server is shutting down');
    const abs = this.resolve(dir);
    let pending = this.#open.get(abs);
    if (pending === undefined) {
      pending = ChunkStore.open(abs, { env: this.#env, ...(opts.create ? { create: true } : {}) });
      this.#open.set(abs, pending);
      pending.catch(() => {
        if (this.#open.get(abs) === pending) this.#open.delete(abs);
      });
      return pending;
    }
    const store = await pending;
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
    await discardEmptyStore(abs);
  }

  /** Folders currently open. */
  get dirs(): string[] {
    return [...this.#open.keys()];
  }

  /** Closes every open store (flushes access stats); later `get` calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close()));
  }
}
