/**
 * The chunk graph's write path, shared by the directory store and the in-memory store: ingest (scan, read,
 * chunk, index, link, commit in segment-sized steps), removal, manual links. Where the bytes go is the
 * {@link Persistence}'s business; this class never touches the file system itself.
 */
import { resolve } from 'node:path';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { readDocumentParts } from '../ingest/file-parts.ts';
import { documentIdFor, scanPaths } from '../ingest/files.ts';
import { linkEnd, unknownId } from '../read.ts';
import { buildSegment } from '../search/bm25.ts';
import type { Embedder } from '../search/embedders/types.ts';
import { linkSegment, SignatureIndex, type SignedChunk } from '../search/linker.ts';
import type { VectorIndex } from '../search/vectors.ts';
import type {
  AccessStats,
  ChunkRecord,
  ChunkStoreApi,
  DocumentRecord,
  DocumentText,
  GrepOptions,
  GrepResult,
  ImportItem,
  IngestOptions,
  IngestReport,
  Link,
  LinkType,
  SearchHit,
  SearchOptions,
  StoreStats,
  TextRange,
} from '../types.ts';
import { documentText } from './document-text.ts';
import { ChunkGraph, chunkKey } from './graph.ts';
import { MemoryTail } from './memory-tail.ts';
import type { CommittedState, Persistence } from './persistence.ts';
import { purgeSegments } from './purge.ts';
import { buildMeta, parseChunkId, SEGMENT_VERSION, segmentName } from './segment.ts';
import {
  buildRecords,
  embedRecords,
  emptyIngestReport,
  type PendingDoc,
  prepareDocument,
  prepareImported,
  vanished,
} from './segment-builder.ts';

/**
 * Text per segment before it is written and committed; bounds what a crash can lose and the memory an
 * ingest holds (a segment's text, records and index are alive at once: several times this size; its
 * files are written in pieces, see memory/json-pieces.ts).
 * 4 MiB keeps a 100 MB ingest's peak well under its size in transient memory; more, smaller segments
 * cost little, since search statistics are summed over segments anyway.
 */
