/**
 * The chunk graph's write path, shared by the directory store and the in-memory store: ingest (scan, read,
 * chunk, index, link, commit in segment-sized steps), removal, manual links. Where the bytes go is the
 * {@link Persistence}'s business; this class never touches the file system itself.
 */
import { resolve } from 'node:path';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { documentText } from '../document-text.ts';
import { byPart, checkDocumentId, checkManualLink, isPart, touchesDocument } from '../graph-rules.ts';
import { documentIdFor } from '../ingest/files.ts';
import {
  buildRecords,
  type ExactDocument,
  emptyIngestReport,
  exactRecords,
  type PendingDoc,
  prepareDocument,
} from '../ingest/prepare.ts';
import { type IngestTarget, importInto, ingestPathsInto, throwIfAborted } from '../ingest/run.ts';
import { documentFilter, linkEnd, requireLinkEnd } from '../read.ts';
import type { Embedder } from '../search/embedders/types.ts';
import type { SignedChunk } from '../search/linker.ts';
import { buildTerms } from '../search/segment.ts';
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
import type { DocumentCatalog } from './catalog.ts';
import { segmentFiles } from './format-segment.ts';
import { ChunkGraph, chunkKey } from './graph.ts';
import { LinkWindow } from './link-window.ts';
import { MemoryTail } from './memory-tail.ts';
import { planMerges } from './merge-plan.ts';
import type { CommittedState, Persistence } from './persistence.ts';
import { purgeSegments, rewriteSegments } from './purge.ts';
import { segmentName } from './segment.ts';
import { embedRecords } from './segment-builder.ts';

/**
 * How long a store keeps its link window after its last write. Loading the window again costs a
 * write some 0.4 s on a 100 MB store (its newest segments' terms and signatures); holding it costs some
 * 25 MB. A run of small writes (a server's `rlm_ingest` of one note after another, a hook's sessions)
 * keeps it; a process that wrote once and lives on (a server, a library's host) gives it back.
 */
export const LINK_WINDOW_IDLE_MS = 30_000;

/**
 * Reads of a store whose files a writer removed meanwhile, at most: each retry is on a newer commit, so
 * only a writer committing faster than a reader can read one segment exhausts them.
 */
const READ_ATTEMPTS = 5;

