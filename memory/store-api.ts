/**
 * What every persistent store offers the surfaces (CLI, MCP server, library callers): the chunk graph of
 * {@link ChunkStoreApi} plus imports and memories. The folder store (memory/files/) and the PostgreSQL
 * store (memory/postgres/) implement it; `openStore` (memory/open.ts) opens either from its name.
 * Methods that a store on a server answers later return {@link Awaitable}: callers await them.
 */
import type { ExactDocument } from './ingest/prepare.ts';
import type {
  Consolidation,
  DeleteReport,
  Memory,
  MemoryTotals,
  RecallHit,
  RecallOptions,
  RememberInput,
  Summarizer,
  TopicSummary,
} from './memories/memory-model.ts';
import type {
  Awaitable,
  ChunkStoreApi,
  DocumentRecord,
  ImportItem,
  IngestOptions,
  IngestReport,
  Link,
  MemorySettings,
} from './types.ts';

export interface Store extends ChunkStoreApi {
  /** Where the store is, fit to show: a folder's path, or a URL with its password hidden. */
  readonly location: string;
  /** The embedder behind vector search (its spec), or null: without one, search and recall match words. */
  readonly embedder: string | null;
  /** Picks up what other processes committed since the last look (a no-op where reads are live). */
  refresh(): Promise<void>;
  /** A document by id, or by the path it was ingested from. */
  findDocument(idOrPath: string): Awaitable<DocumentRecord | undefined>;
  /**
   * Every document `idOrPath` names, in order: a document id (a file stored in parts: its first part's id
   * brings every part), or the path a file was ingested from (relative to the process's folder). Empty
   * when none.
   */
  documentsNamed(idOrPath: string): Awaitable<DocumentRecord[]>;
  /** Writes what an importer yields (documents it chunked itself, ids to drop) in batch-sized commits. */
  importDocuments(
    produce: (documents: DocumentRecord[]) => AsyncIterable<ImportItem>,
    opts?: Pick<IngestOptions, 'segmentChars' | 'signal'>,
  ): Promise<IngestReport>;

  /** The store's memory settings (defaults until set). */
  memorySettings(): Awaitable<MemorySettings>;
  /** Changes memory settings (checked; BAD_INPUT names a bad value) and saves them in the store. */
  configureMemory(patch: Partial<MemorySettings>): Promise<MemorySettings>;
  /** Stores one memory. Bad input throws BAD_INPUT before anything is written. */
  remember(input: RememberInput): Promise<Memory>;
  /** Stores many memories at once; every input is checked first. Returns their ids. */
  rememberMany(inputs: RememberInput[]): Promise<string[]>;
  /** A memory by id (`mem-…` or `mem-…:0`), archived or not. */
  getMemory(id: string, now?: Date): Awaitable<Memory | undefined>;
  /** Every memory (optionally of one topic), newest first. */
  listMemories(opts?: { topic?: string; archived?: boolean; now?: Date }): Awaitable<Memory[]>;
  /** Memories ranked by relevance × weight × recency; counts as an access of those returned. */
  recall(query: string, opts?: RecallOptions): Promise<RecallHit[]>;
  /** Topics with their active and archived memory counts, largest first. */
  topics(now?: Date): Awaitable<TopicSummary[]>;
  /** Totals for status reports. */
  memoryTotals(now?: Date): Awaitable<MemoryTotals>;
  /**
   * Really deletes memories and every link to or from them, with the consolidation summaries written from
   * them (see {@link deleteDocuments}); returns the ids deleted, summaries last. NOT_FOUND (nothing
   * deleted) for an unknown id.
   */
  forgetMemories(ids: string[]): Promise<string[]>;
  /**
   * Deletes documents and memories for good (by id, memory id, or the path a file was ingested from; a
   * file's id takes all its parts). A consolidation summary written from a deleted memory goes too, and
   * its other sources come back from the archive. NOT_FOUND names unknown ids, and then nothing is
   * deleted; with `memoriesOnly`, ids that are not memories count as unknown.
   */
  deleteDocuments(idsOrPaths: string[], opts?: { memoriesOnly?: boolean }): Promise<DeleteReport>;
  /** Archives memories whose weight fell under the prune threshold (critical ones never are). */
  decay(now?: Date): Promise<{ decayed: number; archived: string[] }>;
  /** Brings archived memories back; restoring counts as an access. */
  restore(ids: string[], now?: Date): Promise<string[]>;
  /** Replaces a topic's active memories by one summary written by `summarize`, in one commit. */
  consolidate(topic: string, summarize: Summarizer, opts?: { now?: Date }): Promise<Consolidation>;
  /** Whether a topic has more active memories than the consolidation threshold. */
  needsConsolidation(topic: string, now?: Date): Awaitable<boolean>;

  // ---- what `rlm store copy` reads and writes (memory/copy.ts) ------------------------------------

  /** Writes documents with their chunk records exactly as given, in one commit; related links are recomputed. */
  writeRecords(items: ExactDocument[]): Promise<void>;
  /** Every hand-made link (supports, contradicts, summarizes), in the order they were set. */
  manualLinks(): Awaitable<Link[]>;
  /** Adds hand-made links as given; links whose ends are missing are skipped. */
  addManualLinks(links: Link[]): Promise<void>;
  /** Access stats of every chunk read at least once: `[id, count, lastEpochMs]`. */
  accessEntries(): Awaitable<[string, number, number][]>;
  /** Sets access stats as given (into a store whose chunks were never read). */
  setAccessEntries(entries: [string, number, number][]): Promise<void>;
}
