/**
 * The chunk graph's write path, shared by the directory store and the in-memory store: ingest (scan, read,
 * chunk, index, link, commit in segment-sized steps), removal, manual links. Where the bytes go is the
 * {@link Persistence}'s business; this class never touches the file system itself.
 */
import { resolve } from 'node:path';
import { RlmError } from '../src/errors.ts';
import type { Embedder } from './embedders/types.ts';
import { documentIdFor, readDocument, scanPaths } from './files.ts';
import { ChunkGraph, chunkKey } from './graph.ts';
import { linkSegment, SignatureIndex, type SignedChunk } from './linker.ts';
import { MemoryTail } from './memory-tail.ts';
import type { CommittedState, Persistence } from './persistence.ts';
import { buildSegment } from './search/bm25.ts';
import { buildMeta, parseChunkId, SEGMENT_VERSION, segmentName } from './segment.ts';
import {
  buildRecords,
  embedRecords,
  emptyIngestReport,
  type PendingDoc,
  prepareDocument,
  vanished,
} from './segment-builder.ts';
import type {
  AccessStats,
  ChunkRecord,
  ChunkStoreApi,
  DocumentRecord,
  GrepOptions,
  GrepResult,
  IngestOptions,
  IngestReport,
  Link,
  LinkType,
  SearchHit,
  SearchOptions,
  StoreStats,
} from './types.ts';
import type { VectorIndex } from './vectors.ts';

/** Text per segment before it is written and committed; bounds what a crash can lose. */
export const SEGMENT_TARGET_CHARS = 16 * 1024 * 1024;

export class BaseStore implements ChunkStoreApi {
  protected readonly graph: ChunkGraph;
  protected state: CommittedState;
  private writing: Promise<unknown> = Promise.resolve();
  private signatures: SignatureIndex | undefined;
  private signaturesAt = -1;

  protected readonly persistence: Persistence;
  protected readonly vectors: { index: VectorIndex; embedder: Embedder } | undefined;
  /** Memories remembered since the last fold, seen by the graph as in-memory segments. */
  protected readonly tail: MemoryTail;

  protected constructor(
    persistence: Persistence,
    state: CommittedState,
    vectors?: { index: VectorIndex; embedder: Embedder },
  ) {
    this.persistence = persistence;
    this.vectors = vectors;
    this.state = state;
    this.tail = new MemoryTail(persistence.source);
    this.tail.reset(state.memory?.journal ?? null);
    this.graph = new ChunkGraph(this.tail, this.tail.view(state), (ids) => persistence.touch(ids));
    if (vectors) this.graph.vectors = vectors;
  }

  // ---- reads -------------------------------------------------------------------------------------

  stats(): StoreStats {
    return { ...this.graph.stats(), schema: this.state.memory ? 2 : 1 };
  }
  documents(): DocumentRecord[] {
    return this.graph.documents();
  }
  getChunk(id: string): ChunkRecord | undefined {
    return this.graph.getChunk(id);
  }
  documentChunks(documentId: string): ChunkRecord[] {
    return this.graph.documentChunks(documentId);
  }
  neighbors(id: string, type?: LinkType): Link[] {
    return this.graph.neighbors(id, type);
  }
  search(query: string, opts?: SearchOptions): Promise<SearchHit[]> {
    return this.graph.search(query, opts);
  }
  grep(pattern: string, opts?: GrepOptions): Promise<GrepResult> {
    return this.graph.grep(pattern, opts);
  }
  touch(ids: string[]): void {
    this.persistence.touch(ids);
  }
  accessStats(id: string): AccessStats {
    return this.persistence.accessStats(id);
  }
  /** Loads the search index ahead of the first search. */
  warm(): void {
    this.graph.warm();
  }

  /** Picks up commits (and remembered memories) made by other processes since this store was opened. */
  async refresh(): Promise<void> {
    if ((await this.persistence.generation()) !== this.state.generation) {
      const latest = await this.persistence.readState();
      // A commit of this process may have landed while reading: never go back to an older state.
      if (latest.generation > this.state.generation) this.setState(latest);
    }
    await this.syncJournal();
  }

  /** Reads memory journal lines appended since the last look. */
  protected async syncJournal(): Promise<void> {
    if (await this.tail.sync(this.persistence)) this.graph.update(this.tail.view(this.state));
  }

  async close(): Promise<void> {
    await this.writing.catch(() => undefined);
    await this.persistence.flush();
    this.graph.close();
  }

  protected setState(state: CommittedState): void {
    this.state = state;
    if ((state.memory?.journal ?? null) !== this.tail.journal) this.tail.reset(state.memory?.journal ?? null);
    this.graph.update(this.tail.view(state));
  }

  /** Runs `fn` under the write lock, one writer at a time within this process too. */
  protected exclusive<T>(command: string, fn: () => Promise<T>): Promise<T> {
    const run = async () => {
      const lock = await this.persistence.lock(command);
      try {
        await this.refresh();
        return await fn();
      } finally {
        await lock.release();
      }
    };
    const result = this.writing.then(run, run);
    this.writing = result.catch(() => undefined);
    return result;
  }

