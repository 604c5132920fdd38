/**
 * The backends the conformance suite (test/memory/conformance/) runs every store test against: the
 * in-memory double, the folder store and PostgreSQL (when a test server is set, see
 * test/helpers/postgres.ts); and for vector search, the folder store and PostgreSQL with pgvector
 * (PGlite, test/helpers/pglite.ts, which runs everywhere). Each `open()` gives a new, empty store that is closed and removed when the
 * test ends; `reopen(store)` opens the same store again as another process would.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, onTestFinished } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import type { Store } from '../../../memory/store-api.ts';
import { type PgliteServer, startPglite } from '../../helpers/pglite.ts';
import { freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp.ts';

export interface Backend {
  name: string;
  /** A new empty store (with `embedder` when given). */
  open(opts?: { embedder?: string }): Promise<Store>;
  /** The same store opened again (with `embedder` when given), or undefined for one that lives in one object. */
  reopen(store: Store, opts?: { embedder?: string }): Promise<Store> | undefined;
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
  reopen: async (store, opts = {}) => closing(await ChunkStore.open(store.location, opts)),
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
  reopen: async (store, opts = {}) => closing(await PostgresStore.open(urls.get(store)!, opts)),
};

/** Every backend available here, for `describe.each`. */
export function backends(what: string): [string, Backend][] {
  const list = [memory, folder];
  if (postgresAvailable(what)) list.push(postgres);
  return list.map((b) => [b.name, b]);
}

/**
 * PostgreSQL with pgvector: a PGlite server of this test file, started when a test first opens a store
 * and stopped after the file's tests.
 */
function pgvector(): Backend {
  let server: Promise<PgliteServer> | undefined;
  afterAll(async () => {
    if (server) await (await server).stop();
  });
  return {
    name: 'postgres',
    open: async (opts = {}) => {
      server ??= startPglite();
      const url = (await server).storeUrl();
      const store = closing(await PostgresStore.open(url, { create: true, ...opts }));
      urls.set(store, url);
      return store;
    },
    reopen: postgres.reopen,
  };
}

/** The backends that keep vectors, for `describe.each`: the folder store and PostgreSQL with pgvector. */
export function vectorBackends(): [string, Backend][] {
  return [folder, pgvector()].map((b) => [b.name, b]);
}
