/**
 * The environment: every variable rlm reads, what it means, and how its text becomes a value. This is the
 * one module that reads `process.env` or names a variable; the rest of rlm asks {@link readEnv} for
 * values, and passes the source along (an {@link Env}) where a caller may give its own (the `env` option of
 * the library, a test's fake environment). `test/core/env.test.ts` checks both, and that README's
 * environment table is {@link envTable}.
 *
 * One rule for every variable: the value is trimmed, and a variable set to nothing (or blanks) is unset.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where variables come from: `process.env`, or a record given in its place. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The variable of each run limit it can set, by the `RlmOptions` field it fills. */
export const LIMIT_VARIABLES = {
  maxDepth: 'RLM_MAX_DEPTH',
  maxIterations: 'RLM_MAX_ITERATIONS',
  maxSubIterations: 'RLM_MAX_SUB_ITERATIONS',
  maxSubCalls: 'RLM_MAX_SUB_CALLS',
  maxTokens: 'RLM_MAX_TOKENS',
  maxCostUsd: 'RLM_MAX_COST_USD',
  maxWallMs: 'RLM_MAX_WALL_MS',
  subCallConcurrency: 'RLM_SUB_CALL_CONCURRENCY',
  maxAnswerChars: 'RLM_MAX_ANSWER_CHARS',
} as const;

type LimitOption = keyof typeof LIMIT_VARIABLES;

/**
 * Every variable, grouped as README's table shows them: names and meaning. The meaning is the variable's
 * documentation (README's table is rendered from it), so it says the default too.
 */
const VARIABLES = [
  {
    names: ['RLM_MODEL'],
    meaning:
      'default root model (`anthropic:MODEL`, `openai:MODEL`, `claude-code[:MODEL]`, `scripted:FILE`, ...); `--model` and the `model` option win over it',
  },
  {
    names: ['RLM_SUB_MODEL'],
    meaning: 'default model for sub-calls (default: the root model); `--sub-model` wins over it',
  },
  {
    names: ['RLM_MODELS'],
    meaning: 'comma-separated further models a sub-call may pick (`llm_query(p, c, {model})`)',
  },
  {
    names: ['RLM_STORE'],
    meaning:
      'default store: for the store commands, for `rlm answer` without `--context`, and for the MCP server (`rlm_answer` without context or paths, and the store tools); `--store` wins over it',
  },
  {
    names: Object.values(LIMIT_VARIABLES),
    meaning:
      'run limits (`--max-depth`, ... and the options of the same names win over them), checked against the same bounds',
  },
  {
    names: ['RLM_MAX_OUTPUT_TOKENS'],
    meaning: "output token cap per model reply, sent to every provider (default: the provider's)",
  },
  {
    names: ['RLM_TRACE', 'RLM_TRACE_LEVEL'],
    meaning:
      'a JSONL trace file every run appends to (its folder must exist), and its level (`full`, the default, or `summary`); results then carry its path as `trace` and their `runId`, and `rlm trace show|html FILE --run ID` shows one run',
  },
  {
    names: ['RLM_MCP_TOKEN'],
    meaning: 'bearer token every request to `rlm serve --transport http` must carry',
  },
  {
    names: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'],
    meaning: 'key (required) and API root for `anthropic:` models',
  },
  {
    names: ['OPENAI_API_KEY', 'OPENAI_BASE_URL'],
    meaning:
      'key and endpoint (default `https://api.openai.com/v1`) of `openai:` models and the `openai:` embedder: any OpenAI-compatible server (llama.cpp, vLLM, Ollama...); the key is needed only by api.openai.com',
  },
  {
    names: ['OLLAMA_BASE_URL'],
    meaning: 'endpoint of the `ollama:` embedder (default `http://127.0.0.1:11434/v1`)',
  },
  { names: ['RLM_EMBEDDINGS_API_KEY'], meaning: 'bearer key for an `http(s)://HOST/v1#MODEL` embedder' },
  {
    names: ['CLAUDE_CODE_PATH'],
    meaning: 'the `claude` executable for `claude-code` models (default: `claude` found on `PATH`)',
  },
  {
    names: ['CLAUDE_CONFIG_DIR'],
    meaning:
      "Claude Code's configuration folder (default `~/.claude`): `rlm claude ingest` reads its `projects/`, `rlm claude hooks` edits its `settings.json`",
  },
  {
    names: ['HOME'],
    meaning: "where a leading `~` in a store path leads (default: the account's home folder)",
  },
  { names: ['PATH'], meaning: 'where the `claude` executable is looked for' },
  { names: ['NO_COLOR'], meaning: 'set to anything: no colours, even on a terminal' },
  {
    names: ['MALLOC_ARENA_MAX'],
    meaning:
      "glibc's malloc arenas. On Linux `rlm ingest`, `rlm repair`, `rlm claude ingest` and `rlm store copy` run with 1: they start themselves again with it set (same process id), since with an arena a thread a long ingest kept the holes of freed blocks resident. Set it to keep another number (read by bin/lib/batch-malloc.js, before anything else loads)",
  },
  {
    names: ['RLM_DEBUG'],
    meaning: 'set to anything: the stack of an unexpected error, and notices libraries print, on stderr',
  },
  {
    names: ['RLM_CONTEXT_TOKENS'],
    meaning:
      'token budget of `rlm claude context`, the text the plugin gives a Claude Code session at its start (default 600); `--max-tokens` wins over it',
  },
  {
    names: ['RLM_MODEL_CALL'],
    meaning:
      "set by rlm in the environment of a Claude Code it runs as a model: rlm's hooks neither import that session nor give it context",
  },
  {
    names: ['PGUSER', 'PGPASSWORD'],
    meaning:
      'user and password of a PostgreSQL store URL that leaves them out, read by the PostgreSQL client as `psql` reads them (as is `~/.pgpass`)',
  },
  {
    names: ['RLM_BENCH_SCALE_MB'],
    meaning: 'size of the generated corpus of `npm run bench:cli`, in MB (default 100; repository only)',
  },
  {
    names: ['RLM_BENCH_STORE_DIR'],
    meaning:
      'folder where `npm run bench -- scale` keeps its generated corpora and cached 1 GB figures between runs (`huge-ingest.json`; the report says when they were measured) (default: a temp folder, removed; repository only)',
  },
  {
    names: ['RLM_BENCH_POSTGRES', 'RLM_BENCH_PG_MB', 'RLM_BENCH_PG_MEMORIES', 'RLM_BENCH_PG_FIXTURES'],
    meaning:
      'the PostgreSQL benchmark: its server URL (default: a throwaway cluster it starts), the corpus size in MB (default 100), the memories (default 100000), and a folder where it keeps its corpus and memory stores between runs (with a server that keeps them; `npm run bench -- --prepare postgres` builds them) (repository only)',
  },
  {
    names: ['RLM_BENCH_CONTEXT_MB'],
    meaning:
      'context sizes of `npm run bench -- context`, in MB, comma-separated (default 1,10,100; repository only)',
  },
  {
    names: ['RLM_BENCH_CONTEXT_RUNS'],
    meaning: 'rounds per size and runtime of `npm run bench -- context` (default 3; repository only)',
  },
  {
    names: ['RLM_BENCH_OFFICIAL_PYTHON'],
    meaning:
      'the Python with the official RLM installed, run beside rlm by `npm run bench -- context` (default /tmp/official-rlm/bin/python; repository only)',
  },
] as const;

