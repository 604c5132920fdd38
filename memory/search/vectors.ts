/**
 * The vector index of the chunk graph: chunk id → embedding, cosine top-k, persisted with vectra's
 * `LocalIndex` under `<store>/vectors`.
 *
 * It is derived data (rebuildable from chunk texts), so its failure modes are "report and rebuild":
 * an unreadable index surfaces as STORE_CORRUPT naming the file, for `rlm repair`. Two things vectra
 * does not do are added here: index writes are atomic (vectra overwrites index.json in place, so a
 * crash mid-write leaves a torn file), and the embedder that produced the vectors is recorded in
 * `meta.json` so vectors of different embedders are never mixed.
 */
import { access, mkdir, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { FileDetails, FileStorage, LocalIndex } from 'vectra';
import { RlmError } from '../../core/errors.ts';
import { writeFileAtomic } from '../fsutil.ts';

/** What the index is for; both must match an existing index. */
export interface VectorIndexOptions {
  dimensions: number;
  /** Embedder name (see `Embedder.name`). */
  embedder: string;
}

/** One vector to store. */
export interface VectorItem {
  id: string;
  vector: number[];
}

/** One query result; `score` is cosine similarity in -1..1. */
export interface VectorHit {
  id: string;
  score: number;
}

/** File in the index folder that records which embedder wrote the vectors. */
export const VECTOR_META_FILE = 'meta.json';
/** vectra's index file. */
export const VECTOR_INDEX_FILE = 'index.json';
const META_FORMAT = 1;

interface VectorMeta {
  format: number;
  embedder: string;
  dimensions: number;
}

/**
 * vectra's `FileStorage` on the local disk with one change that matters: `upsertFile` is the store's
 * {@link writeFileAtomic} (temp file, fsync, rename, fsync of the folder), so readers see either the old
 * or the new index, never half, and the rename survives a power cut.
 */
class AtomicFileStorage implements FileStorage {
  async createFile(filePath: string, content: Buffer | string): Promise<void> {
    await writeFile(filePath, content, { flag: 'wx' });
  }
  async createFolder(folderPath: string): Promise<void> {
    await mkdir(folderPath, { recursive: true });
  }
  async deleteFile(filePath: string): Promise<void> {
    await unlink(filePath);
  }
  async deleteFolder(folderPath: string): Promise<void> {
    await rm(folderPath, { recursive: true, force: true });
  }
  async getDetails(fileOrFolderPath: string): Promise<FileDetails> {
    const st = await stat(fileOrFolderPath);
    return { name: basename(fileOrFolderPath), path: fileOrFolderPath, isFolder: st.isDirectory() };
  }
  async listFiles(folderPath: string): Promise<FileDetails[]> {
    const entries = await readdir(folderPath, { withFileTypes: true });
    return entries.map((e) => ({ name: e.name, path: join(folderPath, e.name), isFolder: e.isDirectory() }));
  }
  async pathExists(fileOrFolderPath: string): Promise<boolean> {
    try {
      await access(fileOrFolderPath);
      return true;
    } catch {
      return false;
    }
  }
  async readFile(filePath: string): Promise<Buffer> {
    return readFile(filePath);
  }
  async upsertFile(filePath: string, content: Buffer | string): Promise<void> {
    await writeFileAtomic(filePath, content);
  }
}

function corrupt(file: string, why: string, cause?: unknown): RlmError {
  return new RlmError(
    'STORE_CORRUPT',
    `vector index file ${file} is unreadable (${why}); it is derived data: run \`rlm repair\` to rebuild it`,
    { file },
    cause === undefined ? undefined : { cause },
  );
}

async function readMeta(file: string): Promise<VectorMeta | undefined> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw corrupt(file, (err as Error).message, err);
  }
  let meta: unknown;
  try {
    meta = JSON.parse(raw);
  } catch (err) {
    throw corrupt(file, 'invalid JSON', err);
  }
  const m = meta as Partial<VectorMeta> | null;
  if (
    !m ||
    typeof m.embedder !== 'string' ||
    typeof m.dimensions !== 'number' ||
    !Number.isInteger(m.dimensions) ||
    typeof m.format !== 'number'
  ) {
    throw corrupt(file, 'missing embedder or dimensions');
  }
  if (m.format > META_FORMAT) {
    throw corrupt(file, `format ${m.format} is newer than this rlm understands (${META_FORMAT})`);
  }
  return { format: m.format, embedder: m.embedder, dimensions: m.dimensions };
}

