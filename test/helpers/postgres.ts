/**
 * The PostgreSQL server the tests of memory/postgres/ run against: `RLM_TEST_POSTGRES` holds its URL
 * (.ci/run starts a throwaway cluster with .ci/postgres.sh and sets it). Without it those tests skip with
 * one message, unless `RLM_REQUIRE_POSTGRES=1` (CI as root), where a missing server fails the run.
 * Each test gets a schema of its own, dropped when it ends.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onTestFinished } from 'vitest';

/** The server's URL (a database the tests may create schemas in), or undefined. */
export const postgresUrl: string | undefined = process.env.RLM_TEST_POSTGRES || undefined;

const required = process.env.RLM_REQUIRE_POSTGRES === '1';
if (postgresUrl === undefined && required)
  throw new Error('RLM_REQUIRE_POSTGRES=1 but RLM_TEST_POSTGRES names no server (.ci/postgres.sh start)');

let warned = false;
/** Whether PostgreSQL tests run here; says once why not. */
export function postgresAvailable(what: string): boolean {
  if (postgresUrl === undefined && !warned) {
    warned = true;
    console.warn(
      `${what}: SKIPPED the PostgreSQL tests: RLM_TEST_POSTGRES is not set (.ci/postgres.sh start prints a server's URL; .ci/run does it)`,
    );
  }
  return postgresUrl !== undefined;
}

/** `base` (default the test server) with `?schema=` set. */
export function withSchema(schema: string, base: string = postgresUrl!): string {
  const u = new URL(base);
  u.searchParams.set('schema', schema);
  return u.toString();
}

/** A URL naming a new, empty schema of the test server, dropped when the current test ends. */
export function freshSchemaUrl(): string {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  onTestFinished(() => dropSchema(schema));
  return withSchema(schema);
}

/** Runs SQL on the test server as its superuser. */
export async function adminQuery(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}