/** The name of a variable rlm reads. */
type Name = (typeof VARIABLES)[number]['names'][number];

/** What the environment says, as values. Unset variables are undefined unless a default is noted. */
export interface EnvValues {
  /** RLM_MODEL */
  readonly model: string | undefined;
  /** RLM_SUB_MODEL */
  readonly subModel: string | undefined;
  /** RLM_MODELS, split at commas; empty when unset. */
  readonly models: readonly string[];
  /** The limit variables that are set, by option, with their text (checked by the option schema). */
  readonly limits: Readonly<Partial<Record<LimitOption, string>>>;
  /** RLM_MAX_OUTPUT_TOKENS, as text (checked by the options). */
  readonly maxOutputTokens: string | undefined;
  /** RLM_TRACE */
  readonly trace: string | undefined;
  /** RLM_TRACE_LEVEL, as text (checked by the options). */
  readonly traceLevel: string | undefined;
  /** RLM_STORE */
  readonly store: string | undefined;
  /** RLM_MCP_TOKEN */
  readonly mcpToken: string | undefined;
  /** ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL */
  readonly anthropic: { readonly apiKey: string | undefined; readonly baseUrl: string | undefined };
  /** OPENAI_API_KEY, OPENAI_BASE_URL (the clients' own default applies when unset). */
  readonly openai: { readonly apiKey: string | undefined; readonly baseUrl: string | undefined };
  /** OLLAMA_BASE_URL */
  readonly ollamaBaseUrl: string | undefined;
  /** RLM_EMBEDDINGS_API_KEY */
  readonly embeddingsApiKey: string | undefined;
  /** CLAUDE_CODE_PATH */
  readonly claudeCodePath: string | undefined;
  /** CLAUDE_CONFIG_DIR, default `~/.claude`. */
  readonly claudeConfigDir: string;
  /** HOME, default the account's home folder. */
  readonly home: string;
  /** PATH, '' when unset. */
  readonly path: string;
  /** NO_COLOR is unset. */
  readonly color: boolean;
  /** RLM_MODEL_CALL is set: this process runs inside a model call rlm made (a Claude Code session). */
  readonly modelCall: boolean;
  /** RLM_DEBUG is set. */
  readonly debug: boolean;
  /** RLM_BENCH_SCALE_MB, as text. */
  readonly benchScaleMb: string | undefined;
  /** RLM_BENCH_STORE_DIR. */
  readonly benchStoreDir: string | undefined;
  /** PGUSER: the PostgreSQL client's default user (named in messages; the client reads it itself). */
  readonly pgUser: string | undefined;
  /** RLM_BENCH_POSTGRES, RLM_BENCH_PG_MB, RLM_BENCH_PG_MEMORIES, RLM_BENCH_PG_FIXTURES, as text. */
  readonly benchPostgres: {
    readonly url: string | undefined;
    readonly mb: string | undefined;
    readonly memories: string | undefined;
    readonly fixtures: string | undefined;
  };
  /** RLM_BENCH_CONTEXT_MB, RLM_BENCH_CONTEXT_RUNS and RLM_BENCH_OFFICIAL_PYTHON, as text. */
  readonly benchContext: {
    mb: string | undefined;
    runs: string | undefined;
    officialPython: string | undefined;
  };
  /** RLM_CONTEXT_TOKENS, as written (the command that uses it checks it). */
  readonly contextTokens: string | undefined;
}

