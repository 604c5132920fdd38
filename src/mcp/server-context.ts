/**
 * What every tool of one server shares: the environment, defaults, open stores, limits and the diagnostic
 * log. Built once per process; HTTP sessions each get their own McpServer over the same context.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Env, processEnv, readEnv } from '../../core/env.ts';
import type { RlmOptions } from '../runtime/options.ts';
import { Semaphore } from '../runtime/semaphore.ts';
import { DEFAULT_LIMITS, type McpLimits } from './limits.ts';
import { StoreRegistry } from './stores.ts';

/** Defaults used when a tool call leaves the field out. */
export interface ServerDefaults {
  /** Root model spec (`--model`, else RLM_MODEL). */
  model?: string;
  /** Sub-call model spec (`--sub-model`, else RLM_SUB_MODEL; else the root model). */
  subModel?: string;
  /** Store folder (`--store`, else RLM_STORE). */
  store?: string;
}

/**
 * Library options applied to every `rlm_answer` run, except those a call controls itself. The seam for
 * tests (a sandbox or model factory) and for embedders (limits, prices, trace file).
 */
type RunOverrides = Omit<
  RlmOptions,
  'model' | 'subModel' | 'maxDepth' | 'maxIterations' | 'onEvent' | 'signal' | 'env'
>;

/** Options of {@link createServerContext}. */
export interface ServerContextOptions {
  /** Environment for defaults and provider keys (default `process.env`). */
  env?: Env;
  /** Directory relative paths and store folders resolve against (default `process.cwd()`). */
  cwd?: string;
  /** Explicit defaults; each one falls back to its environment variable. */
  defaults?: ServerDefaults;
  /** Replaces some of {@link DEFAULT_LIMITS}. */
  limits?: Partial<McpLimits>;
  /** Where diagnostics go, one line per call; default stderr. Never stdout: that is the stdio channel. */
  log?: (line: string) => void;
  /** See {@link RunOverrides}. */
  run?: RunOverrides;
  /**
   * Lets tool calls name `scripted:FILE` models (`rlm serve --allow-scripted`). Off by default: such a spec
   * makes the server read a file the caller names. The server's own defaults may always be scripted.
   */
  allowScriptedModels?: boolean;
  /**
   * Folders tool calls may read from (`rlm serve --allow-path`), relative to `cwd`. Set, they are the
   * whole fence: the client's MCP roots are not consulted. Unset: the client's roots when it offers them,
   * and over HTTP the working folder too.
   */
  allowPaths?: readonly string[];
  /**
   * PostgreSQL store URLs tool calls may name in `store` (`rlm serve --allow-store`), besides the
   * server's default store. A URL carries a login, so none is accepted from a caller otherwise.
   */
  allowStores?: readonly string[];
  /**
   * Runs each `rlm_ingest` in a child process of its own (src/mcp/ingest-process.ts), with the heap and
   * malloc tuning of `rlm ingest`: what the ingest allocates goes back to the system when it ends, where
   * a long-lived server would keep most of it (100 MB in: 105 MB before, some 280 MB for good after).
   * Progress, errors and cancellation work as in process. It starts Node processes, so it is for a
   * process that is the server's alone: `rlm serve` turns it on. Default false (the ingest runs in this
   * process, with Node's defaults).
   */
  boundIngestHeap?: boolean;
}

/** The resolved, shared state of a server. */
export interface ServerContext {
  readonly env: Env;
  readonly cwd: string;
  readonly defaults: Readonly<ServerDefaults>;
  readonly limits: Readonly<McpLimits>;
  readonly stores: StoreRegistry;
  /** Permits of the `rlm_answer` runs that may go at once ({@link McpLimits.maxConcurrentRuns}). */
  readonly runs: Semaphore;
  readonly run: RunOverrides;
  /** See {@link ServerContextOptions.allowScriptedModels}. */
  readonly allowScriptedModels: boolean;
  /** See {@link ServerContextOptions.allowPaths}; absolute. */
  readonly allowPaths: readonly string[] | undefined;
  /** See {@link ServerContextOptions.allowStores}. */
  readonly allowStores: readonly string[];
  /** See {@link ServerContextOptions.boundIngestHeap}. */
  readonly boundIngestHeap: boolean;
  readonly version: string;
  log(line: string): void;
  /** Counts `work` as an in-flight tool call until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Resolves once no tool call is in flight. */
  idle(): Promise<void>;
  /** Waits for in-flight calls (they see their cancellation first), then closes the open stores. */
  close(): Promise<void>;
}

function nonEmpty(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t === undefined || t === '' ? undefined : t;
}

/** Resolves defaults from options and environment and opens nothing yet. */
export function createServerContext(opts: ServerContextOptions = {}): ServerContext {
  const env = opts.env ?? processEnv();
  const fromEnv = readEnv(env);
  const cwd = opts.cwd ?? process.cwd();
  const given = opts.defaults ?? {};
  const defaults: ServerDefaults = {};
  const model = nonEmpty(given.model) ?? fromEnv.model;
  const subModel = nonEmpty(given.subModel) ?? fromEnv.subModel;
  const store = nonEmpty(given.store) ?? fromEnv.store;
  if (model !== undefined) defaults.model = model;
  if (subModel !== undefined) defaults.subModel = subModel;
  if (store !== undefined) defaults.store = store;
  const stores = new StoreRegistry(env, cwd);
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const inflight = new Set<Promise<unknown>>();
  const idle = async (): Promise<void> => {
    while (inflight.size > 0) await Promise.allSettled([...inflight]);
  };
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  return {
    env,
    cwd,
    defaults,
    limits,
    stores,
    runs: new Semaphore(limits.maxConcurrentRuns),
    run: opts.run ?? {},
    allowScriptedModels: opts.allowScriptedModels ?? false,
    allowPaths: opts.allowPaths?.map((d) => path.resolve(cwd, d)),
    allowStores: opts.allowStores ?? [],
    boundIngestHeap: opts.boundIngestHeap ?? false,
    version: packageVersion(),
    log,
    track(work) {
      const settled = work.then(
        () => undefined,
        () => undefined,
      );
      inflight.add(settled);
      void settled.then(() => inflight.delete(settled));
      return work;
    },
    idle,
    async close() {
      await idle();
      await stores.close();
    },
  };
}

/** The package version: src/mcp/ runs from source in development and from dist/src/mcp/ when installed. */
function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const url = new URL(rel, import.meta.url);
      const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'rlm' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}
