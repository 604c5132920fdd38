/**
 * The rlm MCP server: an McpServer with the rlm tools registered. One McpServer serves one connection
 * (stdio, or one HTTP session); the {@link ServerContext} behind it is shared by all of them.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { FileAccess } from './access.ts';
import type { Connection } from './connection.ts';
import { createServerContext, type ServerContext, type ServerContextOptions } from './server-context.ts';
import { registerAnswer } from './tools/answer.ts';
import { registerClaudeTools } from './tools/claude.ts';
import { registerIngest } from './tools/ingest.ts';
import { registerMemoryTools } from './tools/memory.ts';
import { registerReadTools } from './tools/read.ts';
import { registerStatus } from './tools/status.ts';

/** Registers one tool (or a family of tools) on a server; every tool module exports one. */
type ToolRegistrar = (server: McpServer, ctx: ServerContext, conn: Connection) => void;

/** Options of {@link createServer}. */
export interface CreateServerOptions {
  /**
   * Without `allowPaths` in the context, fence reads to the working folder (HTTP, where any local
   * program may be the caller); by default a stdio server reads what its parent asks.
   */
  fenceToCwd?: boolean;
}

/**
 * The tool modules, in listing order. A new tool: add its registrar here and its name to
 * {@link TOOL_NAMES}, then its cases to test/mcp/schemas.test.ts (which fails until it has them).
 */
const REGISTRARS: readonly ToolRegistrar[] = [
  registerAnswer,
  registerIngest,
  registerReadTools,
  registerStatus,
  registerMemoryTools,
  registerClaudeTools,
];

/** Names of the tools the server offers. */
export const TOOL_NAMES = [
  'rlm_answer',
  'rlm_ingest',
  'rlm_search',
  'rlm_peek',
  'rlm_grep',
  'rlm_status',
  'rlm_remember',
  'rlm_recall',
  'rlm_forget',
  'rlm_topics',
  'rlm_claude_recall',
  'rlm_claude_timeline',
  'rlm_claude_projects',
] as const;

const INSTRUCTIONS =
  'rlm answers questions over contexts far larger than your window. Call rlm_answer with a self-contained ' +
  'question (its model never sees this conversation) and the material: file/folder `paths` or a store ' +
  'folder rather than pasted text. A call can take minutes and costs model calls. For a corpus you will ask ' +
  'about repeatedly, build a store once with rlm_ingest and pass `store`. rlm_search, rlm_peek and rlm_grep ' +
  'look things up in a store directly and cheaply; rlm_status shows the working folder, the readable folders ' +
  'and the configuration. rlm_remember / rlm_recall / rlm_forget / rlm_topics keep memories (decisions, ' +
  'preferences, facts) across conversations. rlm_claude_recall / rlm_claude_timeline / rlm_claude_projects ' +
  "search the user's own Claude Code history.";

/**
 * Creates an McpServer with every rlm tool. Pass a {@link ServerContext} to share stores between servers
 * (HTTP sessions), or options to build a private one.
 */
export function createServer(
  context: ServerContext | ServerContextOptions = {},
  opts: CreateServerOptions = {},
): McpServer {
  const ctx = isContext(context) ? context : createServerContext(context);
  const server = new McpServer(
    { name: 'rlm', title: 'rlm: Recursive Language Models', version: ctx.version },
    {
      capabilities: { tools: {}, logging: {} },
      instructions: INSTRUCTIONS,
      maxToolInputElements: ctx.limits.maxInputElements,
    },
  );
  const fence =
    ctx.allowPaths !== undefined
      ? { folders: ctx.allowPaths, explicit: true }
      : opts.fenceToCwd
        ? { folders: [ctx.cwd], explicit: false }
        : undefined;
  const conn: Connection = { access: new FileAccess(server, ctx.cwd, fence) };
  for (const register of REGISTRARS) register(server, ctx, conn);
  return server;
}

function isContext(c: ServerContext | ServerContextOptions): c is ServerContext {
  return 'stores' in c && typeof (c as ServerContext).close === 'function';
}
