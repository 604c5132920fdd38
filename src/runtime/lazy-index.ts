/**
 * The chunk index of a run's `--context` files, built the first time model code needs it (search_chunks,
 * get_chunk, neighbors, peek of a chunk id) and never otherwise: chunking, token counting, BM25,
 * classification and links cost seconds per 10 MB, reading the files only milliseconds.
 *
 * The index is an in-memory store that ingests the same files the run read (so its documents, parts, chunk
 * ids and offsets are exactly a store's), one build per run however many calls wait for it. The run keeps
 * no text of its own, so a file that changed on disk since the run read it cannot be indexed as the run
 * read it: the build fails and says so, rather than index a text `context` does not hold.
 */
import { promises as fs } from 'node:fs';
import { RlmError } from '../../core/errors.ts';
import type { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import { identityOf, sameFile } from '../../memory/ingest/file-text.ts';
import type { ChunkReader } from '../../memory/types.ts';
import type { ContextFile } from './context-files.ts';

export class LazyIndex {
  readonly #files: readonly ContextFile[];
  readonly #abort = new AbortController();
  #build: Promise<MemoryChunkStore> | null = null;
  #store: MemoryChunkStore | null = null;

  constructor(files: readonly ContextFile[]) {
    this.#files = files;
  }

  /** True once the index exists (a run that never needed it never builds it). */
  get built(): boolean {
    return this.#store !== null;
  }

  /** The index when it is built, without building it. */
  get ready(): ChunkReader | null {
    return this.#store;
  }

  /** The index, built on the first call; later calls wait for the same build. */
  readonly load = (): Promise<ChunkReader> => {
    this.#build ??= this.#make();
    return this.#build;
  };

  /** Stops a build under way and releases the index. */
  async close(): Promise<void> {
    this.#abort.abort();
    const store = await this.#build?.catch(() => null);
    await store?.close();
  }

  async #make(): Promise<MemoryChunkStore> {
    const { MemoryChunkStore } = await import('../../memory/in-memory/store.ts');
    const signal = this.#abort.signal;
    const store = new MemoryChunkStore();
    try {
      const paths = [...new Set(this.#files.map((f) => f.path))];
      // Each file named on its own: exactly the files the run read, whatever the folder holds now.
      await store.ingestPaths(paths, { signal });
      // Checked after: a file changed before or while it was ingested shows a newer identity.
      await this.#checkUnchanged();
    } catch (err) {
      await store.close();
      // A failed build is not remembered: the next call tries again.
      this.#build = null;
      throw err;
    }
    this.#store = store;
    return store;
  }

  /** Fails when a file is not the one the run read (changed, replaced or gone since). */
  async #checkUnchanged(): Promise<void> {
    for (const f of this.#files) {
      const now = await fs.stat(f.path).catch(() => null);
      if (now === null || !sameFile(identityOf(now), f.text.identity))
        throw new RlmError(
          'BAD_INPUT',
          `${f.path} changed on disk after the run read it: its chunks would not match \`context\`; run again to search it`,
          { path: f.path },
        );
    }
  }
}
