/**
 * `PostgresStore`: the chunk graph and memories in a PostgreSQL database, shared by every process and
 * machine that opens the same URL. Memories follow the rules every store shares
 * (memory/memories/memory-model.ts: input checks, weights, decay, recall score); each `remember` is one
 * small transaction, so many writers remember at once without waiting for each other.
 */
import type { Env } from '../../core/env.ts';
import { RlmError } from '../../core/errors.ts';
import { memoryPending } from '../ingest/prepare.ts';
import {
  type Consolidation,
  checkRemember,
  DEFAULT_MEMORY_SETTINGS,
  type DeleteReport,
  fadedOut,
  type Memory,
  type MemoryTotals,
  memoryDocId,
  memoryWeight,
  mergeSettings,
  type RecallHit,
  type RecallOptions,
  type RememberInput,
  recallScore,
  type Summarizer,
  summarizeTopic,
  type TopicSummary,
  topicChanged,
  type WeightInput,
} from '../memories/memory-model.ts';
import { createEmbedder } from '../search/embedders/index.ts';
import type { Store } from '../store-api.ts';
import type {
  DocumentRecord,
  MemoryImportance,
  MemorySettings,
  RepairOptions,
  RepairReport,
} from '../types.ts';
import { PostgresBase } from './base.ts';
import { Db } from './db.ts';
import { lockFilesToDelete } from './locks.ts';
import { repairTables } from './repair.ts';
import { DOCUMENT_COLUMNS, type DocumentRow, documentOf } from './rows.ts';
import { capabilities, prepareSchema } from './schema.ts';
import { checkK } from './search.ts';
import { parsePostgresUrl } from './url.ts';
import { embedderSetting, giveEmbedder } from './vectors.ts';
import { deleteDocuments, forgetAccess, lockDocuments } from './write.ts';

export interface PostgresOpenOptions {
  /** Create the store's tables when the schema holds none (default false). */
  create?: boolean;
  /**
   * Embedder spec (`hash`, `openai:MODEL`, …) for vector search: needs the pgvector extension on the
   * server. Set when the store holds no document yet; an existing store keeps the one it has.
   */
  embedder?: string;
  /** Environment for embedder keys and endpoints (default process.env). */
  env?: Env;
  /**
   * Told what did not stop the open: an embedder that does not answer when a store is given one (the
   * store is then left without vector search; `rlm repair --embedder` adds it later).
   */
  onWarning?: (message: string) => void;
  /** Connections this handle holds at most (default 8). */
  maxConnections?: number;
  /**
   * Told once per write that has waited a second for a lock another session holds (another writer of
   * the same documents, `rlm repair`): the holder's server process and client. A write waits two minutes
   * at most, then fails with STORE_LOCKED.
   */
  onLockWait?: (holder: { pid: number; host: string; command?: string }) => void;
}

/** Memories per transaction in {@link PostgresStore.rememberMany}. */
const BULK_COMMIT = 1000;

/** A memory document with what its weight needs. */
interface MemoryRow extends DocumentRow {
  text: string;
  access_count: number | null;
  access_last: number | null;
}

/** What {@link toMemory} reads of a memory's row. */
type MemoryFields = Pick<
  MemoryRow,
  | 'id'
  | 'text'
  | 'topic'
  | 'importance'
  | 'tags'
  | 'source'
  | 'ingested_at'
  | 'archived_at'
  | 'access_count'
  | 'access_last'
>;

export class PostgresStore extends PostgresBase implements Store {
  /**
   * Opens the store at `url` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE?schema=NAME`), creating its
   * tables with `create`. Errors are one line without the password: BAD_INPUT for a malformed URL,
   * STORE_MISSING for a missing database or store, ACCESS_DENIED for a refused login or permission,
   * STORE_UNAVAILABLE when the server cannot be reached.
   */
  static async open(url: string, opts: PostgresOpenOptions = {}): Promise<PostgresStore> {
    const target = parsePostgresUrl(url);
    // A bad spec is a usage error before anything is made.
    const wanted = opts.embedder ? createEmbedder(opts.embedder, opts.env) : undefined;
    const db = await Db.create(target, {
      ...(opts.maxConnections ? { maxConnections: opts.maxConnections } : {}),
      ...(opts.onLockWait ? { onLockWait: opts.onLockWait } : {}),
    });
    try {
      let caps = await prepareSchema(db, opts.create === true);
      let setting = await embedderSetting(db);
      if (wanted && setting === null) {
        setting = await giveEmbedder(db, wanted, opts);
        caps = await capabilities(db);
      } else if (wanted && setting !== null && setting.spec !== wanted.name) {
        throw new RlmError(
          'BAD_INPUT',
          `store ${target.label} uses embedder ${setting.spec}, not ${opts.embedder}; run \`rlm repair --store URL --embedder ${opts.embedder}\` to re-embed`,
        );
      }
      const vectors =
        setting === null
          ? undefined
          : { ...setting, embedder: wanted ?? createEmbedder(setting.spec, opts.env) };
      return new PostgresStore(db, caps, vectors);
    } catch (err) {
      await db.end().catch(() => undefined);
      throw err;
    }
  }

