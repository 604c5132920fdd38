/**
 * rlm — Recursive Language Models for TypeScript. The hand-picked public API: everything else is
 * internal and may change without notice.
 *
 * @example
 * ```ts
 * import { RLM } from 'rlm';
 * const rlm = new RLM({ model: 'anthropic:claude-sonnet-4-5' });
 * const result = await rlm.answer({ question: 'Who signed the 2019 contract?', paths: ['./contracts'] });
 * console.log(result.answer, result.usage.costUsd);
 * ```
 */

export { createEmbedder } from '../memory/embedders/index.ts';
export type { Embedder } from '../memory/embedders/types.ts';
// Memories (remember / recall / decay / consolidate) live in the chunk graph: every store has them.
export type {
  Memory,
  MemoryTotals,
  RecallHit,
  RecallOptions,
  RememberingStore,
  Summarizer,
  TopicSummary,
} from '../memory/memories.ts';
export {
  DEFAULT_MEMORY_SETTINGS,
  memoryWeight,
  type RememberInput,
  recallScore,
} from '../memory/memory-model.ts';
export { MemoryChunkStore } from '../memory/memory-store.ts';
export { type RepairOptions, type RepairReport, repairStore } from '../memory/repair.ts';
// The chunk graph
export { ChunkStore, type OpenOptions } from '../memory/store.ts';
export { countTokens } from '../memory/tokens.ts';
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
} from '../memory/types.ts';
// Errors
export { type ErrorCode, isRlmError, RlmError } from './errors.ts';
export { createServerContext, type ServerContext, type ServerContextOptions } from './mcp/context.ts';
export { type HttpServeOptions, type HttpServerHandle, serveHttp } from './mcp/http.ts';
// The MCP server
export { createServer } from './mcp/server.ts';
export { serveStdio } from './mcp/stdio.ts';
export type { ModelUsage } from './runtime/budget.ts';
export { autoConsolidate, modelSummarizer } from './runtime/consolidate.ts';
export type { AnswerInput } from './runtime/input.ts';
// Models
export type { ChatMessage, Model, ModelRequest, ModelResponse, Usage } from './runtime/model.ts';
export type { ModelFactory, ResolvedOptions, RlmOptions, SandboxFactory } from './runtime/options.ts';
export { DEFAULTS, resolveOptions } from './runtime/options.ts';
export { type ParsedReply, parseReply } from './runtime/parse.ts';
export { costOf, DEFAULT_PRICES, type ModelPrice, type PriceTable } from './runtime/pricing.ts';
export {
  AnthropicModel,
  ClaudeCodeModel,
  type CreateModelOptions,
  createModel,
  OpenAIModel,
  parseModelSpec,
  ScriptedModel,
  type ScriptRule,
  type ScriptRules,
} from './runtime/providers/index.ts';
export type { RlmResult, RunStatus } from './runtime/result.ts';
// The RLM runtime
export { RLM } from './runtime/rlm.ts';
export { JsonlTraceFile, parseTrace, type TraceEvent } from './runtime/trace.ts';
export { type RenderOptions, renderTraceFile, renderTraceTree } from './runtime/trace-render.ts';
export type { SandboxHost } from './sandbox/host.ts';
// The sandbox
export { createSandbox } from './sandbox/session.ts';
export type { BlockError, BlockResult, Sandbox, SandboxLimits } from './sandbox/types.ts';
