/**
 * The chunk index of a run's `--context` files, built the first time model code needs it (search_chunks,
 * get_chunk, neighbors, peek(chunkId), grep, list_documents) and never otherwise: chunking, token
 * counting, BM25, classification and links cost seconds per 10 MB, reading the files only milliseconds.
 *
 * The index is an in-memory store that ingests the same files the run read (so its documents, parts, chunk
 * ids and offsets are exactly a store's), one build per run however many calls wait for it. A file that
 * changed on disk after the run read it is indexed from the text the run read, so search and `context`
 * always agree.
 */
import { promises as fs } from 'node:fs';
import type { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import type { ChunkReader } from '../../memory/types.ts';
import type { ContextFile } from './context-files.ts';

export class LazyIndex {
  readonly #files: readonly ContextFile[];
  readonly #abort = new AbortController();
  #build: Promise<MemoryChunkStore> | null = null;
  #built = false;

  constructor(files: readonly ContextFile[]) {
    this.#files = files;
  }

  /** True once the index exists (a run that never needed it never builds it). */
  get built(): boolean {
    return this.#built;
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
    let store = new MemoryChunkStore();
    try {
      const paths = [...new Set(this.#files.map((f) => f.path))];
      try {
        // Each file named on its own: exactly the files the run read, whatever the folder holds now.
        await store.ingestPaths(paths, { signal });
      } catch (err) {
        if (signal.aborted) throw err;
        // A file gone since the run read it: index the text the run read, all of it.
        await store.close();
        store = new MemoryChunkStore();
        await this.#ingestRead(store, paths, signal);
      }
      const changed = await this.#changed(paths);
      for (const path of changed) await store.removeDocument(path);
      await this.#ingestRead(store, changed, signal);
    } catch (err) {
      await store.close();
      // A failed build is not remembered: the next call tries again.
      this.#build = null;
      throw err;
    }
    this.#built = true;
    return store;
  }

  /** Indexes the text the run read for `paths`, whole files as one document each. */
  async #ingestRead(store: MemoryChunkStore, paths: readonly string[], signal: AbortSignal): Promise<void> {
    const wanted = new Set(paths);
    for (const f of this.#files)
      if (wanted.has(f.path)) await store.ingestText(f.id, f.text, { path: f.path, signal });
  }

  /** Paths whose file is not the one the run read (changed, or gone, since). */
  async #changed(paths: readonly string[]): Promise<string[]> {
    const read = new Map(this.#files.map((f) => [f.path, f]));
    const out: string[] = [];
    for (const path of paths) {
      const was = read.get(path)!;
      const now = await fs.stat(path).catch(() => null);
      if (now === null || now.size !== was.bytes || now.mtimeMs !== was.mtimeMs) out.push(path);
    }
    return out;
  }
}