const SEGMENT_TARGET_CHARS = 4 * 1024 * 1024;

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

  /** The embedder behind vector search (its spec), or null: without one, search and recall match words. */
  get embedder(): string | null {
    return this.state.embedder?.spec ?? null;
  }

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
  async readDocument(idOrPath: string, range?: TextRange): Promise<DocumentText | undefined> {
    const docs = this.documentsNamed(idOrPath);
    return docs.length === 0 ? undefined : documentText((id) => this.graph.getChunk(id), docs, range);
  }
  neighbors(id: string, type?: LinkType): Link[] {
    return this.graph.neighbors(id, type);
  }
  search(query: string, opts?: SearchOptions): Promise<SearchHit[]> {
    return this.graph.search(query, opts);
  }
  async grep(pattern: string, opts?: GrepOptions): Promise<GrepResult> {
    try {
      return await this.graph.grep(pattern, opts);
    } catch (err) {
      // A writer in another process committed and removed a segment this store's state still names:
      // read the new state and grep again. Readers take no lock, so this is their way to keep up.
      if (!isRlmError(err, 'RUNTIME') || err.details?.errno !== 'ENOENT') throw err;
      await this.refresh();
      return this.graph.grep(pattern, opts);
    }
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
      const { files, notes, passedOver } = await scanPaths(paths, {
        ...(opts.includeHidden ? { includeHidden: true } : {}),
        ...(opts.noIgnore ? { noIgnore: true } : {}),
        ...(opts.exclude ? { exclude: opts.exclude } : {}),
      });
      const report = emptyIngestReport(notes);
      report.passedOver = passedOver;
      const bytesTotal = files.reduce((s, f) => s + f.bytes, 0);
      let bytesDone = 0;
      let pending: PendingDoc[] = [];
      let pendingChars = 0;
      const staleParts: DocumentRecord[] = [];
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
        // A big file comes in parts (documents ID, ID.p2, ...), committed as they fill segments.
        const base = documentIdFor(file.path);
        let part = 0;
        for await (const doc of readDocumentParts(file.path, file.bytes, opts.partBytes)) {
          if (!('text' in doc)) {
            report.notes.push({ path: file.path, note: doc.note });
            break;
          }
          const id = part === 0 ? base : `${base}.p${part + 1}`;
          part++;
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
              filesDone: i,
              filesTotal: files.length,
              bytesDone,
              bytesTotal,
            });
            await this.writeBatch(pending, opts, { report });
            pending = [];
            pendingChars = 0;
          }
        }
        bytesDone += file.bytes;
        // Parts past the file's new end (it shrank) go, as a replaced document's old chunks do.
        for (let n = Math.max(part, 1) + 1; ; n++) {
          const old = this.graph.document(`${base}.p${n}`);
          if (!old) break;
          staleParts.push(old);
        }
      }
      opts.onProgress?.({
        phase: 'commit',
        filesDone: files.length,
        filesTotal: files.length,
        bytesDone,
        bytesTotal,
      });
      if (pending.length > 0) await this.writeBatch(pending, opts, { report });
      if (staleParts.length > 0) await this.forget(staleParts);
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
      if (prepared) await this.writeBatch([prepared], opts, { report });
      return this.finishReport(report, started);
    });
  }

  /**
   * Writes what an importer yields (documents it chunked itself, ids to drop) under the write lock, in
   * segment-sized commits of whole documents. `produce` sees the documents committed when the lock was
   * taken. Drops are committed with the next batch, so a replacement is never half-visible.
   */
  importDocuments(
    produce: (documents: DocumentRecord[]) => AsyncIterable<ImportItem>,
    opts: Pick<IngestOptions, 'segmentChars' | 'signal'> = {},
  ): Promise<IngestReport> {
    return this.exclusive('import', async () => {
      const started = performance.now();
      const report = emptyIngestReport([]);
      let pending: PendingDoc[] = [];
      let drops: string[] = [];
      let chars = 0;
      const flush = async () => {
        if (pending.length > 0) await this.writeBatch(pending, opts, { report, drop: drops });
        else if (drops.length > 0) await this.forget(drops.flatMap((id) => this.graph.document(id) ?? []));
        report.removed += drops.length;
        pending = [];
        drops = [];
        chars = 0;
      };
      for await (const item of produce(this.graph.documents())) {
        throwIfAborted(opts.signal);
        for (const id of item.drop ?? []) if (this.graph.document(id)) drops.push(id);
        const doc = item.add && prepareImported(this.graph.document(item.add.id), item.add, report);
        if (doc) pending.push(doc);
        // An unchanged document that was also to be dropped is kept: it is its own replacement.
        else if (item.add) drops = drops.filter((id) => id !== item.add!.id);
        chars += item.add?.text.length ?? 0;
        if (chars >= (opts.segmentChars ?? SEGMENT_TARGET_CHARS)) await flush();
      }
      await flush();
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

  /**
   * Writes one segment for `docs` and commits it, dropping the documents `extra.drop` in the same commit;
   * `extra.patch` adds what a caller commits along (memory state) to the same manifest write. With a
   * `report`, a failing embedder (a dead endpoint) does not fail the batch: it is committed without
   * vectors, the rest of the ingest skips embedding, BM25 search keeps working, and the report's warning
   * says how to rebuild or drop the vectors.
   */
  protected async writeBatch(
    docs: PendingDoc[],
    opts: IngestOptions,
    extra: {
      report?: IngestReport;
      drop?: string[];
      patch?: (next: CommittedState) => CommittedState;
    } = {},
  ): Promise<void> {
    const { report, drop = [], patch = (next: CommittedState) => next } = extra;
    const state = this.state;
    const name = segmentName(state.nextSegment);
    const createdAt = new Date().toISOString();
    const built = buildRecords(name, createdAt, docs, opts.tags ?? []);
    const records = built.records;
    const documents = new Map(state.documents);
    const dropped = drop.flatMap((id) => documents.get(id) ?? []);
    for (const id of drop) documents.delete(id);
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
    if (this.vectors && report?.warnings === undefined) {
      const stale = [...docs.map((d) => d.record.id), ...dropped.map((d) => d.id)].flatMap((id) => {
        const old = state.documents.get(id);
        return old
          ? Array.from({ length: old.chunks }, (_, i) => chunkKey(old.segment, `${old.id}:${i}`))
          : [];
      });
      try {
        await embedRecords(this.vectors, name, records, stale, () => throwIfAborted(opts.signal));
      } catch (err) {
        if (report === undefined || isRlmError(err, 'ABORTED')) throw err;
        const spec = this.vectors.embedder.name;
        report.warnings = [
          `the embedder ${spec} failed (${(err as Error).message}); the documents are searchable with BM25 but have no vectors. ` +
            `When it works again, \`rlm repair --embedder ${spec}\` rebuilds them; \`rlm repair --embedder none\` removes vector search.`,
        ];
      }
    }
    const replaced = new Set([...docs.filter((d) => d.replaced).map((d) => d.record.id), ...drop]);
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

  /**
   * Forgets a document by id, or every document (all parts of a big file) ingested from a path; a file's
   * id (the first part's) also takes its other parts. False when there is none.
   */
  removeDocument(idOrPath: string): Promise<boolean> {
    return this.exclusive('rm', async () => {
      const docs = this.documentsNamed(idOrPath);
      if (docs.length === 0) return false;
      await this.forget(docs);
      return true;
    });
  }

  /**
   * The documents `idOrPath` names: a document id (a file's first part takes the other parts along), or
   * every document ingested from that path. Empty when none.
   */
  protected documentsNamed(idOrPath: string): DocumentRecord[] {
    const byId = this.graph.document(idOrPath);
    if (byId) return isPart(byId.id) ? [byId] : [byId, ...this.partsAfter(byId.id)];
    const abs = resolve(idOrPath);
    const fromPath = this.graph
      .documents()
      .filter((d) => d.path !== null && (d.path === idOrPath || d.path === abs));
    if (fromPath.length > 0) return fromPath.sort(byPart);
    const found = this.findDocument(idOrPath);
    return found ? [found, ...this.partsAfter(found.id)] : [];
  }

  /** Parts `ID.p2`, `ID.p3`, … of a file stored in parts, in order. */
  private partsAfter(id: string): DocumentRecord[] {
    const out: DocumentRecord[] = [];
    for (let n = 2; ; n++) {
      const part = this.graph.document(`${id}.p${n}`);
      if (!part) return out;
      out.push(part);
    }
  }

  /**
   * Deletes documents for good, in one commit: their records, hand-made links and vectors, their access
   * stats, and their text from every segment they shared with documents that stay (rewritten without it,
   * see purge.ts). `patch` changes other records in the same commit. Call under the lock.
   */
  protected async forget(
    docs: DocumentRecord[],
    patch?: (documents: Map<string, DocumentRecord>) => void,
  ): Promise<void> {
    if (docs.length === 0 && !patch) return;
    const state = this.state;
    const documents = new Map(state.documents);
    for (const doc of docs) documents.delete(doc.id);
    patch?.(documents);
    const ids = new Set(docs.map((d) => d.id));
    const purge = purgeSegments(this.persistence.source, state.segments, ids, documents, state.nextSegment);
    for (const [name, files] of purge.files) await this.persistence.writeSegment(name, files);
    if (this.vectors) await this.vectors.index.copy(purge.moved);
    this.persistence.forgetAccess(ids);
    await this.commit({
      ...state,
      generation: state.generation + 1,
      nextSegment: purge.nextSegment,
      documents,
      segments: state.segments.map((s) => purge.renamed.get(s) ?? s),
      manual: state.manual.filter((l) => !touchesDocument(l, ids)),
    });
    // After the commit, so a crash before it leaves the store as it was, vectors included.
    if (this.vectors) {
      const keys = docs.flatMap((d) =>
        Array.from({ length: d.chunks }, (_, i) => chunkKey(d.segment, `${d.id}:${i}`)),
      );
      await this.vectors.index.delete([...keys, ...purge.moved.map(([from]) => from)]);
    }
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
      const ends = [from, to].map((id) => {
        const end = linkEnd(this, id);
        if (end === undefined) throw unknownId(id, 'a document id stands for its first chunk');
        return end;
      });
      [from, to] = ends as [string, string];
      if (from === to) throw new RlmError('BAD_INPUT', 'a chunk cannot be linked to itself');
      const manual = this.state.manual.filter((l) => !(l.from === from && l.to === to && l.type === type));
      manual.push({ from, to, type, strength });
      await this.commit({ ...this.state, generation: this.state.generation + 1, manual });
    });
  }

  unlink(from: string, to: string, type: 'supports' | 'contradicts'): Promise<boolean> {
    return this.exclusive('link', async () => {
      // A document id means its first chunk, as in link(); an unknown one cannot have a link.
      from = linkEnd(this, from) ?? from;
      to = linkEnd(this, to) ?? to;
      const manual = this.state.manual.filter((l) => !(l.from === from && l.to === to && l.type === type));
      if (manual.length === this.state.manual.length) return false;
      await this.commit({ ...this.state, generation: this.state.generation + 1, manual });
      return true;
    });
  }
}

/** `ID.pN`: a later part of a file stored in parts. */
function isPart(id: string): boolean {
  return /\.p\d+$/.test(id);
}

/** A file's parts in order: `ID`, `ID.p2`, `ID.p3`, … */
function byPart(a: DocumentRecord, b: DocumentRecord): number {
  const n = (d: DocumentRecord) => Number(/\.p(\d+)$/.exec(d.id)?.[1] ?? 1);
  return n(a) - n(b);
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

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new RlmError('ABORTED', 'ingest was cancelled; committed files are kept, re-run to finish');
}
