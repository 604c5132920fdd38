/**
 * `ChunkStore`: the chunk graph kept in a folder. Opening reads only the manifest and the documents
 * file; segments, indexes and links load on first use. Writers take the folder's lock.
 */
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Env } from '../../core/env.ts';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { DocumentCatalog } from '../engine/catalog.ts';
import { RememberingStore } from '../engine/memories.ts';
import type { CommittedState } from '../engine/persistence.ts';
import { assertNotAFile, corrupt, exists, isTempName } from '../fsutil.ts';
import { createEmbedder, embedderConfig } from '../search/embedders/index.ts';
import type { Embedder } from '../search/embedders/types.ts';
import { VECTOR_META_FILE, VectorIndex } from '../search/vectors.ts';
import type { Store } from '../store-api.ts';
import { type DirectoryOptions, DirectoryPersistence } from './directory.ts';
import { isLockFile, LOCK_FILE } from './lock.ts';
import { MANIFEST_FILE, SCHEMA_VERSION, segmentTextFile, storeFilesAmong, VECTORS_DIR } from './manifest.ts';

export interface OpenOptions {
  /** Create an empty store when the folder has none (default false). */
  create?: boolean;
  /**
   * Embedder spec (`hash`, `hash:384`, `openai:MODEL`, `ollama:MODEL`) for vector search. Fixed when a
   * store is created; an existing store keeps the one it was built with.
   */
  embedder?: string;
  /** Environment for embedder keys and endpoints (default process.env). */
  env?: Env;
  /** How long a writer waits for another one, ms (default 10000), before STORE_LOCKED. */
  lockWaitMs?: number;
  /** Called once each time a write starts waiting for another writer's lock. */
  onLockWait?: DirectoryOptions['onLockWait'];
  /**
   * Told what did not stop the open: an embedder that does not answer when a store is given one (the
   * store is then made without vector search; `rlm repair --embedder` adds it later).
   */
  onWarning?: (message: string) => void;
}

export class ChunkStore extends RememberingStore implements Store {
  /** The store's folder. */
  readonly dir: string;

  /** The store's folder, as messages show it. */
  get location(): string {
    return this.dir;
  }

  private constructor(
    persistence: DirectoryPersistence,
    state: CommittedState,
    vectors?: { index: VectorIndex; embedder: Embedder },
  ) {
    super(persistence, state, vectors);
    this.dir = persistence.dir;
  }

  /**
   * Opens the store in `dir` (STORE_MISSING if there is none and `create` is not set). A folder this call
   * created is removed again if opening fails, so a failure never leaves an empty store behind.
   */
  static async open(dir: string, opts: OpenOptions = {}): Promise<ChunkStore> {
    const abs = path.resolve(dir);
    await assertNotAFile(abs);
    // A bad spec is a usage error before anything is made.
    if (opts.embedder) createEmbedder(opts.embedder, opts.env);
    const fresh = opts.create === true && !(await exists(abs));
    try {
      return await ChunkStore.openIn(abs, dir, opts);
    } catch (err) {
      if (fresh) await fs.rm(abs, { recursive: true, force: true });
      throw err;
    }
  }

  private static async openIn(abs: string, dir: string, opts: OpenOptions): Promise<ChunkStore> {
    const persistence = new DirectoryPersistence(abs, {
      ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
      ...(opts.onLockWait ? { onLockWait: opts.onLockWait } : {}),
    });
    let embedderTried = false;
    if (!(await exists(path.join(abs, MANIFEST_FILE)))) {
      // A writer creating the store holds the lock until its manifest is written: its files are not a
      // lost manifest's (a creator checks again under the lock).
      if (!(await exists(path.join(abs, LOCK_FILE)))) await assertNoRemnants(abs, dir);
      if (!opts.create) {
        // A folder that holds other files is made a store only with --create: the command suggested must work.
        const others = (await fs.readdir(abs).catch(() => [])).filter(
          (n) => !isLockFile(n) && !isTempName(n),
        );
        const create = `rlm ingest PATH --store ${dir}${others.length > 0 ? ' --create' : ''}`;
        throw new RlmError('STORE_MISSING', `no rlm store at ${abs} (create one with \`${create}\`)`, {
          dir: abs,
        });
      }
      await ChunkStore.create(persistence, dir, opts);
      embedderTried = true;
    }
    let state = await persistence.readState();
    if (opts.embedder && !state.embedder && !embedderTried) {
      if (state.documents.size > 0) {
        throw new RlmError(
          'BAD_INPUT',
          `store ${abs} was built without an embedder; run \`rlm repair --store ${dir} --embedder ${opts.embedder}\` to add vectors`,
        );
      }
      state = await ChunkStore.setEmbedder(persistence, dir, opts);
    }
    if (
      state.embedder &&
      opts.embedder &&
      createEmbedder(opts.embedder, opts.env).name !== state.embedder.spec
    ) {
      throw new RlmError(
        'BAD_INPUT',
        `store ${abs} uses embedder ${state.embedder.spec}, not ${opts.embedder}; run \`rlm repair --store ${dir} --embedder ${opts.embedder}\` to re-embed`,
      );
    }
    if (
      state.embedder &&
      state.documents.size > 0 &&
      !(await exists(path.join(abs, VECTORS_DIR, VECTOR_META_FILE)))
    ) {
      throw corrupt(path.join(abs, VECTORS_DIR, VECTOR_META_FILE), 'the vector index is missing');
    }
    const vectors = state.embedder ? await openVectors(abs, state.embedder, opts.env) : undefined;
    const store = new ChunkStore(persistence, state, vectors);
    await store.syncJournal();
    return store;
  }

