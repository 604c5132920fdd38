/**
 * The transactions of the PostgreSQL store's writes. A write is prepared before its transaction (its
 * records numbered, indexed and linked against this process's index: the client's work), so the
 * transaction holds its locks only to write; an ingest overlaps the preparing of a batch with the
 * previous batch's transaction. A segment whose transaction did not commit leaves the process's index.
 */
import { buildRecords, type PendingDoc } from '../ingest/prepare.ts';
import type { IngestTarget } from '../ingest/run.ts';
import type { DocumentRecord, IngestReport } from '../types.ts';
import type { Db, Session, Sql } from './db.ts';
import type { LiveIndex } from './live-index.ts';
import { FILE_LOCK_TIMEOUT_MS, fileLockKey } from './locks.ts';
import type { LoadedSegment } from './segments.ts';
import {
  type BatchVectors,
  countSkipped,
  deleteDocuments,
  documentsById,
  lockDocuments,
  type PreparedBatch,
  prepareBatch,
  sameDocument,
  writePrepared,
} from './write.ts';

/** Embeds the chunks of documents about to be written (see PostgresBase.embedBatch). */
export type EmbedDocs = (docs: PendingDoc[], report?: IngestReport) => Promise<BatchVectors>;

/** Documents and their batch, prepared. */
interface PreparedWrite {
  docs: PendingDoc[];
  batch: PreparedBatch;
}

/**
 * The work of a write before its transaction: chunks embedded (with the store's embedder), records
 * numbered, indexed and linked against this process's index (brought up to date first), so the
 * transaction holds its locks only to write.
 */
export async function prepareWrite(
  db: Db,
  live: LiveIndex,
  docs: PendingDoc[],
  tags: string[],
  vectors: BatchVectors,
): Promise<PreparedWrite> {
  await live.sync(db);
  const built = buildRecords('postgres', new Date().toISOString(), docs, tags);
  return { docs, batch: await prepareBatch(db, live, built, () => {}, vectors) };
}

/**
 * Commits a prepared write: locks its documents, skips those another writer stored meanwhile with the
 * same content (preparing the others again, in the transaction, when there are any), replaces the
 * stored versions and removes `drop`. A batch that is not committed leaves this process's index.
 */
export async function commitWrite(
  db: Pick<Db, 'tx' | 'target'>,
  live: LiveIndex,
  prepared: PreparedWrite,
  tags: string[],
  report: IngestReport | undefined,
  drop: string[],
  also?: (sql: Sql, written: DocumentRecord[]) => Promise<void>,
): Promise<{ documents: DocumentRecord[]; chunks: number }> {
  let current = prepared;
  try {
    const skipped = await db.tx(async (sql) => {
      const ids = [...prepared.docs.map((d) => d.record.id), ...drop];
      await lockDocuments(sql, db.target.schema, ids);
      const stored = await documentsById(sql, ids);
      const skipped = prepared.docs.filter((d) => {
        const s = stored.get(d.record.id);
        return s !== undefined && sameDocument(s, d);
      });
      const write = prepared.docs.filter((d) => !skipped.includes(d));
      if (write.length !== current.docs.length || write.some((d, i) => d !== current.docs[i])) {
        live.discard(current.batch.segment);
        const built = buildRecords('postgres', new Date().toISOString(), write, tags);
        // Vectors are by chunk id: those of the documents still written hold.
        const vectors = current.batch.vectors;
        current = { docs: write, batch: await prepareBatch(sql, live, built, () => {}, vectors) };
      }
      const replaced = [...write.map((d) => d.record.id), ...drop].filter((id) => stored.has(id));
      await deleteDocuments(sql, replaced);
      await writePrepared(sql, current.batch);
      await also?.(sql, current.batch.documents);
      return skipped;
    });
    if (report) for (const d of skipped) countSkipped(report, d);
  } catch (err) {
    live.discard(current.batch.segment);
    throw err;
  }
  return { documents: current.batch.documents, chunks: current.batch.records.length };
}

