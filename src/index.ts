/**
 * rlm — Recursive Language Models for TypeScript. The hand-picked public API of the runtime: everything
 * else is internal and may change without notice. The chunk graph, the sandbox and the MCP server have
 * their own entry points, so importing `rlm` loads none of them (nor any SDK; only zod, for the options) until
 * a run needs it:
 *
 * - `rlm/memory` — `ChunkStore`, `MemoryChunkStore`, embedders, `repairStore`, `countTokens`;
 * - `rlm/sandbox` — `createSandbox` (isolated-vm);
 * - `rlm/mcp` — the MCP server (`createServer`, `serveStdio`, `serveHttp`).
 *
 * @example
 * ```ts
 * import { RLM } from 'rlm';
 * const rlm = new RLM({ model: 'anthropic:claude-sonnet-4-6' });
 * const result = await rlm.answer({ question: 'Who signed the 2019 contract?', paths: ['./contracts'] });
 * console.log(result.answer, result.usage.costUsd);
 * ```
 */

// Errors
export { type ErrorCode, isRlmError, RlmError } from '../core/errors.ts';
export type { BackoffOptions } from '../core/http-retry.ts';
// Types the runtime's options and inputs mention; their implementations live in `rlm/memory` and `rlm/sandbox`.
export type { ChunkReader, ChunkStoreApi } from '../memory/types.ts';
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
export type { BlockNode, RlmResult, RunStatus, SpanNode, Trajectory, TurnNode } from './runtime/result.ts';
// The RLM runtime
export { RLM } from './runtime/rlm.ts';
export { JsonlTraceFile, parseTrace, type TraceEvent, type TraceLevel } from './runtime/trace.ts';
export { renderTraceHtml } from './runtime/trace-html.ts';
export { type RenderOptions, renderTraceFile, renderTraceTree } from './runtime/trace-render.ts';
export { buildTrajectories, buildTrajectory } from './runtime/trajectory.ts';
export type { SandboxHost } from './sandbox/host.ts';
export type { BlockError, BlockResult, Sandbox, SandboxLimits } from './sandbox/types.ts';
