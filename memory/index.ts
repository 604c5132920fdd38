/**
 * `rlm/memory`: the chunk graph on its own — persistent stores (`ChunkStore` in a folder, `PostgresStore`
 * in PostgreSQL, `openStore(dirOrUrl)` for either), the same interface in memory (`MemoryChunkStore`),
 * `copyStore` between them, embedders, repair and the tokenizer. Loads tiktoken and vectra, but none of
 * the runtime, the sandbox or the MCP server; the PostgreSQL client loads when a PostgreSQL store opens.
 * The formats are memory/SCHEMA.md.
 *
 * @example
 * ```ts
 * import { ChunkStore } from 'rlm/memory';
 * const store = await ChunkStore.open('./store', { create: true });
 * await store.ingestPaths(['./docs']);
 * const hits = await store.search('rate limit', { k: 5 });
 * ```
 */

export { type CopyReport, copyStore } from './copy.ts';
// Memories (remember / recall / decay / consolidate) live in the chunk graph: every store has them.
export type {
  Memory,
  MemoryTotals,
  RecallHit,
  RecallOptions,
  RememberingStore,
  Summarizer,
  TopicSummary,
} from './engine/memories.ts';
export { repairStore } from './files/repair.ts';
export { ChunkStore, type OpenOptions } from './files/store.ts';
export { MemoryChunkStore } from './in-memory/store.ts';
export { countTokens } from './ingest/tokens.ts';
export {
  DEFAULT_MEMORY_SETTINGS,
  memoryWeight,
  type RememberInput,
  recallScore,
} from './memories/memory-model.ts';
export { isPostgresUrl, type OpenStoreOptions, openStore, redactUrl } from './open.ts';
export { type PostgresOpenOptions, PostgresStore } from './postgres/store.ts';
export {
  createEmbedder,
  HashingEmbedder,
  OpenAIEmbedder,
  type OpenAIEmbedderOptions,
} from './search/embedders/index.ts';
export type { Embedder } from './search/embedders/types.ts';
export type { Store } from './store-api.ts';
export type {
  AccessStats,
  Awaitable,
  ChunkerName,
  ChunkReader,
  ChunkRecord,
  ChunkStoreApi,
  ChunkType,
  DocumentRecord,
  DocumentText,
  GrepCounts,
  GrepDocumentCount,
  GrepMatch,
  GrepOptions,
  GrepResult,
  IngestOptions,
  IngestProgress,
  IngestReport,
  Link,
  LinkType,
  MemoryImportance,
  MemoryInfo,
  MemorySettings,
  MemorySource,
  RepairOptions,
  RepairReport,
  SearchHit,
  SearchOptions,
  StoreStats,
  TextRange,
} from './types.ts';
