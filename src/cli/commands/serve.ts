/** `rlm serve`: the MCP server over stdio (default) or Streamable HTTP. */

import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { readEnv } from '../../../core/env.ts';
import { RlmError } from '../../../core/errors.ts';
import {
  DEFAULT_HTTP_PORT,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  serveHttp,
} from '../../mcp/http.ts';
import { DEFAULT_LIMITS } from '../../mcp/limits.ts';
import { TOOL_NAMES } from '../../mcp/server.ts';
import { createServerContext, type ServerDefaults } from '../../mcp/server-context.ts';
import { serveStdio } from '../../mcp/stdio.ts';
import { MODEL_SPECS, parseModelSpec } from '../../runtime/providers/specs.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, shown } from '../io.ts';

const HELP = `usage: rlm serve [--transport stdio|http] [options]

Runs the MCP server. Tools: ${TOOL_NAMES.join(', ')} (README, "Tools", says what each does).
Diagnostics go to stderr.

options:
  --transport T        stdio (default: the client starts rlm) or http (Streamable HTTP at /mcp)
  --port N             HTTP port (default ${DEFAULT_HTTP_PORT}; 0 picks a free one)
  --host H             HTTP address (default 127.0.0.1; anything else needs RLM_MCP_TOKEN)
  --allow-host NAME    extra Host name accepted over HTTP (repeatable; loopback names always are)
  --allow-origin URL   browser Origin accepted over HTTP (repeatable; none by default)
  --max-sessions N     open HTTP sessions at most (default ${DEFAULT_MAX_SESSIONS})
  --idle-minutes N     close an HTTP session unused this long (default ${DEFAULT_SESSION_IDLE_MS / 60_000})
  --max-body-mb N      largest HTTP request body in MiB (default ${DEFAULT_MAX_BODY_BYTES / 1024 / 1024}); pass
                       large material as paths or a store, not inline context
  --model SPEC         default model (else $RLM_MODEL), one of:
                       ${MODEL_SPECS}
  --sub-model SPEC     default sub-call model (else $RLM_SUB_MODEL, else the model)
  --store DIR|URL      default store: a folder or a postgres:// URL (else $RLM_STORE)
  --allow-store URL    a postgres:// store URL tool calls may name in \`store\` (repeatable); callers may
                       name no other URL (a URL carries a login)
  --allow-path DIR     folder tool calls may read files and stores from (repeatable); honoured whatever
                       the client says about MCP roots. Without it: the client's roots when it offers
                       them, else any folder over stdio; over HTTP also only the working folder
  --max-paths-mb N     MiB of files one rlm_answer call may read through paths (default ${DEFAULT_LIMITS.maxPathsBytes / 1024 / 1024});
                       more belongs in a store built once with rlm_ingest
  --max-runs N         rlm_answer runs at once (default ${DEFAULT_LIMITS.maxConcurrentRuns}); further calls wait their turn (each run
                       holds an isolate process, its sub-RLMs one each)
  --allow-scripted     let tool calls name scripted:FILE models (tests, demos); off by default, since
                       the server would read a file the caller names

environment: RLM_MODEL, RLM_SUB_MODEL, RLM_STORE, RLM_MCP_TOKEN (HTTP bearer token), provider keys
(ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL...), RLM_MAX_* run limits, RLM_TRACE (JSONL trace
file every rlm_answer run is appended to; results name it and carry their runId) and RLM_TRACE_LEVEL.
`;

