/**
 * The chunk graph in PostgreSQL: reads, search, grep, ingest, removal and hand-made links. Every read
 * asks the database, so all processes and machines sharing the store see each commit at once; writes are
 * transactions (memory/postgres/write.ts), never a store-wide lock.
 */
import { resolve } from 'node:path';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { documentText } from '../document-text.ts';
import {
  byPart,
  checkDocumentId,
  checkManualLink,
  isPart,
  parseChunkId,
  partsAfter,
  positionLinks,
} from '../graph-rules.ts';
import { GrepRunner } from '../grep/grep.ts';
import { documentIdFor } from '../ingest/files.ts';
import {
  type ExactDocument,
  emptyIngestReport,
  exactRecords,
  type PendingDoc,
  prepareDocument,
} from '../ingest/prepare.ts';
import { importInto, ingestPathsInto } from '../ingest/run.ts';
import { documentFilter, linkEnd, requireLinkEnd } from '../read.ts';
import { reciprocalRankFusion } from '../search/fusion.ts';
import { passage } from '../search/passage.ts';
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
import { AccessBuffer } from './access.ts';
import { commitWrite, pipelinedWrites, prepareWrite, writeTx } from './batch-writes.ts';
import type { Db, Sql } from './db.ts';
import { grepStore } from './grep.ts';
import { LiveIndex } from './live-index.ts';
import { lockFilesToDelete } from './locks.ts';
import { mergeSegments } from './merge.ts';
import {
  CHUNK_COLUMNS,
  type ChunkRow,
  chunkOf,
  DOCUMENT_COLUMNS,
  type DocumentRow,
  documentOf,
} from './rows.ts';
import { type Capabilities, PG_SCHEMA_VERSION } from './schema.ts';
import { checkK, type Ranked, type RankedRow, type RankOptions, rankChunks } from './search.ts';
import { embedTexts, type StoreVectors, vectorChunks } from './vectors.ts';
import {
  type BatchVectors,
  deleteDocuments,
  documentsById,
  forgetAccess,
  insertBatch,
  lockDocuments,
} from './write.ts';

const PREVIEW_CHARS = 200;
const BIG_WRITE_CHUNKS = 100;
/** Least time between two ANALYZE runs of one process after big writes. */
const ANALYZE_EVERY_MS = 30_000;

export class PostgresBase implements ChunkStoreApi {
  /** The store's URL, password hidden: what messages and status show. */
  readonly location: string;
  protected readonly db: Db;
  protected readonly caps: Capabilities;
  /** The store's embedder, when it has one: vectors are written with every chunk and searched. */
  protected readonly vectors: StoreVectors | undefined;
  /** This process's copy of the search index, kept current from the store's change feed. */
  protected readonly live = new LiveIndex();
  protected readonly access: AccessBuffer;
  #grep: GrepRunner | undefined;
  #analyzedAt = 0;
  #closed = false;

  protected constructor(db: Db, caps: Capabilities, vectors?: StoreVectors) {
    this.db = db;
    this.caps = caps;
    this.vectors = vectors;
    this.location = db.target.label;
    this.access = new AccessBuffer(db);
  }

  // ---- reads -------------------------------------------------------------------------------------

  async stats(): Promise<StoreStats> {
    const { rows } = await this.db.query<{
      documents: number;
      chunks: number | null;
      tokens: number | null;
      bytes: number | null;
      follows: number | null;
      related: number;
      manual: number;
    }>(
      `SELECT count(*) AS documents, sum(chunks) AS chunks, sum(tokens) AS tokens, sum(bytes) AS bytes,
              sum(greatest(chunks - 1, 0)) AS follows,
              (SELECT count(*) FROM related r JOIN chunks a ON a.seq = r.from_seq JOIN chunks b ON b.seq = r.to_seq) AS related,
              (SELECT count(*) FROM manual_links) AS manual
       FROM documents`,
    );
    const r = rows[0]!;
    return {
      documents: r.documents,
      chunks: r.chunks ?? 0,
      links: (r.follows ?? 0) + r.related + r.manual,
      tokens: r.tokens ?? 0,
      bytes: r.bytes ?? 0,
      schema: PG_SCHEMA_VERSION,
    };
  }