  /**
   * `rlm repair` for the store at `url`, which may be in use meanwhile (memory/postgres/repair.ts): the
   * derived tables are rebuilt from documents and chunks, what points at nothing is removed, vectors
   * are completed, rebuilt with `opts.embedder`, or removed with `none`. STORE_MISSING when there is no
   * store; PROVIDER (nothing changed) when the embedder fails.
   */
  static async repair(url: string, opts: RepairOptions = {}): Promise<RepairReport> {
    const target = parsePostgresUrl(url);
    // A bad spec is a usage error before anything is read.
    if (opts.embedder && opts.embedder !== 'none') createEmbedder(opts.embedder, opts.env);
    const db = await Db.create(target);
    try {
      await prepareSchema(db, false);
      return await repairTables(db, opts);
    } finally {
      await db.end().catch(() => undefined);
    }
  }

  /** The embedder behind vector search (its spec), or null: without one, search and recall match words. */
  get embedder(): string | null {
    return this.vectors?.spec ?? null;
  }

  // ---- settings ----------------------------------------------------------------------------------

  async memorySettings(): Promise<MemorySettings> {
    const { rows } = await this.db.query<{ value: MemorySettings }>(
      "SELECT value FROM store_settings WHERE key = 'memory'",
    );
    return rows[0]?.value ?? DEFAULT_MEMORY_SETTINGS;
  }

