/**
 * What belongs to one MCP connection (one McpServer) rather than to the whole process. Tool modules take
 * it from the server; it lives apart from server.ts so they import it without importing the server.
 */
import type { FileAccess } from './access.ts';

export interface Connection {
  /** The file-access fences: check every path a caller names before reading it. */
  readonly access: FileAccess;
}