/**
 * Unit-length copy rounded to 6 decimals. Cosine is scale-free, so normalising loses nothing, and the
 * rounding roughly halves index.json (JSON prints doubles with up to 17 digits) at an error far below
 * what ranking can notice. The zero vector stays zero (it then matches nothing).
 */
function compact(vector: number[]): number[] {
  let sumSq = 0;
  for (const x of vector) sumSq += x * x;
  const scale = sumSq > 0 ? 1 / Math.sqrt(sumSq) : 0;
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = Math.round((vector[i] ?? 0) * scale * 1e6) / 1e6;
  return out;
}

/**
 * vectra, loaded on first use. It is an optional peer dependency: it pulls in a large dependency tree
 * (an OpenAI client, a GPT tokenizer, gRPC, an HTML parser…) that stores without vectors never need, so
 * only those who use vectors install it.
 */
async function loadVectra(): Promise<typeof import('vectra')> {
  try {
    return await import('vectra');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code !== 'ERR_MODULE_NOT_FOUND' || !/['"]vectra['"]/.test(e.message)) throw err;
    throw new RlmError(
      'BAD_INPUT',
      'vectors need the optional package vectra, which is not installed: run `npm install vectra` ' +
        'where rlm is installed (or `npm install -g vectra` for a global rlm), or use the store without an embedder',
    );
  }
}

/** Persistent cosine index over chunk ids. Open with {@link VectorIndex.open}; operations are serialised. */
export class VectorIndex {
  /** Folder holding index.json and meta.json. */
  readonly folder: string;
  readonly embedder: string;
  readonly dimensions: number;
  private readonly index: LocalIndex;
  private count: number;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(folder: string, meta: VectorMeta, index: LocalIndex, count: number) {
    this.folder = folder;
    this.embedder = meta.embedder;
    this.dimensions = meta.dimensions;
    this.index = index;
    this.count = count;
  }

  /**
   * Opens the index in `folder`, creating it when absent.
   * @throws RlmError BAD_INPUT when the folder holds vectors of another embedder or length;
   *   STORE_CORRUPT (with `details.file`) when a file cannot be read or parsed.
   */
  static async open(folder: string, opts: VectorIndexOptions): Promise<VectorIndex> {
    if (!Number.isInteger(opts.dimensions) || opts.dimensions < 1) {
      throw new RlmError('BAD_INPUT', `vector dimensions must be a positive integer, got ${opts.dimensions}`);
    }
    if (!opts.embedder) throw new RlmError('BAD_INPUT', 'vector index needs an embedder name');
    const metaFile = join(folder, VECTOR_META_FILE);
    const indexFile = join(folder, VECTOR_INDEX_FILE);
    const { LocalIndex: LocalIndexClass } = await loadVectra();
    const index = new LocalIndexClass(folder, VECTOR_INDEX_FILE, new AtomicFileStorage());
    let meta = await readMeta(metaFile);
    const hasIndex = await index.isIndexCreated();
    if (meta === undefined) {
      if (hasIndex) throw corrupt(metaFile, 'missing, so the embedder of the stored vectors is unknown');
      // meta.json goes first: an index.json without it is then always an error, never a guess.
      meta = { format: META_FORMAT, embedder: opts.embedder, dimensions: opts.dimensions };
      await mkdir(folder, { recursive: true });
      await writeFileAtomic(metaFile, `${JSON.stringify(meta, null, 2)}\n`);
    }
    if (meta.embedder !== opts.embedder || meta.dimensions !== opts.dimensions) {
      throw new RlmError(
        'BAD_INPUT',
        `vector index in ${folder} was built with embedder ${meta.embedder} (${meta.dimensions} dimensions), ` +
          `not ${opts.embedder} (${opts.dimensions}); use the same embedder or rebuild the vectors`,
        { folder, stored: meta.embedder, storedDimensions: meta.dimensions, requested: opts.embedder },
      );
    }
    if (!hasIndex) {
      // Only reached on a fresh folder or when creation was interrupted between the two files.
      await index.createIndex({ version: 1 });
    }
    const count = await VectorIndex.validate(index, indexFile, meta.dimensions);
    return new VectorIndex(folder, meta, index, count);
  }

  /** Loads index.json through vectra and checks every item, so corruption is found at open, not mid-query. */
  private static async validate(index: LocalIndex, file: string, dimensions: number): Promise<number> {
    let items: Awaited<ReturnType<LocalIndex['listItems']>>;
    try {
      items = await index.listItems();
    } catch (err) {
      throw corrupt(file, err instanceof Error ? err.message : String(err), err);
    }
    if (!Array.isArray(items)) throw corrupt(file, 'no items array');
    for (const item of items) {
      const ok =
        item &&
        typeof item.id === 'string' &&
        Array.isArray(item.vector) &&
        item.vector.length === dimensions &&
        typeof item.norm === 'number';
      if (!ok) throw corrupt(file, `item ${JSON.stringify(item?.id)} is malformed or has the wrong length`);
    }
    return items.length;
  }

  /** Number of stored vectors. */
  size(): number {
    return this.count;
  }

  /** Adds or replaces vectors, written to disk in one atomic index rewrite. */
  async upsert(items: VectorItem[]): Promise<void> {
    const prepared = items.map((item) => ({
      id: this.checkId(item.id),
      vector: compact(this.checkVector(item.vector)),
    }));
    return this.exclusive(async () => {
      if (prepared.length === 0) return;
      await this.index.beginUpdate();
      try {
        for (const item of prepared)
          await this.index.upsertItem({ id: item.id, vector: item.vector, metadata: {} });
        await this.index.endUpdate();
      } catch (err) {
        this.index.cancelUpdate();
        throw err;
      }
      await this.refreshCount();
    });
  }

  /**
   * Stores the vector of each pair's first id also under its second (chunks a delete moved to a rewritten
   * segment), in one atomic index rewrite; pairs whose first id has no vector are skipped.
   */
  async copy(pairs: [from: string, to: string][]): Promise<void> {
    return this.exclusive(async () => {
      if (pairs.length === 0) return;
      await this.index.beginUpdate();
      try {
        for (const [from, to] of pairs) {
          const item = await this.index.getItem(from);
          if (item) await this.index.upsertItem({ id: this.checkId(to), vector: item.vector, metadata: {} });
        }
        await this.index.endUpdate();
      } catch (err) {
        this.index.cancelUpdate();
        throw err;
      }
      await this.refreshCount();
    });
  }

  /** Removes vectors; unknown ids are ignored. */
  async delete(ids: string[]): Promise<void> {
    return this.exclusive(async () => {
      if (ids.length === 0) return;
      await this.index.deleteItems(new Set(ids));
      await this.refreshCount();
    });
  }

  /**
   * The `k` stored vectors most similar to `vector` (cosine, best first), optionally only ids accepted by
   * `filter`. Stored zero vectors never match.
   */
  async query(vector: number[], k: number, filter?: (id: string) => boolean): Promise<VectorHit[]> {
    this.checkVector(vector);
    if (!Number.isInteger(k) || k < 0)
      throw new RlmError('BAD_INPUT', `k must be a non-negative integer, got ${k}`);
    return this.exclusive(async () => {
      if (k === 0 || this.count === 0) return [];
      // vectra filters on metadata, not with a predicate, so widen top-k until enough ids pass the
      // filter or everything has been ranked.
      let want = filter ? Math.min(this.count, Math.max(k * 4, k + 32)) : Math.min(k, this.count);
      for (;;) {
        const results = await this.index.queryItems(vector, '', want);
        const hits: VectorHit[] = [];
        for (const r of results) {
          if (Number.isNaN(r.score)) continue;
          if (filter && !filter(r.item.id)) continue;
          hits.push({ id: r.item.id, score: r.score });
          if (hits.length === k) return hits;
        }
        if (want >= this.count) return hits;
        want = Math.min(this.count, want * 4);
      }
    });
  }

  /** True when a vector is stored for `id`. */
  async has(id: string): Promise<boolean> {
    return (await this.index.getItem(id)) !== undefined;
  }

  /** All stored ids, e.g. for reconciling with the chunk table. */
  async ids(): Promise<string[]> {
    return (await this.index.listItems()).map((item) => item.id);
  }

  private async refreshCount(): Promise<void> {
    this.count = (await this.index.getIndexStats()).items;
  }

  private checkId(id: string): string {
    if (typeof id !== 'string' || id === '')
      throw new RlmError('BAD_INPUT', 'vector id must be a non-empty string');
    return id;
  }

  private checkVector(vector: number[]): number[] {
    if (!Array.isArray(vector) || vector.length !== this.dimensions) {
      throw new RlmError(
        'BAD_INPUT',
        `vector has ${Array.isArray(vector) ? vector.length : 'no'} dimensions; this index (${this.embedder}) holds ${this.dimensions}`,
      );
    }
    for (const x of vector) {
      if (typeof x !== 'number' || !Number.isFinite(x))
        throw new RlmError('BAD_INPUT', 'vector has a non-finite component');
    }
    return vector;
  }

  /** Runs `fn` after every earlier operation, so vectra never sees two updates at once. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
