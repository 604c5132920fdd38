/**
 * `claude-code[:MODEL]` — the `claude` CLI in print mode, so a Claude subscription can drive rlm
 * without an API key. Each call is one short-lived process: the conversation is rendered into a
 * single prompt on stdin, the system prompt goes through `--system-prompt`, and the JSON result
 * carries the text, usage and the cost the CLI computed itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { asModelCall, type Env, type EnvValues, processEnv } from '../../../core/env.ts';
import { RlmError } from '../../../core/errors.ts';
import { abortedError } from '../../../core/http-retry.ts';
import type { ChatMessage, Model, ModelRequest, ModelResponse, Usage } from '../model.ts';
import { Semaphore } from '../semaphore.ts';
import { providerError } from './errors.ts';

/**
 * Flags that make the agent behave like a plain completion: no built-in tools (it must not try to
 * run the REPL blocks itself), no MCP servers (the user's, rlm's plugin among them, would start for
 * every call and offer tools it must not use) and no session files left behind for every sub-call.
 */
const CLAUDE_CODE_DEFAULT_FLAGS: readonly string[] = [
  '--tools',
  '',
  '--strict-mcp-config',
  '--no-session-persistence',
];

export interface ClaudeCodeModelOptions {
  /** Passed as `--model`; unset means the CLI's default model. */
  model?: string;
  /** Executable to run (default `claude`, looked up on the child env's PATH). */
  executable?: string;
  /** Environment of the child process (default `process.env`). */
  env?: Env;
  cwd?: string;
  /** Kill the process group after this long (default 10 minutes). */
  timeoutMs?: number;
  /** Processes allowed at once for this model instance (default 2). */
  concurrency?: number;
  /** Replaces {@link CLAUDE_CODE_DEFAULT_FLAGS}, e.g. for an older CLI without `--tools`. */
  flags?: readonly string[];
  spec?: string;
}

const PROVIDER = 'claude-code';
// Linux refuses a single argv string over 128 KiB (MAX_ARG_STRLEN); larger system prompts go to stdin.
const MAX_FLAG_BYTES = 100_000;
const MAX_STDERR = 64 * 1024;

export const CLAUDE_NOT_FOUND =
  'the claude CLI was not found on PATH — install Claude Code or set CLAUDE_CODE_PATH';

/** True for an existing regular file (or a link to one) this process may execute. */
function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the `claude` CLI would be run from: `CLAUDE_CODE_PATH` when set (a bare name is looked up on PATH,
 * like spawn does; a path is resolved against the current directory), else the first executable file
 * named `claude` on `PATH`. Undefined when there is none.
 */
export function findClaudeExecutable(env: Pick<EnvValues, 'claudeCodePath' | 'path'>): string | undefined {
  const command = env.claudeCodePath ?? 'claude';
  if (command.includes('/') || command.includes(path.sep)) {
    const full = path.resolve(command);
    return isExecutableFile(full) ? full : undefined;
  }
  for (const dir of env.path.split(path.delimiter)) {
    if (dir === '') continue;
    const full = path.join(dir, command);
    if (isExecutableFile(full)) return full;
  }
  return undefined;
}

/** A {@link Model} that shells out to the Claude Code CLI. */
export class ClaudeCodeModel implements Model {
  readonly spec: string;
  readonly #opts: ClaudeCodeModelOptions;
  readonly #slots: Semaphore;

  constructor(opts: ClaudeCodeModelOptions = {}) {
    this.#opts = opts;
    this.spec = opts.spec ?? (opts.model ? `claude-code:${opts.model}` : 'claude-code');
    this.#slots = new Semaphore(opts.concurrency ?? 2);
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const release = await this.#slots.acquire(request.signal);
    try {
      const { args, stdin } = buildInvocation(request, this.#opts);
      // The CLI has no flag for it; it reads its output cap from this variable.
      // The CLI runs the user's hooks, rlm's own among them (plugin, `rlm claude hooks`): the mark tells them
      // the session is one of rlm's model calls, neither to import nor to be given rlm's context.
      const env = asModelCall(this.#opts.env ?? processEnv());
      if (request.maxOutputTokens !== undefined)
        env.CLAUDE_CODE_MAX_OUTPUT_TOKENS = String(request.maxOutputTokens);
      const out = await this.#run(args, stdin, request.signal, env);
      return parseResult(out, this.#opts.model);
    } finally {
      release();
    }
  }

  #run(args: string[], stdin: string, signal: AbortSignal | undefined, env: Env): Promise<string> {
    if (signal?.aborted) return Promise.reject(abortedError(PROVIDER));
    const timeoutMs = this.#opts.timeoutMs ?? 600_000;
    return new Promise<string>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(this.#opts.executable ?? 'claude', args, {
          env: env as NodeJS.ProcessEnv,
          ...(this.#opts.cwd ? { cwd: this.#opts.cwd } : {}),
          stdio: ['pipe', 'pipe', 'pipe'],
          // Own process group, so a timeout also takes down whatever the CLI started.
          detached: true,
        });
      } catch (err) {
        reject(spawnError(err));
        return;
      }
      const stdout: Buffer[] = [];
      let stderr = '';
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const killGroup = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const onAbort = () => {
        killGroup();
        finish(() => reject(abortedError(PROVIDER)));
      };
      const timer = setTimeout(() => {
        killGroup();
        finish(() => reject(providerError(PROVIDER, `the claude CLI timed out after ${timeoutMs} ms`)));
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });

      child.stdout?.on('data', (b: Buffer) => stdout.push(b));
      child.stderr?.on('data', (b: Buffer) => {
        stderr = (stderr + b.toString('utf8')).slice(-MAX_STDERR);
      });
      // A CLI that exits before reading its input makes the write fail with EPIPE; the exit code says more.
      child.stdin?.on('error', () => {});
      child.stdin?.end(stdin);
      child.on('error', (err) => finish(() => reject(spawnError(err))));
      child.on('close', (code, sig) => {
        const text = Buffer.concat(stdout).toString('utf8');
        if (code === 0) {
          finish(() => resolve(text));
          return;
        }
        const why = resultError(text) ?? lastLine(stderr) ?? (sig ? `killed by ${sig}` : 'no output');
        finish(() => reject(providerError(PROVIDER, `the claude CLI exited with ${code ?? sig}: ${why}`)));
      });
    });
  }
}

