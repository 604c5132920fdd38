/**
 * Where a store's name points, as every surface resolves it: a PostgreSQL URL as given, a folder as an
 * absolute path. Light (no store code), so a command can resolve a name before it loads a store.
 */
import path from 'node:path';
import { expandHome } from './fsutil.ts';
import { checkStoreName, isPostgresUrl } from './postgres/url.ts';

/**
 * `spec` as a store's location: a PostgreSQL URL as given, else a folder, `~` expanded (against `home`,
 * default the user's) and relative ones taken from `cwd`. BAD_INPUT for a URL of another kind.
 */
export function storeLocation(spec: string, cwd: string, home?: string): string {
  checkStoreName(spec);
  return isPostgresUrl(spec) ? spec : path.resolve(cwd, expandHome(spec, home));
}