  async documents(): Promise<DocumentRecord[]> {
    const { rows } = await this.db.query<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents ORDER BY first_seq`,
    );
    return rows.map(documentOf);
  }

  /** One document by id. */
  async document(id: string, sql: Sql = this.db): Promise<DocumentRecord | undefined> {
    return (await documentsById(sql, [id])).get(id);
  }

  async getChunk(id: string): Promise<ChunkRecord | undefined> {
    const parsed = parseChunkId(id);
    if (!parsed) return undefined;
    const { rows } = await this.db.query<ChunkRow>(
      `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.document = $1 AND c.ordinal = $2`,
      [parsed.document, parsed.ordinal],
    );
    return rows[0] ? chunkOf(rows[0]) : undefined;
  }

  async documentChunks(documentId: string): Promise<ChunkRecord[]> {
    const { rows } = await this.db.query<ChunkRow>(
      `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.document = $1 ORDER BY c.ordinal`,
      [documentId],
    );
    return rows.map(chunkOf);
  }

  async readDocument(idOrPath: string, range?: TextRange): Promise<DocumentText | undefined> {
    const docs = await this.documentsNamed(idOrPath);
    if (docs.length === 0) return undefined;
    const { rows } = await this.db.query<ChunkRow>(
      `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.document = ANY($1::text[])`,
      [docs.map((d) => d.id)],
    );
    const chunks = new Map(rows.map((r) => [`${r.document}:${r.ordinal}`, chunkOf(r)]));
    return documentText((id) => chunks.get(id), docs, range);
  }

  /**
   * The documents `idOrPath` names: a document id (a file's first part takes the other parts along), or
   * every document ingested from that path. Empty when none.
   */
  async documentsNamed(idOrPath: string): Promise<DocumentRecord[]> {
    const byId = await this.document(idOrPath);
    if (byId) return isPart(byId.id) ? [byId] : [byId, ...(await this.partsOf(byId.id))];
    const { rows } = await this.db.query<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE path = $1 OR path = $2`,
      [idOrPath, resolve(idOrPath)],
    );
    if (rows.length > 0) return rows.map(documentOf).sort(byPart);
    const found = await this.findDocument(idOrPath);
    return found ? [found, ...(await this.partsOf(found.id))] : [];
  }

  /** Parts `ID.p2`, `ID.p3`, … of a file stored in parts, in order. */
  private async partsOf(id: string): Promise<DocumentRecord[]> {
    const { rows } = await this.db.query<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE left(id, length($1) + 2) = $1 || '.p'`,
      [id],
    );
    return partsAfter(id, rows.map(documentOf));
  }

  async neighbors(id: string, type?: LinkType): Promise<Link[]> {
    const parsed = parseChunkId(id);
    const located = parsed
      ? await this.db.query<{ seq: number; chunks: number }>(
          'SELECT c.seq, d.chunks FROM chunks c JOIN documents d ON d.id = c.document WHERE c.document = $1 AND c.ordinal = $2',
          [parsed.document, parsed.ordinal],
        )
      : { rows: [] };
    const at = located.rows[0];
    if (!parsed || !at) throw new RlmError('NOT_FOUND', `no chunk with id ${id}`);
    const out = positionLinks(parsed.document, parsed.ordinal, at.chunks, type);
    if (type === undefined || type === 'related_to') {
      const { rows } = await this.db.query<{ from_id: string; to_id: string; strength: number }>(
        `SELECT a.document || ':' || a.ordinal AS from_id, b.document || ':' || b.ordinal AS to_id, r.strength
         FROM related r JOIN chunks a ON a.seq = r.from_seq JOIN chunks b ON b.seq = r.to_seq
         WHERE r.from_seq = $1 OR r.to_seq = $1
         ORDER BY r.from_seq, r.strength DESC, r.to_seq`,
        [at.seq],
      );
      for (const r of rows)
        out.push({ from: r.from_id, to: r.to_id, type: 'related_to', strength: r.strength });
    }
    const { rows: manual } = await this.db.query<ManualLinkRow>(
      `SELECT from_doc, from_ordinal, to_doc, to_ordinal, type, strength FROM manual_links
       WHERE ((from_doc = $1 AND from_ordinal = $2) OR (to_doc = $1 AND to_ordinal = $2))
         AND ($3::text IS NULL OR type = $3) ORDER BY n`,
      [parsed.document, parsed.ordinal, type ?? null],
    );
    out.push(...manual.map(linkOf));
    return out;
  }

  async search(query: string, given: SearchOptions = {}): Promise<SearchHit[]> {
    const opts = await documentFilter(this, given);
    const k = opts.k ?? 10;
    checkK(k);
    const { rows: ranked } = await this.rank(query, { ...opts, k });
    const out = ranked.map((r) => ({
      id: `${r.document}:${r.ordinal}`,
      score: r.score,
      preview: passage(r.text, query, PREVIEW_CHARS),
      document: r.document,
      path: r.doc.path,
      tokens: r.tokens,
      tags: r.tags,
      type: r.type,
    }));
    if (opts.touch !== false) this.touch(out.map((h) => h.id));
    return out;
  }

  /**
   * The best chunks for `query` that pass the filters: BM25, or with an embedder by default hybrid
   * (BM25 and vectors fused by reciprocal rank, as the folder store does) or vectors only. Hybrid search
   * falls back to BM25 when the embedder fails or the server lacks pgvector, and says so.
   */
  protected async rank(query: string, opts: RankOptions): Promise<Ranked> {
    const mode = opts.mode ?? (this.vectors ? 'hybrid' : 'bm25');
    if (mode !== 'bm25' && !this.vectors) {
      throw new RlmError(
        'BAD_INPUT',
        `search mode ${mode} needs an embedder; ingest with --embedder to set one`,
      );
    }
    const depth = mode === 'hybrid' ? Math.max(opts.k * 4, 50) : opts.k;
    const words: Ranked =
      mode === 'vector'
        ? { rows: [], settings: null }
        : await rankChunks(this.db, this.live, query, { ...opts, k: depth });
    const vector = mode === 'bm25' ? undefined : await this.queryVector(query, mode, opts.onWarning);
    if (vector === undefined) return { rows: words.rows.slice(0, opts.k), settings: words.settings };
    const { schema, spec } = vector;
    const near = await vectorChunks(this.db, schema, spec, vector.vector, { ...opts, k: depth });
    const settings = mode === 'vector' ? near.settings : words.settings;
    if (mode === 'vector') return { rows: near.rows.slice(0, opts.k), settings };
    const key = (r: RankedRow) => `${r.document}:${r.ordinal}`;
    const rows = new Map([...near.rows, ...words.rows].map((r) => [key(r), r]));
    const fused = reciprocalRankFusion([
      words.rows.map((r) => ({ id: key(r), score: r.score })),
      near.rows.map((r) => ({ id: key(r), score: r.score })),
    ]);
    return { rows: fused.slice(0, opts.k).map((f) => ({ ...rows.get(f.id)!, score: f.score })), settings };
  }

  /** The query's vector, or undefined when hybrid search has to do without (with a warning). */
  private async queryVector(
    query: string,
    mode: 'vector' | 'hybrid',
    onWarning?: (message: string) => void,
  ): Promise<{ vector: number[]; schema: string; spec: string } | undefined> {
    const vectors = this.vectors!;
    const schema = this.caps.vectorSchema;
    if (schema === null) {
      const why = `PostgreSQL at ${new URL(this.db.target.connectionString).host} has no pgvector extension, so the vectors of ${this.location} cannot be searched`;
      if (mode === 'vector') throw new RlmError('BAD_INPUT', why);
      onWarning?.(`${why}; results are BM25 only`);
      return undefined;
    }
    try {
      const [vector] = await embedTexts(vectors, [query]);
      return { vector: vector!, schema, spec: vectors.spec };
    } catch (err) {
      // Hybrid search degrades to BM25 with a dead embedder; asking for vectors only is an error.
      if (mode === 'vector' || isRlmError(err, 'ABORTED')) throw err;
      onWarning?.(`the embedder ${vectors.spec} failed (${(err as Error).message}); results are BM25 only`);
      return undefined;
    }
  }

  grep(pattern: string, opts: GrepOptions = {}): Promise<GrepResult> {
    this.#grep ??= new GrepRunner();
    return grepStore(this.db, this.#grep, pattern, opts);
  }

  touch(ids: string[]): void {
    this.access.touch(ids);
  }

  accessStats(id: string): Promise<AccessStats> {
    return this.access.stats(id);
  }

  /** A document by id, or by the path it was ingested from. */
  async findDocument(idOrPath: string): Promise<DocumentRecord | undefined> {
    const candidates = [idOrPath];
    try {
      candidates.push(documentIdFor(idOrPath));
    } catch {
      // not a usable path
    }
    const { rows } = await this.db.query<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE id = ANY($1::text[]) OR path = $2
       ORDER BY (id = $2) DESC, first_seq LIMIT 1`,
      [candidates, idOrPath],
    );
    return rows[0] ? documentOf(rows[0]) : undefined;
  }

  /** Nothing to pick up: every read already sees the latest commit (a search asks the change feed). */
  async refresh(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.access.flush().catch(() => undefined);
    this.#grep?.close();
    await this.db.end();
  }

  // ---- writes ------------------------------------------------------------------------------------

  async ingestPaths(paths: string[], opts: IngestOptions = {}): Promise<IngestReport> {
    if (paths.length === 0)
      throw new RlmError('BAD_INPUT', 'nothing to ingest: give at least one file or folder');
    const started = performance.now();
    const target = this.pipeline(opts.tags ?? []);
    const report = await target.finish(ingestPathsInto(target, paths, opts));
    return this.finishReport(report, started);
  }

  async ingestText(
    documentId: string,
    text: string,
    opts: IngestOptions & { path?: string } = {},
  ): Promise<IngestReport> {
    checkDocumentId(documentId);
    const started = performance.now();
    const report = emptyIngestReport([]);
    const prepared = prepareDocument(
      await this.document(documentId),
      documentId,
      opts.path ?? null,
      text,
      [],
      opts,
      report,
    );
    if (prepared) await this.writeBatch([prepared], opts.tags ?? [], report, []);
    return this.finishReport(report, started);
  }

  /** Writes what an importer yields (see {@link IngestTarget}), in batch-sized transactions. */
  async importDocuments(
    produce: (documents: DocumentRecord[]) => AsyncIterable<ImportItem>,
    opts: Pick<IngestOptions, 'segmentChars' | 'signal'> = {},
  ): Promise<IngestReport> {
    const started = performance.now();
    const target = this.pipeline([]);
    const report = await target.finish(importInto(target, produce, opts));
    return this.finishReport(report, started);
  }

  private async finishReport(report: IngestReport, started: number): Promise<IngestReport> {
    const s = await this.stats();
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
   * Writes `docs` in one transaction, replacing their stored versions and removing `drop`. A document
   * another writer stored meanwhile with the same content is left as it is (counted skipped), so two
   * ingests of one file leave one copy.
   */
  protected async writeBatch(
    docs: PendingDoc[],
    tags: string[],
    report: IngestReport | undefined,
    drop: string[],
    also?: (sql: Sql, written: DocumentRecord[]) => Promise<void>,
  ): Promise<DocumentRecord[]> {
    const prepared = await prepareWrite(this.db, this.live, docs, tags, await this.embedDocs(docs, report));
    const written = await commitWrite(this.db, this.live, prepared, tags, report, drop, also);
    await this.afterWrite(written.chunks);
    return written.documents;
  }

  /** An ingest's writes, pipelined (see {@link pipelinedWrites}). */
  private pipeline(tags: string[]): ReturnType<typeof pipelinedWrites> {
    return pipelinedWrites(this.db, this.live, tags, {
      document: (id) => this.document(id),
      documents: () => this.documents(),
      forget: (ids) => this.forget(ids),
      afterWrite: (chunks) => this.afterWrite(chunks),
      embed: (docs, report) => this.embedDocs(docs, report),
    });
  }

  /**
   * Writes documents with their chunk records exactly as given (a copy from another store) in one
   * transaction, replacing stored versions; related_to links are computed again.
   */
  async writeRecords(items: ExactDocument[]): Promise<void> {
    const vectors = await this.embedBatch(items.flatMap((i) => i.chunks));
    const chunks = await writeTx(this.db, this.live, async (sql, track) => {
      const ids = items.map((i) => i.document.id);
      await lockDocuments(sql, this.db.target.schema, ids);
      const stored = await documentsById(sql, ids);
      await deleteDocuments(sql, [...stored.keys()]);
      const batch = await insertBatch(sql, this.live, exactRecords('postgres', items), track, vectors);
      return batch.records.length;
    });
    await this.afterWrite(chunks);
  }

  /** The vectors of the chunks of documents about to be written (see {@link embedBatch}). */
  protected embedDocs(docs: PendingDoc[], report?: IngestReport): Promise<BatchVectors> {
    return this.embedBatch(
      docs.flatMap((d) => d.drafts.map((c, i) => ({ id: `${d.record.id}:${i}`, text: c.text }))),
      report,
    );
  }

  /**
   * The vectors of chunks about to be written, embedded before their transaction opens (a request to
   * an embedder may take long; a transaction that is run again must not repeat it). None when the
   * store has no embedder, or when it failed during an ingest (`report`): the batch is then written
   * without vectors, the rest of the ingest does not try again, BM25 search keeps working, and the
   * report's warning says how to add them.
   */
  protected async embedBatch(
    chunks: { id: string; text: string }[],
    report?: IngestReport,
  ): Promise<BatchVectors> {
    const vectors = this.vectors;
    const spec = vectors?.spec ?? null;
    if (!vectors || chunks.length === 0 || report?.warnings !== undefined) return { spec };
    try {
      const got = await embedTexts(
        vectors,
        chunks.map((c) => c.text),
      );
      return { spec, byId: new Map(chunks.map((c, i) => [c.id, got[i]!])) };
    } catch (err) {
      if (report === undefined || isRlmError(err, 'ABORTED')) throw err;
      report.warnings = [
        `the embedder ${vectors.spec} failed (${(err as Error).message}); the documents are searchable with BM25 but have no vectors. ` +
          `When it works again, \`rlm repair --store ${this.location} --embedder ${vectors.spec}\` adds them; \`rlm repair --store ${this.location} --embedder none\` removes vector search.`,
      ];
      return { spec };
    }
  }

  /** Every hand-made link (supports, contradicts, summarizes), in the order they were set. */
  async manualLinks(): Promise<Link[]> {
    const { rows } = await this.db.query<ManualLinkRow>(
      'SELECT from_doc, from_ordinal, to_doc, to_ordinal, type, strength FROM manual_links ORDER BY n',
    );
    return rows.map(linkOf);
  }

  /** Adds hand-made links as given (a copy); links whose ends are missing are skipped. */
  async addManualLinks(links: Link[]): Promise<void> {
    const ends = links.map((l) => [parseChunkId(l.from), parseChunkId(l.to)] as const);
    const ok = links.filter((_, i) => ends[i]![0] && ends[i]![1]);
    const p = ok.map((l) => [parseChunkId(l.from)!, parseChunkId(l.to)!] as const);
    await this.db.query(
      `INSERT INTO manual_links (from_doc, from_ordinal, to_doc, to_ordinal, type, strength)
       SELECT l.* FROM unnest($1::text[], $2::integer[], $3::text[], $4::integer[], $5::text[], $6::float8[])
         AS l(fd, fo, td, tor, type, strength)
       WHERE EXISTS (SELECT 1 FROM chunks WHERE document = l.fd AND ordinal = l.fo)
         AND EXISTS (SELECT 1 FROM chunks WHERE document = l.td AND ordinal = l.tor)
       ON CONFLICT DO NOTHING`,
      [
        p.map((x) => x[0].document),
        p.map((x) => x[0].ordinal),
        p.map((x) => x[1].document),
        p.map((x) => x[1].ordinal),
        ok.map((l) => l.type),
        ok.map((l) => l.strength),
      ],
    );
  }

  /** Access stats of every chunk read at least once: id, count, last access (epoch ms). */
  async accessEntries(): Promise<[string, number, number][]> {
    await this.access.flush().catch(() => undefined);
    const { rows } = await this.db.query<{ id: string; count: number; last_ms: number }>(
      'SELECT id, count, last_ms FROM access ORDER BY id',
    );
    return rows.map((r) => [r.id, r.count, r.last_ms]);
  }

  /** Sets access stats as given (a copy). */
  async setAccessEntries(entries: [string, number, number][]): Promise<void> {
    await this.db.query(
      `INSERT INTO access (id, count, last_ms) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])
       ON CONFLICT (id) DO UPDATE SET count = excluded.count, last_ms = excluded.last_ms`,
      [entries.map((e) => e[0]), entries.map((e) => e[1]), entries.map((e) => e[2])],
    );
  }

  /** Removes documents by id in one transaction; the ids not stored are ignored. */
  protected async forget(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.tx(async (sql) => {
      await lockDocuments(sql, this.db.target.schema, ids);
      const stored = await documentsById(sql, ids);
      await deleteDocuments(sql, [...stored.keys()]);
      await forgetAccess(sql, [...stored.keys()]);
    });
    await this.afterWrite(0);
  }

  /**
   * Merges small index segments and rewrites those holding removed chunks (merge.ts; best effort: a
   * failed merge changes nothing), and after a big write refreshes the planner's statistics, so reads
   * right after a first ingest are planned for the tables' real size (autovacuum would, a minute later).
   */
  protected async afterWrite(chunks: number): Promise<void> {
    if (chunks >= BIG_WRITE_CHUNKS && Date.now() - this.#analyzedAt > ANALYZE_EVERY_MS) {
      this.#analyzedAt = Date.now();
      await this.db.query('ANALYZE documents, chunks').catch(() => undefined);
    }
    await this.live
      .sync(this.db)
      .then(() => mergeSegments(this.db, this.live))
      .catch(() => undefined);
  }

  // ---- removal and manual links ------------------------------------------------------------------

  /**
   * Forgets a document by id, or every document (all parts of a big file) ingested from a path; a file's
   * id (the first part's) also takes its other parts. False when there is none.
   */
  async removeDocument(idOrPath: string): Promise<boolean> {
    const docs = await this.documentsNamed(idOrPath);
    if (docs.length === 0) return false;
    let removed = false;
    await this.db.tx(async (sql) => {
      // A file an ingest is still writing in parts: wait for it, then take every part there is.
      const parts = await lockFilesToDelete(sql, this.db.target.schema, docs);
      const ids = [...new Set([...docs.map((d) => d.id), ...parts])];
      await lockDocuments(sql, this.db.target.schema, ids);
      const stored = await documentsById(sql, ids);
      removed = stored.size > 0;
      await deleteDocuments(sql, [...stored.keys()]);
      await forgetAccess(sql, [...stored.keys()]);
    });
    await this.afterWrite(0);
    return removed;
  }

  async link(from: string, to: string, type: 'supports' | 'contradicts', strength = 1): Promise<void> {
    checkManualLink(type, strength);
    // A document id (a memory id) stands for its first chunk, as in every store.
    [from, to] = [await requireLinkEnd(this, from), await requireLinkEnd(this, to)];
    const a = parseChunkId(from);
    const b = parseChunkId(to);
    await this.db.tx(async (sql) => {
      // The documents at both ends may not be replaced or removed until the link is in.
      await lockDocuments(sql, this.db.target.schema, [a?.document ?? '', b?.document ?? ''], true);
      for (const [id, p] of [
        [from, a],
        [to, b],
      ] as const) {
        const found = p
          ? await sql.query('SELECT 1 FROM chunks WHERE document = $1 AND ordinal = $2', [
              p.document,
              p.ordinal,
            ])
          : { rows: [] };
        if (found.rows.length === 0) throw new RlmError('NOT_FOUND', `no chunk with id ${id}`);
      }
      if (from === to) throw new RlmError('BAD_INPUT', 'a chunk cannot be linked to itself');
      await sql.query(
        'DELETE FROM manual_links WHERE from_doc = $1 AND from_ordinal = $2 AND to_doc = $3 AND to_ordinal = $4 AND type = $5',
        [a!.document, a!.ordinal, b!.document, b!.ordinal, type],
      );
      await sql.query(
        'INSERT INTO manual_links (from_doc, from_ordinal, to_doc, to_ordinal, type, strength) VALUES ($1, $2, $3, $4, $5, $6)',
        [a!.document, a!.ordinal, b!.document, b!.ordinal, type, strength],
      );
    });
  }

  async unlink(from: string, to: string, type: 'supports' | 'contradicts'): Promise<boolean> {
    // A document id means its first chunk, as in link(); an unknown one cannot have a link.
    from = (await linkEnd(this, from)) ?? from;
    to = (await linkEnd(this, to)) ?? to;
    const a = parseChunkId(from);
    const b = parseChunkId(to);
    if (!a || !b) return false;
    const { rows } = await this.db.query(
      `DELETE FROM manual_links WHERE from_doc = $1 AND from_ordinal = $2 AND to_doc = $3 AND to_ordinal = $4 AND type = $5
       RETURNING 1`,
      [a.document, a.ordinal, b.document, b.ordinal, type],
    );
    return rows.length > 0;
  }
}

/** A row of `manual_links`. */
interface ManualLinkRow {
  from_doc: string;
  from_ordinal: number;
  to_doc: string;
  to_ordinal: number;
  type: LinkType;
  strength: number;
}

function linkOf(m: ManualLinkRow): Link {
  return {
    from: `${m.from_doc}:${m.from_ordinal}`,
    to: `${m.to_doc}:${m.to_ordinal}`,
    type: m.type,
    strength: m.strength,
  };
}