/** The argv and stdin for one request. Exported for tests. */
export function buildInvocation(
  request: Pick<ModelRequest, 'system' | 'messages'>,
  opts: Pick<ClaudeCodeModelOptions, 'model' | 'flags'> = {},
): { args: string[]; stdin: string } {
  const args = ['-p', '--output-format', 'json', ...(opts.flags ?? CLAUDE_CODE_DEFAULT_FLAGS)];
  if (opts.model) args.push('--model', opts.model);
  let preamble = '';
  if (request.system) {
    if (Buffer.byteLength(request.system) <= MAX_FLAG_BYTES) args.push('--system-prompt', request.system);
    else preamble = `<system>\n${request.system}\n</system>\n\n`;
  }
  return { args, stdin: preamble + renderConversation(request.messages) };
}

/**
 * One prompt from a conversation. A lone user message goes as-is; a history becomes a tagged
 * transcript with an instruction to continue it, since print mode takes a single turn.
 */
export function renderConversation(messages: readonly ChatMessage[]): string {
  const only = messages[0];
  if (messages.length === 1 && only?.role === 'user') return only.content;
  const turns = messages.map((m) => `<${m.role}>\n${m.content}\n</${m.role}>`).join('\n\n');
  return (
    'Below is the conversation so far. Write the next assistant turn only: no tags, no commentary ' +
    `about the transcript.\n\n${turns}\n`
  );
}

interface CliResult {
  type?: unknown;
  is_error?: unknown;
  subtype?: unknown;
  result?: unknown;
  usage?: unknown;
  total_cost_usd?: unknown;
  modelUsage?: unknown;
  stop_reason?: unknown;
}

/** Parses the CLI's JSON output (one result object, or with `--verbose` an array of events). */
export function parseResult(stdout: string, requestedModel: string | undefined): ModelResponse {
  const result = findResult(stdout);
  if (!result)
    throw providerError(PROVIDER, `unexpected output from the claude CLI: ${stdout.slice(0, 120)}`);
  if (result.is_error === true) {
    const why = typeof result.result === 'string' && result.result ? result.result : String(result.subtype);
    throw providerError(PROVIDER, `the claude CLI reported an error: ${why}`);
  }
  if (typeof result.result !== 'string') throw providerError(PROVIDER, 'the claude CLI result has no text');
  const response: ModelResponse = {
    text: result.result,
    usage: mapUsage(result.usage, result.total_cost_usd),
    model: mainModel(result.modelUsage) ?? requestedModel ?? 'claude-code',
  };
  if (typeof result.stop_reason === 'string') response.stopReason = result.stop_reason;
  return response;
}

function findResult(stdout: string): CliResult | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (Array.isArray(parsed)) {
    for (let i = parsed.length - 1; i >= 0; i--) {
      const e: unknown = parsed[i];
      if (e && typeof e === 'object' && (e as CliResult).type === 'result') return e as CliResult;
    }
    return undefined;
  }
  return parsed && typeof parsed === 'object' ? (parsed as CliResult) : undefined;
}

function resultError(stdout: string): string | undefined {
  const r = findResult(stdout);
  if (r?.is_error !== true) return undefined;
  return typeof r.result === 'string' && r.result ? lastLine(r.result) : String(r.subtype);
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}

function mapUsage(raw: unknown, cost: unknown): Usage {
  const u = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const usage: Usage = { inputTokens: num(u.input_tokens), outputTokens: num(u.output_tokens) };
  if (typeof u.cache_creation_input_tokens === 'number')
    usage.cacheWriteTokens = num(u.cache_creation_input_tokens);
  if (typeof u.cache_read_input_tokens === 'number') usage.cacheReadTokens = num(u.cache_read_input_tokens);
  if (typeof cost === 'number' && Number.isFinite(cost)) usage.costUsd = cost;
  return usage;
}

/** The model that did the work: the CLI may also bill a small model for housekeeping. */
function mainModel(modelUsage: unknown): string | undefined {
  if (!modelUsage || typeof modelUsage !== 'object') return undefined;
  let best: string | undefined;
  let bestOut = -1;
  for (const [name, stats] of Object.entries(modelUsage as Record<string, unknown>)) {
    const out = stats && typeof stats === 'object' ? num((stats as Record<string, unknown>).outputTokens) : 0;
    if (out > bestOut) {
      best = name;
      bestOut = out;
    }
  }
  return best;
}

function lastLine(text: string): string | undefined {
  const lines = text.split('\n').map((l) => l.trim());
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]) return lines[i];
  return undefined;
}

function spawnError(err: unknown): RlmError {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return new RlmError('PROVIDER', CLAUDE_NOT_FOUND, { provider: PROVIDER });
  if (code === 'EACCES') return providerError(PROVIDER, 'the claude CLI is not executable (EACCES)');
  return providerError(
    PROVIDER,
    `could not start the claude CLI: ${err instanceof Error ? err.message : String(err)}`,
  );
}