  // ---- ingest ------------------------------------------------------------------------------------

  async ingestPaths(paths: string[], opts: IngestOptions = {}): Promise<IngestReport> {
    if (paths.length === 0)
      throw new RlmError('BAD_INPUT', 'nothing to ingest: give at least one file or folder');
    return this.exclusive('ingest', async () => {
      const started = performance.now();
      const { files, notes } = await scanPaths(paths);
      const report = emptyIngestReport(notes);
      const bytesTotal = files.reduce((s, f) => s + f.bytes, 0);
      let bytesDone = 0;
      let pending: PendingDoc[] = [];
      let pendingChars = 0;
      for (const [i, file] of files.entries()) {
        throwIfAborted(opts.signal);
        opts.onProgress?.({
          phase: 'read',
          filesDone: i,
          filesTotal: files.length,
          bytesDone,
          bytesTotal,
          current: file.path,
        });
        const doc = await readDocument(file.path);
        bytesDone += file.bytes;
        if ('binary' in doc) {
          report.notes.push({ path: file.path, note: doc.note });
          continue;
        }
        const id = documentIdFor(file.path);
        const prepared = prepareDocument(
          this.graph.document(id),
          id,
          file.path,
          doc.text,
          doc.notes,
          opts,
          report,
        );
        if (!prepared) continue;
        pending.push(prepared);
        pendingChars += doc.text.length;
        if (pendingChars >= (opts.segmentChars ?? SEGMENT_TARGET_CHARS)) {
          opts.onProgress?.({
            phase: 'commit',
            filesDone: i + 1,
            filesTotal: files.length,
            bytesDone,
            bytesTotal,
          });
          await this.writeBatch(pending, opts);
          pending = [];
          pendingChars = 0;
        }
      }
      opts.onProgress?.({
        phase: 'commit',
        filesDone: files.length,
        filesTotal: files.length,
        bytesDone,
        bytesTotal,
      });
      if (pending.length > 0) await this.writeBatch(pending, opts);
      if (opts.prune) {
        const roots = paths.map((p) => resolve(p));
        const gone = vanished(this.graph.documents(), roots, new Set(files.map((f) => f.path)));
        if (gone.length > 0) await this.forget(gone);
        report.removed = gone.length;
      }
      return this.finishReport(report, started);
    });
  }