  async configureMemory(patch: Partial<MemorySettings>): Promise<MemorySettings> {
    const settings = mergeSettings(await this.memorySettings(), patch);
    await this.db.query(
      `INSERT INTO store_settings (key, value) VALUES ('memory', $1)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [JSON.stringify(settings)],
    );
    return settings;
  }

  // ---- remembering -------------------------------------------------------------------------------

  async remember(input: RememberInput): Promise<Memory> {
    const entry = checkRemember(input);
    const [doc] = await this.writeBatch([memoryPending(entry)], [], undefined, []);
    const [memory] = await this.memoriesOf(
      [{ ...(await this.memoryRows([doc!.id]))[0]! }],
      (input.now ?? new Date()).getTime(),
    );
    return memory!;
  }

  async rememberMany(inputs: RememberInput[]): Promise<string[]> {
    const entries = inputs.map((input, i) => {
      try {
        return checkRemember(input);
      } catch (err) {
        if (err instanceof RlmError) throw new RlmError(err.code, `memory ${i + 1}: ${err.message}`);
        throw err;
      }
    });
    for (let i = 0; i < entries.length; i += BULK_COMMIT)
      await this.writeBatch(entries.slice(i, i + BULK_COMMIT).map(memoryPending), [], undefined, []);
    return entries.map((e) => e.id);
  }

  // ---- reading memories --------------------------------------------------------------------------

  /** Memory documents (by id, or all / of a topic) with their text and access stats. */
  private async memoryRows(ids?: string[], topic?: string): Promise<MemoryRow[]> {
    const cols = DOCUMENT_COLUMNS.split(', ')
      .map((c) => `d.${c}`)
      .join(', ');
    // Each case with a condition the planner can use an index for, and the chunk and access stats
    // looked up per memory: a join with the whole access table made one remember of 100 000 memories
    // take 100-250 ms.
    const where =
      ids !== undefined ? 'd.id = ANY($1::text[])' : topic !== undefined ? 'd.topic = $1' : 'true';
    const { rows } = await this.db.query<MemoryRow>(
      `SELECT ${cols}, c.text, a.count AS access_count, a.last_ms AS access_last
       FROM documents d
       LEFT JOIN LATERAL (SELECT text FROM chunks c WHERE c.document = d.id AND c.ordinal = 0 LIMIT 1) c ON true
       LEFT JOIN LATERAL (SELECT count, last_ms FROM access a WHERE a.id = d.id || ':0' LIMIT 1) a ON true
       WHERE d.topic IS NOT NULL AND ${where}`,
      ids !== undefined ? [ids] : topic !== undefined ? [topic] : [],
    );
    return rows;
  }

  private async memoriesOf(rows: MemoryRow[], nowMs: number): Promise<Memory[]> {
    const settings = await this.memorySettings();
    return rows.map((r) => toMemory(r, nowMs, settings));
  }

  async getMemory(id: string, now: Date = new Date()): Promise<Memory | undefined> {
    await this.access.flush().catch(() => undefined);
    const rows = await this.memoryRows([memoryDocId(id)]);
    return rows[0] ? (await this.memoriesOf(rows, now.getTime()))[0] : undefined;
  }

  async listMemories(opts: { topic?: string; archived?: boolean; now?: Date } = {}): Promise<Memory[]> {
    await this.access.flush().catch(() => undefined);
    const all = await this.memoriesOf(
      await this.memoryRows(undefined, opts.topic),
      (opts.now ?? new Date()).getTime(),
    );
    return all.filter((m) => !m.archived || opts.archived).sort((a, b) => b.created.localeCompare(a.created));
  }

  async recall(query: string, opts: RecallOptions = {}): Promise<RecallHit[]> {
    const k = opts.k ?? 10;
    checkK(k);
    const nowMs = (opts.now ?? new Date()).getTime();
    const sinceMs = opts.since?.getTime() ?? -Infinity;
    const untilMs = opts.until?.getTime() ?? Infinity;
    // One statement reads the candidates, their access stats and the settings; this process's reads
    // not yet written are added to the stats instead of being written first.
    const { rows, settings: stored } = await this.access.read((pendingAccess) =>
      this.rank(query, {
        // Candidates beyond k, so a heavier or newer memory a little lower by relevance can move up.
        k: Math.max(30, k * 3),
        type: 'memory',
        ...(opts.topic !== undefined ? { topic: opts.topic } : {}),
        ...(opts.tags && opts.tags.length > 0 ? { tags: opts.tags } : {}),
        archived: opts.archived === true,
        settings: true,
        fromCopy: true,
        pendingAccess,
        accept: (r, s) => {
          const at = Date.parse(r.doc.ingested_at);
          if (at < sinceMs || at > untilMs) return false;
          return (
            opts.archived === true ||
            !fadedOut(weightOf(r.doc, r.access_count, r.access_last), nowMs, s ?? DEFAULT_MEMORY_SETTINGS)
          );
        },
      }),
    );
    const settings = stored ?? DEFAULT_MEMORY_SETTINGS;
    const best = rows[0]?.score ?? 0;
    const ranked = rows.map((r) => {
      const created = Date.parse(r.doc.ingested_at);
      const relevance = best > 0 ? r.score / best : 0;
      const weight = memoryWeight(weightOf(r.doc, r.access_count, r.access_last), nowMs, settings);
      const row: MemoryFields = {
        ...r.doc,
        text: r.text,
        access_count: r.access_count,
        access_last: r.access_last,
      };
      return { row, created, relevance, score: recallScore(relevance, weight, created, nowMs) };
    });
    ranked.sort((a, b) => b.score - a.score || b.created - a.created);
    const out = ranked
      .slice(0, k)
      .map((r) => ({ ...toMemory(r.row, nowMs, settings), relevance: r.relevance, score: r.score }));
    this.access.touch(
      out.map((m) => `${m.id}:0`),
      // An access is never in the future: a recall asked as of a later time (--now) counts as of now.
      Math.min(nowMs, Date.now()),
    );
    return out;
  }

  async topics(now: Date = new Date()): Promise<TopicSummary[]> {
    const nowMs = now.getTime();
    const settings = await this.memorySettings();
    await this.access.flush().catch(() => undefined);
    const { rows } = await this.db.query<{
      topic: string;
      importance: MemoryImportance;
      ingested_at: string;
      archived_at: string | null;
      count: number | null;
      last_ms: number | null;
    }>(
      `SELECT d.topic, d.importance, d.ingested_at, d.archived_at, a.count, a.last_ms
       FROM documents d LEFT JOIN access a ON a.id = d.id || ':0' WHERE d.topic IS NOT NULL`,
    );
    const by = new Map<string, TopicSummary>();
    for (const r of rows) {
      const t = by.get(r.topic) ?? { topic: r.topic, memories: 0, archived: 0 };
      const input: WeightInput = {
        importance: r.importance,
        createdMs: Date.parse(r.ingested_at),
        accessCount: r.count ?? 0,
        lastAccessMs: r.last_ms ?? 0,
      };
      if (r.archived_at !== null || fadedOut(input, nowMs, settings)) t.archived++;
      else t.memories++;
      by.set(t.topic, t);
    }
    return [...by.values()].sort((a, b) => b.memories - a.memories || a.topic.localeCompare(b.topic));
  }

  async memoryTotals(now: Date = new Date()): Promise<MemoryTotals> {
    const topics = await this.topics(now);
    return {
      memories: topics.reduce((n, t) => n + t.memories, 0),
      archived: topics.reduce((n, t) => n + t.archived, 0),
      topics: topics.length,
      journaled: 0,
    };
  }

  async needsConsolidation(topic: string, now: Date = new Date()): Promise<boolean> {
    const t = (await this.topics(now)).find((x) => x.topic === topic);
    return (t?.memories ?? 0) > (await this.memorySettings()).consolidateThreshold;
  }

  // ---- changing memories -------------------------------------------------------------------------

  /** The memory documents of `ids`; NOT_FOUND (nothing changed) naming those that are not memories. */
  private async memoryDocs(ids: string[]): Promise<DocumentRecord[]> {
    const wanted = [...new Set(ids.map(memoryDocId))];
    const rows = await this.memoryRows(wanted);
    const found = new Set(rows.map((r) => r.id));
    const missing = wanted.filter((id) => !found.has(id));
    if (missing.length > 0)
      throw new RlmError('NOT_FOUND', `no memory with id ${missing.join(', ')}; nothing was changed`, {
        ids: missing,
      });
    return wanted.map((id) => documentOf(rows.find((r) => r.id === id)!));
  }

  async forgetMemories(ids: string[]): Promise<string[]> {
    const r = await this.deleteDocuments(ids, { memoriesOnly: true });
    return [...r.deleted, ...r.summaries];
  }

  async deleteDocuments(idsOrPaths: string[], opts: { memoriesOnly?: boolean } = {}): Promise<DeleteReport> {
    const docs = opts.memoriesOnly ? await this.memoryDocs(idsOrPaths) : await this.named(idsOrPaths);
    let deleted = [...new Set(docs.map((d) => d.id))];
    let ids = new Set(deleted);
    const summaries: string[] = [];
    let restored: string[] = [];
    await this.db.tx(async (sql) => {
      // A file an ingest is still writing in parts: wait for it, then take every part there is.
      const parts = await lockFilesToDelete(sql, this.db.target.schema, docs);
      if (parts.length > 0) {
        deleted = [...new Set([...deleted, ...parts])];
        ids = new Set(deleted);
      }
      await lockDocuments(sql, this.db.target.schema, deleted);
      const { rows: links } = await sql.query<{ from_doc: string; to_doc: string }>(
        "SELECT from_doc, to_doc FROM manual_links WHERE type = 'summarizes' ORDER BY n",
      );
      // A summary written from a deleted memory may repeat its text: it goes too (and so on upwards).
      for (let grew = true; grew; ) {
        grew = false;
        for (const l of links) {
          if (ids.has(l.to_doc) && !ids.has(l.from_doc)) {
            ids.add(l.from_doc);
            summaries.push(l.from_doc);
            grew = true;
          }
        }
      }
      await lockDocuments(sql, this.db.target.schema, summaries);
      // Every summary deleted, named or taken with a source, gives its other sources back to recall.
      const gone = ids;
      const sources = [
        ...new Set(links.filter((l) => gone.has(l.from_doc) && !ids.has(l.to_doc)).map((l) => l.to_doc)),
      ];
      // Their other sources come back from the archive, so nothing but what was named is lost.
      const { rows: back } = await sql.query<{ id: string }>(
        'UPDATE documents SET archived_at = NULL WHERE id = ANY($1::text[]) AND archived_at IS NOT NULL RETURNING id',
        [sources],
      );
      const came = new Set(back.map((r) => r.id));
      restored = sources.filter((id) => came.has(id));
      await deleteDocuments(sql, [...ids]);
      await forgetAccess(sql, [...ids]);
    });
    await this.afterWrite(0);
    return { deleted, summaries, restored };
  }

  /** The documents each of `names` names; NOT_FOUND (nothing deleted) for the ones naming none. */
  private async named(names: string[]): Promise<DocumentRecord[]> {
    const found = new Map<string, DocumentRecord>();
    const missing: string[] = [];
    for (const name of names) {
      const docs = await this.documentsNamed(name);
      if (docs.length === 0) missing.push(name);
      for (const d of docs) found.set(d.id, d);
    }
    if (missing.length > 0)
      throw new RlmError('NOT_FOUND', `no document ${missing.join(', ')}; nothing was deleted`, {
        ids: missing,
      });
    return [...found.values()];
  }

  async decay(now: Date = new Date()): Promise<{ decayed: number; archived: string[] }> {
    const nowMs = now.getTime();
    const settings = await this.memorySettings();
    await this.access.flush().catch(() => undefined);
    const rows = (await this.memoryRows()).filter((r) => r.archived_at === null);
    let decayed = 0;
    const faded: string[] = [];
    for (const r of rows) {
      const input = weightOf(r, r.access_count, r.access_last);
      if (memoryWeight(input, nowMs, settings) < 1) decayed++;
      if (fadedOut(input, nowMs, settings)) faded.push(r.id);
    }
    // Only those still active when the update runs: a concurrent restore or decay is not undone.
    const { rows: archived } = await this.db.query<{ id: string }>(
      'UPDATE documents SET archived_at = $2 WHERE id = ANY($1::text[]) AND archived_at IS NULL RETURNING id',
      [faded, now.toISOString()],
    );
    const done = new Set(archived.map((r) => r.id));
    return { decayed, archived: faded.filter((id) => done.has(id)) };
  }

  async restore(ids: string[], now: Date = new Date()): Promise<string[]> {
    const docs = await this.memoryDocs(ids);
    await this.db.query('UPDATE documents SET archived_at = NULL WHERE id = ANY($1::text[])', [
      docs.map((d) => d.id),
    ]);
    this.access.touch(
      docs.map((d) => `${d.id}:0`),
      now.getTime(),
    );
    await this.access.flush().catch(() => undefined);
    return docs.map((d) => d.id);
  }

  async consolidate(topic: string, summarize: Summarizer, opts: { now?: Date } = {}): Promise<Consolidation> {
    const now = opts.now ?? new Date();
    const { entry, sources } = await summarizeTopic(
      topic,
      await this.listMemories({ topic, now }),
      summarize,
      now,
    );
    let archived: string[] = [];
    // The summary, the sources' archiving and the summarizes links commit together.
    await this.writeBatch([memoryPending(entry)], [], undefined, [], async (sql) => {
      const { rows } = await sql.query<{ id: string }>(
        'UPDATE documents SET archived_at = $2 WHERE id = ANY($1::text[]) AND archived_at IS NULL RETURNING id',
        [sources.map((m) => m.id), now.toISOString()],
      );
      const live = new Set(rows.map((r) => r.id));
      archived = sources.map((m) => m.id).filter((id) => live.has(id));
      // The summary repeats every source: one forgotten or archived meanwhile would live on in it.
      if (archived.length < sources.length) throw topicChanged(topic, sources.length - archived.length);
      if (archived.length > 0) {
        await sql.query(
          `INSERT INTO manual_links (from_doc, from_ordinal, to_doc, to_ordinal, type, strength)
           SELECT $1, 0, id, 0, 'summarizes', 1 FROM unnest($2::text[]) AS id`,
          [entry.id, archived],
        );
      }
    });
    return { summary: entry.id, text: entry.text, archived };
  }
}

function weightOf(
  doc: Pick<DocumentRow, 'importance' | 'ingested_at'>,
  count: number | null,
  last: number | null,
): WeightInput {
  return {
    importance: doc.importance ?? 'medium',
    createdMs: Date.parse(doc.ingested_at),
    accessCount: count ?? 0,
    lastAccessMs: last ?? 0,
  };
}

function toMemory(r: MemoryFields, nowMs: number, settings: MemorySettings): Memory {
  const input = weightOf(r, r.access_count, r.access_last);
  const last = r.access_last ?? 0;
  return {
    id: r.id,
    text: r.text ?? '',
    topic: r.topic!,
    importance: r.importance!,
    tags: r.tags ?? [],
    source: r.source!,
    created: r.ingested_at,
    lastAccessed: last > 0 ? new Date(last).toISOString() : null,
    accessCount: r.access_count ?? 0,
    weight: memoryWeight(input, nowMs, settings),
    archived: r.archived_at !== null || fadedOut(input, nowMs, settings),
  };
}
