/** The `store` argument shared by the store tools, and its fallback to the server's default store. */
import * as z from 'zod';
import { RlmError } from '../../../core/errors.ts';
import { isPostgresUrl, redactUrl } from '../../../memory/postgres/url.ts';
import type { Connection } from '../connection.ts';
import type { McpLimits } from '../limits.ts';
import type { ServerContext } from '../server-context.ts';

/** A required text argument of at most `maxQueryChars` characters (a query, a pattern); errors name it. */
export function queryArg(limits: Pick<McpLimits, 'maxQueryChars'>, what: string) {
  return z
    .string()
    .min(1, `${what} must not be empty`)
    .max(limits.maxQueryChars, `${what} is longer than ${limits.maxQueryChars} characters`);
}

/** An optional count of results (`k`, `limit`): a whole number from 1 to `maxResults`. */
export function countArg(limits: Pick<McpLimits, 'maxResults'>) {
  return z.number().int().min(1).max(limits.maxResults).optional();
}

/**
 * Tags, 50 at most, each of at most `maxChars` characters when given. A tag that is empty or only
 * spaces is refused: it would be stored, or looked for, as a tag no one meant.
 */
export function tagsArg(maxChars?: number) {
  const tag = z.string().regex(/\S/, 'a tag must not be empty or only spaces');
  return z.array(maxChars === undefined ? tag : tag.max(maxChars)).max(50);
}

/** Optional store folder; the server's default (RLM_STORE) applies when it is left out. */
export const storeArg = z
  .string()
  .min(1, 'store must not be empty')
  .optional()
  .describe(
    'Store folder (relative to the server\u2019s working directory), or a postgres:// URL the server allows. Default: RLM_STORE.',
  );

/** The store folder to use, or BAD_INPUT naming the field when there is neither an argument nor a default. */
function storeDir(ctx: ServerContext, given: string | undefined): string {
  const dir = given ?? ctx.defaults.store;
  if (dir === undefined) {
    throw new RlmError('BAD_INPUT', 'store is required: pass `store` or start the server with RLM_STORE set');
  }
  return dir;
}

/**
 * Like {@link storeDir}, and a store named by the caller must be one the server allows: a folder inside
 * the connection's file-access fences, or a PostgreSQL URL that is the server's default store or given
 * with `--allow-store` (the server's own default is trusted).
 */
export async function checkedStoreDir(
  ctx: ServerContext,
  conn: Connection,
  given: string | undefined,
  signal?: AbortSignal,
): Promise<string> {
  const dir = storeDir(ctx, given);
  if (given !== undefined) await checkStoreAccess(ctx, conn, given, signal);
  return dir;
}

/** Throws ACCESS_DENIED unless a caller may name the store `given`. */
export async function checkStoreAccess(
  ctx: ServerContext,
  conn: Connection,
  given: string,
  signal?: AbortSignal,
): Promise<void> {
  if (!isPostgresUrl(given)) {
    await conn.access.checkStore(given, signal);
    return;
  }
  if (given === ctx.defaults.store || ctx.allowStores.includes(given)) return;
  throw new RlmError(
    'ACCESS_DENIED',
    `store ${redactUrl(given)} is not one this server may open; start it with --allow-store URL (or as its default store)`,
  );
}