  /**
   * Live schema 1/2 segments written before text columns existed (memory/SCHEMA.md, `seg-N.text`): grep
   * reads them through their chunk files, several times slower, until `rlm repair` rewrites them.
   */
  segmentsWithoutTextColumn(): string[] {
    return (this.state.legacy ?? []).filter((s) => !existsSync(segmentTextFile(this.dir, s)));
  }

  private static async create(
    persistence: DirectoryPersistence,
    dir: string,
    opts: OpenOptions,
  ): Promise<void> {
    await fs.mkdir(persistence.dir, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EACCES' && err.code !== 'EPERM' && err.code !== 'EROFS') throw err;
      throw new RlmError('ACCESS_DENIED', `cannot make the store folder ${persistence.dir} (${err.code})`, {
        dir: persistence.dir,
      });
    });
    const lock = await persistence.lock('create');
    try {
      if (await exists(persistence.manifestPath)) return; // another process created it meanwhile
      await assertNoRemnants(persistence.dir, dir);
      await persistence.commit({
        generation: 1,
        nextSegment: 1,
        segments: [],
        documents: new DocumentCatalog(),
        manual: [],
        embedder: await checkedEmbedder(dir, opts),
        schema: SCHEMA_VERSION,
        related: 0,
      });
    } finally {
      await lock.release();
    }
  }

  private static async setEmbedder(
    persistence: DirectoryPersistence,
    dir: string,
    opts: OpenOptions,
  ): Promise<CommittedState> {
    const embedder = await checkedEmbedder(dir, opts);
    const lock = await persistence.lock('embedder');
    try {
      const state = await persistence.readState();
      if (!embedder) return state;
      const next = { ...state, generation: state.generation + 1, embedder };
      await persistence.commit(next);
      return next;
    } finally {
      await lock.release();
    }
  }
}

/**
 * The embedder a new store is given, checked with one request whatever form its spec takes. One that does
 * not answer does not stop the command: the store is made without vector search (BM25 works), and a
 * warning says how to add vectors once the embedder works.
 */
async function checkedEmbedder(
  dir: string,
  opts: OpenOptions,
): Promise<{ spec: string; dimensions: number } | null> {
  if (!opts.embedder) return null;
  const embedder = createEmbedder(opts.embedder, opts.env);
  try {
    return await embedderConfig(embedder, { probe: true });
  } catch (err) {
    if (!isRlmError(err, 'PROVIDER')) throw err;
    opts.onWarning?.(
      `the embedder ${embedder.name} failed (${err.message}): the store was made without vector search, and its ` +
        `documents are searchable with BM25. When the embedder works, \`rlm repair --store ${dir} --embedder ${opts.embedder}\` adds vectors.`,
    );
    return null;
  }
}

async function openVectors(
  dir: string,
  config: { spec: string; dimensions: number },
  env?: Env,
): Promise<{ index: VectorIndex; embedder: Embedder }> {
  const embedder = createEmbedder(config.spec, env);
  const index = await VectorIndex.open(path.join(dir, VECTORS_DIR), {
    dimensions: config.dimensions,
    embedder: config.spec,
  });
  return { index, embedder };
}

/**
 * Throws STORE_CORRUPT when the folder holds a store's files but no manifest: a store that lost it, for
 * `rlm repair` to rebuild, never a place to make a new one over those files.
 */
async function assertNoRemnants(abs: string, dir: string): Promise<void> {
  const remnants = storeFilesAmong(await fs.readdir(abs).catch(() => []));
  if (remnants.length === 0) return;
  throw new RlmError(
    'STORE_CORRUPT',
    `store ${abs} has store files (${remnants.slice(0, 3).join(', ')}${remnants.length > 3 ? ', …' : ''}) but no ${MANIFEST_FILE}. Run \`rlm repair --store ${dir}\`.`,
    { file: path.join(abs, MANIFEST_FILE) },
  );
}