export default async function serve(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    transport: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'allow-host': { type: 'string', multiple: true },
    'allow-origin': { type: 'string', multiple: true },
    'max-sessions': { type: 'string' },
    'max-runs': { type: 'string' },
    'idle-minutes': { type: 'string' },
    'max-body-mb': { type: 'string' },
    model: { type: 'string' },
    'sub-model': { type: 'string' },
    store: { type: 'string' },
    'allow-scripted': { type: 'boolean' },
    'allow-path': { type: 'string', multiple: true },
    'allow-store': { type: 'string', multiple: true },
    'max-paths-mb': { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 0)
    throw new RlmError('BAD_INPUT', `serve: unexpected argument '${positionals[0]}'`);
  const transport = values.transport ?? 'stdio';
  if (transport !== 'stdio' && transport !== 'http') {
    throw new RlmError('BAD_INPUT', `--transport must be stdio or http, got '${transport}'`);
  }
  const port = intFlag(values.port, '--port', 0);
  if (port !== undefined && port > 65535)
    throw new RlmError('BAD_INPUT', `--port must be at most 65535, got ${port}`);
  if (transport === 'stdio' && (port !== undefined || values.host !== undefined)) {
    throw new RlmError('BAD_INPUT', '--port and --host need --transport http');
  }
  const maxPathsMb = intFlag(values['max-paths-mb'], '--max-paths-mb', 1);
  const maxSessions = intFlag(values['max-sessions'], '--max-sessions', 1);
  const maxRuns = intFlag(values['max-runs'], '--max-runs', 1);
  const idleMinutes = intFlag(values['idle-minutes'], '--idle-minutes', 1);
  const maxBodyMb = intFlag(values['max-body-mb'], '--max-body-mb', 1);
  if (
    transport === 'stdio' &&
    (maxSessions !== undefined || idleMinutes !== undefined || maxBodyMb !== undefined)
  ) {
    throw new RlmError('BAD_INPUT', '--max-sessions, --idle-minutes and --max-body-mb need --transport http');
  }
  const defaults: ServerDefaults = {};
  // An unknown scheme now, not in every later rlm_answer (a missing key may come with the host's env).
  if (values.model !== undefined) defaults.model = checkedSpec(values.model, '--model');
  if (values['sub-model'] !== undefined) defaults.subModel = checkedSpec(values['sub-model'], '--sub-model');
  if (values.store !== undefined) defaults.store = values.store;
  // Log lines quote what clients sent (paths, ids, error messages): shown as data on a terminal.
  const log = (line: string) => void io.stderr.write(`${shown(io.stderr, line)}\n`);
  const ctx = createServerContext({
    env: io.env,
    cwd: io.cwd,
    defaults,
    log,
    allowScriptedModels: values['allow-scripted'] === true,
    // The server is this process's alone, so each rlm_ingest may run in a child process of its own.
    boundIngestHeap: true,
    ...(values['allow-path'] === undefined ? {} : { allowPaths: values['allow-path'] }),
    ...(values['allow-store'] === undefined ? {} : { allowStores: values['allow-store'] }),
    limits: {
      ...(maxPathsMb === undefined ? {} : { maxPathsBytes: maxPathsMb * 1024 * 1024 }),
      ...(maxRuns === undefined ? {} : { maxConcurrentRuns: maxRuns }),
    },
  });

  // A folder allowed that does not exist is most often a typo: said once, at the start.
  for (const dir of values['allow-path'] ?? [])
    if (!existsSync(path.resolve(io.cwd, dir)))
      log(
        `rlm serve: warning: --allow-path ${dir} does not exist (yet); calls naming paths under it will fail until it does`,
      );
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    if (transport === 'stdio') {
      // Stray console output of dependencies cannot reach stdout meanwhile: main() redirects it.
      await serveStdio(ctx, {
        stdin: io.stdin as Readable,
        stdout: io.stdout as unknown as Writable,
        signal: controller.signal,
      });
    } else {
      const token = readEnv(io.env).mcpToken;
      const handle = await serveHttp(ctx, {
        ...(values.host === undefined ? {} : { host: values.host }),
        ...(port === undefined ? {} : { port }),
        ...(token ? { token } : {}),
        ...(values['allow-host'] ? { allowedHosts: values['allow-host'] } : {}),
        ...(values['allow-origin'] ? { allowedOrigins: values['allow-origin'] } : {}),
        ...(maxSessions === undefined ? {} : { maxSessions }),
        ...(idleMinutes === undefined ? {} : { sessionIdleMs: idleMinutes * 60_000 }),
        ...(maxBodyMb === undefined ? {} : { maxBodyBytes: maxBodyMb * 1024 * 1024 }),
      });
      log(
        `rlm serve: MCP over HTTP at ${handle.url}${token ? ' (bearer token required)' : ''}; Ctrl-C stops`,
      );
      await new Promise<void>((resolve) => {
        if (controller.signal.aborted) resolve();
        controller.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      log('rlm serve: stopping');
      await handle.close();
    }
    return EXIT_OK;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await ctx.close();
  }
}

/** `spec` if its scheme is one rlm knows (parseModelSpec), else BAD_INPUT naming the flag. */
function checkedSpec(spec: string, flag: string): string {
  try {
    parseModelSpec(spec);
  } catch (err) {
    throw new RlmError('BAD_INPUT', `${flag}: ${(err as Error).message}`);
  }
  return spec;
}