export class BaseStore implements ChunkStoreApi {
  protected readonly graph: ChunkGraph;
  protected state: CommittedState;
  private writing: Promise<unknown> = Promise.resolve();
  /** The chunks new ones are linked against, kept across the writes of one run (see {@link LINK_WINDOW_IDLE_MS}). */
  private window: LinkWindow | undefined;
  private windowAt = -1;
  /** Drops the window {@link LINK_WINDOW_IDLE_MS} after the last write. */
  private windowIdle: ReturnType<typeof setTimeout> | undefined;

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
    this.graph = new ChunkGraph(this.tail, this.tail.view(state), (ids) => persistence.touch(ids), {
      filesBacked: persistence.inFiles,
    });
    if (vectors) this.graph.vectors = vectors;
  }

  // ---- reads -------------------------------------------------------------------------------------

  /** The embedder behind vector search (its spec), or null: without one, search and recall match words. */
  get embedder(): string | null {
    return this.state.embedder?.spec ?? null;
  }

  stats(): StoreStats {
    return { ...this.graph.stats(), schema: this.state.schema };
  }
  documents(): DocumentRecord[] {
    return this.graph.documents();
  }
  getChunk(id: string): Promise<ChunkRecord | undefined> {
    return this.reading(() => this.graph.getChunk(id));
  }
  documentChunks(documentId: string): Promise<ChunkRecord[]> {
    return this.reading(() => this.graph.documentChunks(documentId));
  }
  readDocument(idOrPath: string, range?: TextRange): Promise<DocumentText | undefined> {
    return this.reading(() => {
      const docs = this.namedNow(idOrPath);
      return docs.length === 0 ? undefined : documentText((id) => this.graph.getChunk(id), docs, range);
    });
  }
  neighbors(id: string, type?: LinkType): Promise<Link[]> {
    return this.reading(() => this.graph.neighbors(id, type));
  }
  search(query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
    return this.reading(async () =>
      this.graph.search(query, await documentFilter({ documentsNamed: (n) => this.namedNow(n) }, opts)),
    );
  }
  grep(pattern: string, opts?: GrepOptions): Promise<GrepResult> {
    return this.reading(() => this.graph.grep(pattern, opts));
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

  /**
   * Runs a read of segment files, and again on the latest state when it failed on a file a newer commit
   * removed. Readers take no lock: a writer in another process may commit and delete the segments this
   * store's state names between its last refresh and its read. A STORE_CORRUPT under a state that is
   * still the latest is real damage and is thrown as it is (it names the file and `rlm repair`).
   */
  protected async reading<T>(read: () => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (err) {
        if (!isRlmError(err, 'STORE_CORRUPT') || attempt >= READ_ATTEMPTS) throw err;
        if (!(await this.moveToLatest())) throw err;
        await this.syncJournal();
      }
    }
  }

  /** Picks up commits (and remembered memories) made by other processes since this store was opened. */
  async refresh(): Promise<void> {
    await this.moveToLatest();
    await this.syncJournal();
  }

  /** Moves to the latest committed state; false when this store already has it. */
  private async moveToLatest(): Promise<boolean> {
    if ((await this.persistence.generation()) === this.state.generation) return false;
    const latest = await this.persistence.readState();
    // A commit of this process may have landed while reading: never go back to an older state.
    if (latest.generation <= this.state.generation) return false;
    this.setState(latest);
    return true;
  }

  /**
   * Reads memory journal lines appended since the last look. The journal the state names may be missing:
   * not written yet (nothing to read), or folded into a segment by a commit after this store read its
   * manifest, whose lines are then in that newer state: read it and its journal, or they would be lost.
   */
  protected async syncJournal(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const read = await this.tail.sync(this.persistence);
      if (read === 'missing' && attempt < READ_ATTEMPTS && (await this.moveToLatest())) continue;
      if (read === 'read') this.graph.update(this.tail.view(this.state));
      return;
    }
  }

  async close(): Promise<void> {
    await this.writing.catch(() => undefined);
    this.dropWindow();
    await this.persistence.flush();
    this.graph.close();
  }

  private dropWindow(): void {
    clearTimeout(this.windowIdle);
    this.windowIdle = undefined;
    this.window = undefined;
    this.windowAt = -1;
  }

  protected setState(state: CommittedState): void {
    this.state = state;
    if ((state.memory?.journal ?? null) !== this.tail.journal) this.tail.reset(state.memory?.journal ?? null);
    this.graph.update(this.tail.view(state));
  }

  /**
   * Runs `fn` under the write lock, one writer at a time within this process too. `signal` gives up the
   * wait for the lock (ABORTED, nothing written): a cancelled call must not write once it comes free.
   */
  protected exclusive<T>(command: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const run = async () => {
      clearTimeout(this.windowIdle);
      try {
        if (signal?.aborted)
          throw new RlmError('ABORTED', 'cancelled before it could write; nothing was written');
        const lock = await this.persistence.lock(command, signal);
        try {
          await this.refresh();
          const result = await fn();
          // Best effort, after the command's own commit: a failed merge leaves the store as it was.
          await this.mergeSmallSegments().catch(() => undefined);
          return result;
        } finally {
          await lock.release();
        }
      } finally {
        // Also after a write that never got the lock. Unref'd: a window held for the next write never
        // keeps the process alive.
        if (this.window) this.windowIdle = setTimeout(() => this.dropWindow(), LINK_WINDOW_IDLE_MS).unref();
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
    return this.throughTarget('ingest', opts, (target) => ingestPathsInto(target, paths, opts));
  }

  /**
   * Runs the shared ingest steps (memory/ingest/run.ts) on this store under the lock (`opts.signal`
   * cancels a wait for it); the report gets the store's totals and the time taken.
   */
  private throughTarget(
    command: string,
    opts: IngestOptions,
    run: (target: IngestTarget) => Promise<IngestReport>,
  ): Promise<IngestReport> {
    return this.exclusive(
      command,
      async () => {
        const started = performance.now();
        return this.finishReport(await run(this.target(opts)), started);
      },
      opts.signal,
    );
  }

  /** The store as the shared ingest steps (memory/ingest/run.ts) see it. Call under the lock. */
  private target(opts: IngestOptions): IngestTarget {
    return {
      document: (id) => this.graph.document(id),
      documents: () => this.graph.documents(),
      writeBatch: (docs, report, drop) => this.writeBatch(docs, opts, { report, drop }),
      forget: (docs) => this.forget(docs),
    };
  }

  async ingestText(
    documentId: string,
    text: string,
    opts: IngestOptions & { path?: string } = {},
  ): Promise<IngestReport> {
    checkDocumentId(documentId);
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
    return this.throughTarget('import', opts, (target) => importInto(target, produce, opts));
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
      /** Documents with their records as they are (a copy from another store), written instead of `docs`. */
      exact?: ExactDocument[];
    } = {},
  ): Promise<void> {
    const { report, patch = (next: CommittedState) => next } = extra;
    const state = this.state;
    const name = segmentName(state.nextSegment);
    const createdAt =
      extra.exact?.find((e) => !e.document.memory && e.chunks[0])?.chunks[0]?.createdAt ??
      new Date().toISOString();
    const built = extra.exact
      ? exactRecords(name, extra.exact)
      : buildRecords(name, createdAt, docs, opts.tags ?? []);
    // A copied document replaces any stored one of the same id, as a dropped one would.
    const drop = [
      ...(extra.drop ?? []),
      ...(extra.exact ?? []).flatMap((e) => (state.documents.has(e.document.id) ? [e.document.id] : [])),
    ];
    const records = built.records;
    // Packed as an ingest goes: the one structure of an ingest that grows with the store (catalog.ts).
    const documents = state.documents.copy(true);
    const dropped = drop.flatMap((id) => documents.get(id) ?? []);
    for (const id of drop) documents.delete(id);
    for (const d of built.documents) documents.set(d.id, d);
    const terms = buildTerms(records.map((r) => r.text));
    const alive = (c: SignedChunk) => documents.segmentOf(c.document) === c.segment;
    const window = this.linkWindow();
    // The window learns the new chunks as it links them: a failed commit leaves it ahead of the store.
    this.window = undefined;
    const links = window.link(name, records, terms, alive);
    await this.persistence.writeSegment(name, segmentFiles(name, createdAt, records, terms, links));
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
    // The links of the versions this commit replaces or drops go with them; the new chunks' links come.
    const lost = this.graph.liveLinksTouching([...replaced].flatMap((id) => state.documents.get(id) ?? []));
    await this.commit(
      patch({
        ...state,
        generation: state.generation + 1,
        nextSegment: state.nextSegment + 1,
        documents,
        segments: [...state.segments, name],
        manual: state.manual.filter((l) => !touchesDocument(l, replaced)),
        related: this.graph.countRelated() - lost + links.edges.length,
      }),
    );
    window.keepOnly(new Set(this.state.segments));
    this.window = window;
    this.windowAt = this.state.generation;
  }

  /**
   * The link window over the store as committed, kept across the batches of one ingest and the writes
   * that follow within {@link LINK_WINDOW_IDLE_MS}.
   */
  private linkWindow(): LinkWindow {
    if (this.window && this.windowAt === this.state.generation) return this.window;
    this.window = LinkWindow.load(this.state.segments, (name) => this.graph.segment(name));
    this.windowAt = this.state.generation;
    return this.window;
  }

  /**
   * Writes documents with their chunk records exactly as given (a copy from another store) in one
   * commit, replacing stored versions; related_to links are computed again.
   */
  writeRecords(items: ExactDocument[]): Promise<void> {
    return this.exclusive('copy', () => this.writeBatch([], {}, { exact: items }));
  }

  /** Every hand-made link (supports, contradicts, summarizes), in the order they were set. */
  manualLinks(): Link[] {
    return [...this.state.manual];
  }

  /** Adds hand-made links as given (a copy); links whose ends are missing are skipped. */
  addManualLinks(links: Link[]): Promise<void> {
    return this.exclusive('copy', async () => {
      const kept = links.filter((l) => this.graph.getChunk(l.from) && this.graph.getChunk(l.to));
      const key = (l: Link) => `${l.from} ${l.to} ${l.type}`;
      const have = new Set(this.state.manual.map(key));
      const manual = [...this.state.manual, ...kept.filter((l) => !have.has(key(l)))];
      await this.commit({ ...this.state, generation: this.state.generation + 1, manual });
    });
  }

  /** Access stats of every live chunk read at least once: id, count, last access (epoch ms). */
  accessEntries(): [string, number, number][] {
    const out: [string, number, number][] = [];
    for (const d of this.graph.documents()) {
      for (let i = 0; i < d.chunks; i++) {
        const id = `${d.id}:${i}`;
        const [count, last] = this.persistence.accessRaw(id);
        if (count > 0) out.push([id, count, last]);
      }
    }
    return out;
  }

  /** Adds access stats as given (a copy into a store whose chunks were never read). */
  async setAccessEntries(entries: [string, number, number][]): Promise<void> {
    for (const [id, count, last] of entries) {
      // Reads are counted one by one: count - 1 reads at no time, then the last one.
      if (count > 1)
        this.persistence.touch(
          Array.from({ length: count - 1 }, () => id),
          0,
        );
      this.persistence.touch([id], last);
    }
    await this.persistence.flush();
  }

  /** Drops segments that no longer hold a live chunk, then commits. */
  protected async commit(next: CommittedState): Promise<void> {
    const used = next.documents.segments();
    const state = {
      ...next,
      segments: next.segments.filter((s) => used.has(s)),
      schema: this.persistence.schema,
    };
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
      const docs = this.namedNow(idOrPath);
      if (docs.length === 0) return false;
      await this.forget(docs);
      return true;
    });
  }

  /**
   * The documents `idOrPath` names: a document id (a file's first part takes the other parts along), or
   * every document ingested from that path. Empty when none.
   */
  documentsNamed(idOrPath: string): Promise<DocumentRecord[]> {
    return this.reading(() => this.namedNow(idOrPath));
  }

  /** {@link documentsNamed} as the state in hand has it, for callers already reading or under the lock. */
  protected namedNow(idOrPath: string): DocumentRecord[] {
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
    patch?: (documents: DocumentCatalog) => void,
  ): Promise<void> {
    if (docs.length === 0 && !patch) return;
    const state = this.state;
    const documents = state.documents.copy();
    for (const doc of docs) documents.delete(doc.id);
    patch?.(documents);
    const ids = new Set(docs.map((d) => d.id));
    const lost = this.graph.liveLinksTouching(docs);
    const related = this.graph.countRelated() - lost;
    const purge = await purgeSegments(
      (name) => this.graph.segment(name),
      state.segments,
      ids,
      documents,
      state.nextSegment,
      (name, files) => this.persistence.writeSegment(name, files),
    );
    if (this.vectors) await this.vectors.index.copy(purge.moved);
    this.persistence.forgetAccess(ids);
    await this.commit({
      ...state,
      generation: state.generation + 1,
      nextSegment: purge.nextSegment,
      documents,
      segments: state.segments.map((s) => purge.renamed.get(s) ?? s),
      manual: state.manual.filter((l) => !touchesDocument(l, ids)),
      related,
    });
    // After the commit, so a crash before it leaves the store as it was, vectors included.
    if (this.vectors) {
      const keys = docs.flatMap((d) =>
        Array.from({ length: d.chunks }, (_, i) => chunkKey(d.segment, `${d.id}:${i}`)),
      );
      await this.vectors.index.delete([...keys, ...purge.moved.map(([from]) => from)]);
    }
  }

  /**
   * Merges the store's small segments when there are enough of them (merge-plan.ts), in one commit: their
   * live chunks, links and vectors move to segments of about an ingest batch. Call under the lock.
   */
  protected async mergeSmallSegments(): Promise<void> {
    const state = this.state;
    // A schema 1/2 segment stays as it is until `rlm repair` upgrades it (SCHEMA.md).
    const legacy = new Set(state.legacy ?? []);
    const plan = planMerges(
      state.segments.filter((s) => !legacy.has(s)),
      () => state.documents.chunksBySegment(),
      state.nextSegment,
    );
    if (!plan) return;
    const documents = state.documents.copy();
    const moved = await rewriteSegments(
      (name) => this.graph.segment(name),
      state.segments,
      plan.renamed,
      documents,
      (name, files) => this.persistence.writeSegment(name, files),
    );
    if (this.vectors) await this.vectors.index.copy(moved);
    const segments: string[] = [];
    for (const s of state.segments) {
      // Merged ones take the place of the first of them.
      const to = plan.renamed.get(s) ?? s;
      if (!segments.includes(to)) segments.push(to);
    }
    await this.commit({
      ...state,
      generation: state.generation + 1,
      nextSegment: plan.nextSegment,
      documents,
      segments,
    });
    // After the commit, so a crash before it leaves the store as it was, vectors included.
    if (this.vectors) await this.vectors.index.delete(moved.map(([from]) => from));
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
      [from, to] = [await requireLinkEnd(this, from), await requireLinkEnd(this, to)];
      if (from === to) throw new RlmError('BAD_INPUT', 'a chunk cannot be linked to itself');
      const manual = this.state.manual.filter((l) => !(l.from === from && l.to === to && l.type === type));
      manual.push({ from, to, type, strength });
      await this.commit({ ...this.state, generation: this.state.generation + 1, manual });
    });
  }

  unlink(from: string, to: string, type: 'supports' | 'contradicts'): Promise<boolean> {
    return this.exclusive('link', async () => {
      // A document id means its first chunk, as in link(); an unknown one cannot have a link.
      from = (await linkEnd(this, from)) ?? from;
      to = (await linkEnd(this, to)) ?? to;
      const manual = this.state.manual.filter((l) => !(l.from === from && l.to === to && l.type === type));
      if (manual.length === this.state.manual.length) return false;
      await this.commit({ ...this.state, generation: this.state.generation + 1, manual });
      return true;
    });
  }
}
