import { existsSync } from 'node:fs';
import { readEnv } from '../../core/env.ts';
import { RlmError } from '../../core/errors.ts';
import { isForeignFolder } from '../../memory/files/foreign-folder.ts';
import type { OpenStoreOptions } from '../../memory/open.ts';
import { isPostgresUrl } from '../../memory/postgres/url.ts';
import type { Store } from '../../memory/store-api.ts';
import { storeLocation } from '../../memory/store-location.ts';
import { type CliIO, shown, writeWarning } from './io.ts';

/**
 * The --store value (else RLM_STORE): a PostgreSQL URL as given, or a folder as an absolute path, `~`
 * expanded and relative paths taken from the command's working directory; a usage error when neither
 * is given.
 */
export function storeDir(flag: string | undefined, io: CliIO): string {
  const env = readEnv(io.env);
  const dir = flag ?? env.store;
  if (!dir) throw new RlmError('BAD_INPUT', '--store DIR|URL is required (or set RLM_STORE)');
  return storeLocation(dir, io.cwd, env.home);
}

/**
 * Refuses to turn a folder that already holds other files into a store, unless asked (`--create`): a
 * mistyped `--store ~/notes` would otherwise scatter store files among the user's own.
 */
export function checkNewStoreDir(dir: string, create: boolean | undefined): void {
  if (isPostgresUrl(dir) || create || !isForeignFolder(dir)) return;
  throw new RlmError(
    'BAD_INPUT',
    `${dir} is not an rlm store and is not empty; pass --create to make a store in it anyway, or choose an empty or new folder`,
  );
}

export async function openStore(
  flag: string | undefined,
  io: CliIO,
  opts: OpenStoreOptions = {},
): Promise<Store> {
  const dir = storeDir(flag, io);
  // The store code loads here, not with the module: `rlm answer --context` resolves a --store path only.
  const { openStore: openAny } = await import('../../memory/open.ts');
  return openAny(dir, {
    env: io.env,
    onLockWait: (owner) =>
      io.stderr.write(
        `rlm: waiting for the store lock held by process ${owner.pid}${owner.command ? ` (${shown(io.stderr, owner.command, true)})` : ''}…\n`,
      ),
    onWarning: (message) => writeWarning(io, message),
    ...opts,
  });
}

/**
 * Runs `fn` on the store, which is created when missing, and closes it. When `fn` fails on a store this
 * command created and nothing was stored yet, the store folder is removed: a failed first command leaves
 * no empty store behind.
 */
export async function withStore<T>(
  flag: string | undefined,
  io: CliIO,
  opts: OpenStoreOptions,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  const dir = storeDir(flag, io);
  // A folder this command makes goes again if it fails; a database's schema is left to its owner.
  const fresh = !isPostgresUrl(dir) && !existsSync(dir);
  const store = await openStore(flag, io, { ...opts, create: true });
  let failed = false;
  try {
    return await fn(store);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await store.close();
    if (failed && fresh) await (await import('../../memory/files/discard.ts')).discardEmptyStore(dir);
  }
}

/** Exactly `n` positional arguments named in `names`, or a usage error saying which is missing. */
export function positionals(values: string[], names: string[], command: string): string[] {
  if (values.length < names.length) {
    throw new RlmError(
      'BAD_INPUT',
      `${command}: missing ${names.slice(values.length).join(' ')} (rlm ${command} --help)`,
    );
  }
  if (values.length > names.length) {
    throw new RlmError(
      'BAD_INPUT',
      `${command}: unexpected argument '${values[names.length]}' (quote a query with spaces)`,
    );
  }
  return values;
}
