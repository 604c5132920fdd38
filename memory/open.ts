/**
 * One way to open any persistent store from its name, as every surface names stores: a folder (the
 * JSON-file store, the embedded default) or a `postgres://` URL (`?schema=NAME` picks one of several stores
 * in a database). The PostgreSQL client is loaded only for a URL.
 */
import { ChunkStore, type OpenOptions } from './files/store.ts';
import type { PostgresOpenOptions } from './postgres/store.ts';
import { checkStoreName, isPostgresUrl } from './postgres/url.ts';
import type { Store } from './store-api.ts';

export { isPostgresUrl, redactUrl } from './postgres/url.ts';

export type OpenStoreOptions = OpenOptions & Pick<PostgresOpenOptions, 'maxConnections'>;

/** Opens the store named `spec` (a folder path or a PostgreSQL URL); see {@link ChunkStore.open}. */
export async function openStore(spec: string, opts: OpenStoreOptions = {}): Promise<Store> {
  checkStoreName(spec);
  if (isPostgresUrl(spec)) {
    const { PostgresStore } = await import('./postgres/store.ts');
    return PostgresStore.open(spec, {
      ...(opts.create ? { create: true } : {}),
      ...(opts.embedder ? { embedder: opts.embedder } : {}),
      ...(opts.env ? { env: opts.env } : {}),
      ...(opts.onWarning ? { onWarning: opts.onWarning } : {}),
      ...(opts.maxConnections ? { maxConnections: opts.maxConnections } : {}),
      ...(opts.onLockWait ? { onLockWait: opts.onLockWait } : {}),
    });
  }
  const { maxConnections: _, ...folder } = opts;
  return ChunkStore.open(spec, folder);
}
