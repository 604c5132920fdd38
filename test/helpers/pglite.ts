/**
 * A PostgreSQL server with pgvector, for the tests of vector search on PostgreSQL stores. Debian ships
 * no pgvector, so these tests use PGlite (PostgreSQL built to WebAssembly, from npm, with its pgvector
 * and pg_trgm extensions), served on a free port of 127.0.0.1 by its socket server, started the way a
 * user starts it: the package's `pglite-server` command. The store's real client (`pg`) then talks to
 * it over the wire protocol. It needs no system package, so these tests run everywhere and never skip.
 *
 * PGlite is one PostgreSQL session that every connection shares: its transactions run one at a time,
 * and a `search_path` set by one connection holds for all. So a server serves one store schema at a
 * time: tests of one file run one after the other against the default schema (`rlm`), which
 * {@link PgliteServer.storeUrl} empties for each test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';
import { onTestFinished } from 'vitest';

export interface PgliteServer {
  /** URL of the server's database (user `postgres`, any password). */
  url: string;
  /** The URL of an empty store for the current test (schema `rlm`, dropped when the test ends). */
  storeUrl(): string;
  /** Runs SQL on the server, the store's schema first on the search path. */
  sql(text: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/** The `pglite-server` script of @electric-sql/pglite-socket, as npm links it in node_modules/.bin. */
function serverScript(): string {
  // The package exports no package.json: find it above its entry point (dist/index.js).
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite-socket');
  const root = path.dirname(path.dirname(entry));
  const { bin } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  return path.join(root, bin['pglite-server']!);
}

/**
 * Starts a server and resolves once it listens (its first line naming the port); with `vector: false`,
 * one without pgvector, as most PostgreSQL servers are.
 */
export function startPglite(opts: { vector?: boolean } = {}): Promise<PgliteServer> {
  const extensions = opts.vector === false ? 'pg_trgm' : '@electric-sql/pglite-pgvector:vector,pg_trgm';
  const child = spawn(
    process.execPath,
    [
      serverScript(),
      '--db=memory://',
      '--host=127.0.0.1',
      '--port=0',
      `--extensions=${extensions}`,
      '--max-connections=200',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const port = /listening on \{"port":(\d+)/.exec(out)?.[1];
      if (port === undefined) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve(server(child, `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, exited));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code) =>
      reject(new Error(`pglite-server exited (${code}) before listening:\n${out}`)),
    );
  });
}

function server(child: ChildProcess, url: string, exited: Promise<void>): PgliteServer {
  return {
    url,
    storeUrl() {
      onTestFinished(async () => {
        await query(url, 'DROP SCHEMA IF EXISTS rlm CASCADE');
      });
      return url;
    },
    sql: (text, values) => query(url, text, values),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs one statement on the server. */
async function query(url: string, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET search_path TO rlm, public');
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}
