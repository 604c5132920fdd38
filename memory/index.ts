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
export {
  createEmbedder,
  HashingEmbedder,
  OpenAIEmbedder,
  type OpenAIEmbedderOptions,
} from './embedders/index.ts';
export type { Embedder } from './embedders/types.ts';
export { MemoryChunkStore } from './in-memory-store.ts';
// Memories (remember / recall / decay / consolidate) live in the chunk graph: every store has them.
export type {
  Memory,
  MemoryTotals,
  RecallHit,
  RecallOptions,
  RememberingStore,
  Summarizer,
  TopicSummary,
} from './memories.ts';
export {
  DEFAULT_MEMORY_SETTINGS,
  memoryWeight,
  type RememberInput,
  recallScore,
} from './memory-model.ts';
export { type RepairOptions, type RepairReport, repairStore } from './repair.ts';
export { ChunkStore, type OpenOptions } from './store.ts';
export { countTokens } from './tokens.ts';
export type {
  AccessStats,
  ChunkerName,
  ChunkReader,
  ChunkRecord,
  ChunkStoreApi,
  ChunkType,
  DocumentRecord,
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
} from './types.ts';
