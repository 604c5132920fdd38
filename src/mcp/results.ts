/**
 * Shaping tool results. Successful calls return `structuredContent` (checked against the tool's output
 * schema by the SDK) plus a text rendering for clients that only read `content`. Failures are tool errors
 * (`isError`), never protocol errors, so the calling model sees the reason and can fix its arguments.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isRlmError } from '../../core/errors.ts';
import type { ServerContext } from './server-context.ts';

/** A successful result; `text` defaults to the structured value as JSON. */
export function structured(value: Record<string, unknown>, text?: string): CallToolResult {
  return {
    content: [{ type: 'text', text: text ?? JSON.stringify(value, null, 2) }],
    structuredContent: value,
  };
}

/**
 * A tool error naming the tool and the error code. Expected failures (an RlmError: bad input, missing
 * store, missing key) are reported as is; anything else is a bug, so its stack goes to the log.
 */
function toolError(tool: string, err: unknown, log: (line: string) => void): CallToolResult {
  let text: string;
  if (isRlmError(err)) {
    text = `${tool}: ${err.message} [${err.code}]`;
  } else {
    const e = err as NodeJS.ErrnoException | undefined;
    if (e?.code === 'ENOENT' && typeof e.path === 'string')
      text = `${tool}: no such file or directory: ${e.path} [BAD_INPUT]`;
    else {
      text = `${tool}: unexpected error: ${e?.message ?? String(err)}`;
      log(`rlm serve: ${tool} failed: ${e?.stack ?? String(err)}`);
    }
  }
  return { content: [{ type: 'text', text }], isError: true };
}

/** Runs a tool body as a tracked in-flight call and turns any throw into a {@link toolError}. */
export function guard(
  tool: string,
  ctx: Pick<ServerContext, 'log' | 'track'>,
  body: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  return ctx.track(body().catch((err: unknown) => toolError(tool, err, (line) => ctx.log(line))));
}
