/**
 * The backends the conformance suite (test/memory/conformance/) runs every store test against: the
 * in-memory double, the folder store and PostgreSQL (when a test server is set, see
 * test/helpers/postgres.ts). Each `open()` gives a new, empty store that is closed and removed when the
 * test ends; `reopen(store)` opens the same store again as another process would.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import type { Store } from '../../../memory/store-api.ts';
import { freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp.ts';

export interface Backend {
  name: string;
  /** A new empty store (with `embedder` when given). */
  open(opts?: { embedder?: string }): Promise<Store>;
  /** The same store opened again, or undefined for a store that lives in one object. */
  reopen(store: Store): Promise<Store> | undefined;
}

function closing<T extends Store>(store: T): T {
  onTestFinished(() => store.close());
  return store;
}

const memory: Backend = {
  name: 'in-memory',
  open: async () => closing(new MemoryChunkStore()),
  reopen: () => undefined,
};

const folder: Backend = {
  name: 'folder',
  open: async (opts = {}) => {
    const root = tempDir();
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    return closing(await ChunkStore.open(path.join(root, 'store'), { create: true, ...opts }));
  },
  reopen: async (store) => closing(await ChunkStore.open(store.location)),
};

const urls = new WeakMap<Store, string>();
const postgres: Backend = {
  name: 'postgres',
  open: async (opts = {}) => {
    const url = freshSchemaUrl();
    const store = closing(await PostgresStore.open(url, { create: true, ...opts }));
    urls.set(store, url);
    return store;
  },
  reopen: async (store) => closing(await PostgresStore.open(urls.get(store)!)),
};

/** Every backend available here, for `describe.each`. */
export function backends(what: string): [string, Backend][] {
  const list = [memory, folder];
  if (postgresAvailable(what)) list.push(postgres);
  return list.map((b) => [b.name, b]);
}
