/** An in-process server and SDK client joined by the in-memory transport. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from '../../../src/mcp/server.ts';
import {
  createServerContext,
  type ServerContext,
  type ServerContextOptions,
} from '../../../src/mcp/server-context.ts';

export interface Connected {
  ctx: ServerContext;
  client: Client;
  /** Lines the server logged (its stderr). */
  logs: string[];
  /** Calls a tool and returns the result typed as a tool result. */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** Starts a server with `opts` (environment empty unless given) and a connected client. */
export async function connect(opts: ServerContextOptions = {}): Promise<Connected> {
  const logs: string[] = [];
  const ctx = createServerContext({ env: {}, log: (line) => logs.push(line), ...opts });
  const server = createServer(ctx);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'rlm-test', version: '0.0.0' });
  await client.connect(clientSide);
  return {
    ctx,
    client,
    logs,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    async close() {
      await client.close();
      await server.close();
      await ctx.close();
    },
  };
}

/** The text of a tool result's first content item. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}
