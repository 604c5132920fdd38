/** Types of mcp-refuse.js (plain JavaScript, since it must parse on older Nodes). */
import type { Readable, Writable } from 'node:stream';

/**
 * Writes `message` to stderr and, when stdin is a pipe, answers the first JSON-RPC request read from it
 * with an error carrying the message (what MCP hosts show in their server status).
 */
export function refuseMcp(
  message: string,
  io?: { stdin?: Readable & { isTTY?: boolean }; stdout?: Writable; stderr?: Writable },
): Promise<void>;

/** True when `args` (after the node and script paths) start an MCP server over stdio. */
export function servesStdio(args: readonly string[]): boolean;