/** The process's own environment: the source everything defaults to. */
export function processEnv(): Env {
  return process.env;
}

/** The values `source` (default: the process's environment) gives. */
export function readEnv(source: Env = process.env): EnvValues {
  const get = (name: Name): string | undefined => {
    const value = source[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const limits: Partial<Record<LimitOption, string>> = {};
  for (const [option, name] of Object.entries(LIMIT_VARIABLES) as [LimitOption, Name][]) {
    const value = get(name);
    if (value !== undefined) limits[option] = value;
  }
  const home = get('HOME') ?? homedir();
  return {
    model: get('RLM_MODEL'),
    subModel: get('RLM_SUB_MODEL'),
    models: (get('RLM_MODELS') ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter((m) => m !== ''),
    limits,
    maxOutputTokens: get('RLM_MAX_OUTPUT_TOKENS'),
    trace: get('RLM_TRACE'),
    traceLevel: get('RLM_TRACE_LEVEL'),
    store: get('RLM_STORE'),
    mcpToken: get('RLM_MCP_TOKEN'),
    anthropic: { apiKey: get('ANTHROPIC_API_KEY'), baseUrl: get('ANTHROPIC_BASE_URL') },
    openai: { apiKey: get('OPENAI_API_KEY'), baseUrl: get('OPENAI_BASE_URL') },
    ollamaBaseUrl: get('OLLAMA_BASE_URL'),
    embeddingsApiKey: get('RLM_EMBEDDINGS_API_KEY'),
    claudeCodePath: get('CLAUDE_CODE_PATH'),
    claudeConfigDir: get('CLAUDE_CONFIG_DIR') ?? join(home, '.claude'),
    home,
    path: get('PATH') ?? '',
    color: get('NO_COLOR') === undefined,
    debug: get('RLM_DEBUG') !== undefined,
    modelCall: get('RLM_MODEL_CALL') !== undefined,
    benchScaleMb: get('RLM_BENCH_SCALE_MB'),
    benchStoreDir: get('RLM_BENCH_STORE_DIR'),
    pgUser: get('PGUSER'),
    benchPostgres: {
      url: get('RLM_BENCH_POSTGRES'),
      mb: get('RLM_BENCH_PG_MB'),
      memories: get('RLM_BENCH_PG_MEMORIES'),
      fixtures: get('RLM_BENCH_PG_FIXTURES'),
    },
    benchContext: {
      mb: get('RLM_BENCH_CONTEXT_MB'),
      runs: get('RLM_BENCH_CONTEXT_RUNS'),
      officialPython: get('RLM_BENCH_OFFICIAL_PYTHON'),
    },
    contextTokens: get('RLM_CONTEXT_TOKENS'),
  };
}

/**
 * `env` with the mark rlm puts on the environment of a Claude Code it starts as a model: that session runs
 * the user's hooks, rlm's own among them, which must neither import it nor give it rlm's context.
 */
export function asModelCall(env: Env): Record<string, string | undefined> {
  return { ...env, RLM_MODEL_CALL: '1' };
}

/** README's environment table: a row per group of {@link VARIABLES}. */
export function envTable(): string {
  const rows = VARIABLES.map(
    (v) => `| ${v.names.map((n) => `\`${n}\``).join(', ')} | ${v.meaning.replaceAll('|', '\\|')} |`,
  );
  return ['| variable | meaning |', '|---|---|', ...rows].join('\n');
}

/** Every variable name rlm reads. */
export function variableNames(): string[] {
  return VARIABLES.flatMap((v) => [...v.names]);
}