/**
 * Runs a write transaction whose new chunks go into this process's index (their segment is linked
 * against it, so it is brought up to date first). The segment of an attempt that did not commit, a
 * deadlock's retry or a failure, is taken out again.
 */
export async function writeTx<T>(
  db: Db,
  live: LiveIndex,
  fn: (sql: Sql, track: (seg: LoadedSegment) => void) => Promise<T>,
): Promise<T> {
  await live.sync(db);
  let attempt: LoadedSegment[] = [];
  const undo = () => {
    for (const seg of attempt) live.discard(seg);
    attempt = [];
  };
  try {
    return await db.tx((sql) => {
      undo();
      return fn(sql, (seg) => attempt.push(seg));
    });
  } catch (err) {
    undo();
    throw err;
  }
}

/** What an ingest's pipeline asks of its store. */
interface PipelineStore {
  document(id: string): Promise<DocumentRecord | undefined>;
  documents(): Promise<DocumentRecord[]>;
  forget(ids: string[]): Promise<void>;
  afterWrite(chunks: number): Promise<void>;
  embed: EmbedDocs;
}

/**
 * An ingest's writes, pipelined: a batch is numbered, indexed and linked (the client's work) while the
 * previous batch's transaction runs on the server, then committed once that one is. A failed commit
 * fails the next call (or `finish`); lookups of all documents and removals wait for the writes before
 * them. `finish` settles the ingest: its report once every batch is committed.
 */
export function pipelinedWrites(
  db: Db,
  live: LiveIndex,
  tags: string[],
  store: PipelineStore,
): IngestTarget & { finish(run: Promise<IngestReport>): Promise<IngestReport> } {
  let inflight: Promise<unknown> = Promise.resolve();
  // Once the ingest has held a file (holdFile), its commits run on the session that holds the locks.
  let session: Session | undefined;
  const writer = (): Pick<Db, 'tx' | 'target'> =>
    session === undefined ? db : { target: db.target, tx: (fn) => session!.tx(fn) };
  const release = async () => {
    const held = session;
    session = undefined;
    await held?.close();
  };
  return {
    document: (id) => store.document(id),
    documents: async () => {
      await inflight;
      return store.documents();
    },
    writeBatch: async (docs, report, drop) => {
      const prepared = await prepareWrite(db, live, docs, tags, await store.embed(docs, report));
      try {
        await inflight;
      } catch (err) {
        live.discard(prepared.batch.segment);
        throw err;
      }
      inflight = commitWrite(writer(), live, prepared, tags, report, drop).then((w) =>
        store.afterWrite(w.chunks),
      );
      // Its failure is thrown where it is awaited (the next batch, a lookup, `finish`), not left unhandled.
      inflight.catch(() => undefined);
    },
    forget: async (docs) => {
      await inflight;
      await store.forget(docs.map((d) => d.id));
    },
    holdFile: async (base, drain) => {
      session ??= await db.session();
      const key = fileLockKey(db.target.schema, base);
      if (await session.tryLock(key)) return;
      // Another writer has the file. What this ingest has in flight is committed and its files let go
      // first, so that no one waits on this ingest while it waits (ingests take files in path order,
      // but two whose lists differ could otherwise wait for each other).
      await drain();
      await inflight;
      await session.lock(key, FILE_LOCK_TIMEOUT_MS);
    },
    releaseFiles: async (bases) => {
      const held = session;
      if (held === undefined) return;
      const keys = bases.map((b) => fileLockKey(db.target.schema, b));
      // After the commits before it: the files' last parts are in the batches written so far.
      inflight = inflight.then(() => held.unlock(keys));
      inflight.catch(() => undefined);
    },
    finish: async (run) => {
      try {
        const report = await run.catch(async (err) => {
          await inflight.catch(() => undefined);
          throw err;
        });
        await inflight;
        return report;
      } finally {
        await release();
      }
    },
  };
}
