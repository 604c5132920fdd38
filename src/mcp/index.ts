/**
 * `rlm/mcp`: the MCP server behind `rlm serve`, for embedding it in your own process. Loads the MCP SDK
 * and the runtime; the sandbox and the stores load when a tool first needs them.
 */

export { DEFAULT_HTTP_PORT, type HttpServeOptions, type HttpServerHandle, serveHttp } from './http.ts';
export { createServer, TOOL_NAMES } from './server.ts';
export { createServerContext, type ServerContext, type ServerContextOptions } from './server-context.ts';
export { type StdioServeOptions, serveStdio } from './stdio.ts';