  async ingestText(
    documentId: string,
    text: string,
    opts: IngestOptions & { path?: string } = {},
  ): Promise<IngestReport> {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(documentId)) {
      throw new RlmError(
        'BAD_INPUT',
        `document id "${documentId}" must be 1-100 letters, digits, '.', '_' or '-'`,
      );
    }
    return this.exclusive('ingest', async () => {
      const started = performance.now();
      const report = emptyIngestReport([]);
      const prepared = prepareDocument(
        this.graph.document(documentId),
        documentId,
        opts.path ?? null,
        text,
        [],
        opts,
        report,
      );
      if (prepared) await this.writeBatch([prepared], opts);
      return this.finishReport(report, started);
    });
  }

  private finishReport(report: IngestReport, started: number): IngestReport {
    const s = this.graph.stats();
    return {
      ...report,
      documents: s.documents,
      chunks: s.chunks,
      links: s.links,
      tokens: s.tokens,
      elapsedMs: Math.round(performance.now() - started),
    };
  }

  /** Writes one segment for `docs` and commits it. */
  protected async writeBatch(
    docs: PendingDoc[],
    opts: IngestOptions,
    patch: (next: CommittedState) => CommittedState = (next) => next,
  ): Promise<void> {
    const state = this.state;
    const name = segmentName(state.nextSegment);
    const createdAt = new Date().toISOString();
    const built = buildRecords(name, createdAt, docs, opts.tags ?? []);
    const records = built.records;
    const documents = new Map(state.documents);
    for (const d of built.documents) documents.set(d.id, d);
    const bm25 = buildSegment(records.map((r) => ({ id: chunkKey(name, r.id), text: r.text })));
    const index = this.graph.indexWith(name, bm25);
    const alive = (c: SignedChunk) => documents.get(c.document)?.segment === c.segment;
    const links = linkSegment(index, this.signatureIndex(), name, records, alive);
    await this.persistence.writeSegment(name, {
      chunks: { version: SEGMENT_VERSION, segment: name, chunks: records },
      meta: buildMeta(name, createdAt, records),
      bm25,
      links: { version: SEGMENT_VERSION, segment: name, ...links },
    });
    if (this.vectors) {
      const stale = docs.flatMap((d) => {
        const old = state.documents.get(d.record.id);
        return old
          ? Array.from({ length: old.chunks }, (_, i) => chunkKey(old.segment, `${old.id}:${i}`))
          : [];
      });
      await embedRecords(this.vectors, name, records, stale, () => throwIfAborted(opts.signal));
    }
    const replaced = new Set(docs.filter((d) => d.replaced).map((d) => d.record.id));
    await this.commit(
      patch({
        ...state,
        generation: state.generation + 1,
        nextSegment: state.nextSegment + 1,
        documents,
        segments: [...state.segments, name],
        manual: state.manual.filter((l) => !touchesDocument(l, replaced)),
      }),
    );
    this.signaturesAt = this.state.generation;
  }

  /** Signatures of every chunk in the store, kept across the batches of one ingest. */
  private signatureIndex(): SignatureIndex {
    if (this.signatures && this.signaturesAt === this.state.generation) return this.signatures;
    const signatures = new SignatureIndex();
    for (const segment of this.state.segments) {
      const file = this.persistence.source.links(segment);
      for (const d of this.persistence.source.meta(segment).docs) {
        for (let i = 0; i < d.count; i++) {
          const terms = file.signatures[d.first + i] ?? [];
          signatures.add({ id: `${d.id}:${i}`, segment, document: d.id, ordinal: i, terms });
        }
      }
    }
    this.signatures = signatures;
    this.signaturesAt = this.state.generation;
    return signatures;
  }

  /** Drops segments that no longer hold a live chunk, then commits. */
  protected async commit(next: CommittedState): Promise<void> {
    const used = new Set([...next.documents.values()].map((d) => d.segment));
    const state = { ...next, segments: next.segments.filter((s) => used.has(s)) };
    await this.persistence.commit(state);
    this.setState(state);
  }

  // ---- removal and manual links ------------------------------------------------------------------

  removeDocument(idOrPath: string): Promise<boolean> {
    return this.exclusive('rm', async () => {
      const doc = this.findDocument(idOrPath);
      if (!doc) return false;
      await this.forget([doc]);
      return true;
    });
  }

  /** Removes documents, their chunks, vectors and hand-made links, in one commit. Call under the lock. */
  protected async forget(docs: DocumentRecord[]): Promise<void> {
    const documents = new Map(this.state.documents);
    for (const doc of docs) documents.delete(doc.id);
    if (this.vectors) {
      const keys = docs.flatMap((d) =>
        Array.from({ length: d.chunks }, (_, i) => chunkKey(d.segment, `${d.id}:${i}`)),
      );
      await this.vectors.index.delete(keys);
    }
    const ids = new Set(docs.map((d) => d.id));
    await this.commit({
      ...this.state,
      generation: this.state.generation + 1,
      documents,
      manual: this.state.manual.filter((l) => !touchesDocument(l, ids)),
    });
  }

  /** A document by id, or by the path it was ingested from. */
  findDocument(idOrPath: string): DocumentRecord | undefined {
    const byId = this.graph.document(idOrPath);
    if (byId) return byId;
    const candidates = [idOrPath];
    try {
      candidates.push(documentIdFor(idOrPath));
    } catch {
      // not a usable path
    }
    return this.graph.documents().find((d) => d.path === idOrPath || candidates.includes(d.id));
  }

  async link(from: string, to: string, type: 'supports' | 'contradicts', strength = 1): Promise<void> {
    checkManualLink(type, strength);
    return this.exclusive('link', async () => {
      for (const id of [from, to]) {
        if (!this.graph.getChunk(id)) throw new RlmError('NOT_FOUND', `no chunk with id ${id}`);
      }
      if (from === to) throw new RlmError('BAD_INPUT', 'a chunk cannot be linked to itself');
      const manual = this.state.manual.filter((l) => !(l.from === from && l.to === to && l.type === type));
      manual.push({ from, to, type, strength });
      await this.commit({ ...this.state, generation: this.state.generation + 1, manual });
    });
  }

  unlink(from: string, to: string, type: 'supports' | 'contradicts'): Promise<boolean> {
    return this.exclusive('link', async () => {
      const manual = this.state.manual.filter((l) => !(l.from === from && l.to === to && l.type === type));
      if (manual.length === this.state.manual.length) return false;
      await this.commit({ ...this.state, generation: this.state.generation + 1, manual });
      return true;
    });
  }
}

function touchesDocument(link: Link, docs: Set<string>): boolean {
  if (docs.size === 0) return false;
  return docs.has(parseChunkId(link.from)?.document ?? '') || docs.has(parseChunkId(link.to)?.document ?? '');
}

function checkManualLink(type: string, strength: number): void {
  if (type !== 'supports' && type !== 'contradicts') {
    throw new RlmError(
      'BAD_INPUT',
      `link type must be supports or contradicts (the others are computed), got ${type}`,
    );
  }
  if (!(strength > 0 && strength <= 1))
    throw new RlmError('BAD_INPUT', `link strength must be in (0, 1], got ${strength}`);
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new RlmError('ABORTED', 'ingest was cancelled; committed files are kept, re-run to finish');
}
