/**
 * `rlm/memory`: the chunk graph on its own — a persistent store (`ChunkStore`), the same interface in
 * memory (`MemoryChunkStore`), embedders, repair and the tokenizer. Loads tiktoken and vectra, but none of
 * the runtime, the sandbox or the MCP server. The on-disk format is memory/SCHEMA.md.
 *
 * @example
 * ```ts
 * import { ChunkStore } from 'rlm/memory';
 * const store = await ChunkStore.open('./store', { create: true });
 * await store.ingestPaths(['./docs']);
 * const hits = await store.search('rate limit', { k: 5 });
 * ```
 */

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
export { type RepairOptions, type RepairReport, repairStore } from './files/repair.ts';
export { ChunkStore, type OpenOptions } from './files/store.ts';
export { MemoryChunkStore } from './in-memory/store.ts';
export { countTokens } from './ingest/tokens.ts';
export {
  DEFAULT_MEMORY_SETTINGS,
  memoryWeight,
  type RememberInput,
  recallScore,
} from './memories/memory-model.ts';
export {
  createEmbedder,
  HashingEmbedder,
  OpenAIEmbedder,
  type OpenAIEmbedderOptions,
} from './search/embedders/index.ts';
export type { Embedder } from './search/embedders/types.ts';
export type {
  AccessStats,
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
  SearchHit,
  SearchOptions,
  StoreStats,
  TextRange,
} from './types.ts';
