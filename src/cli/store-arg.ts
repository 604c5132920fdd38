import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { readEnv } from '../../core/env.ts';
import { RlmError } from '../../core/errors.ts';
import { discardEmptyStore } from '../../memory/files/discard.ts';
import { MANIFEST_FILE, SEGMENTS_DIR } from '../../memory/files/manifest.ts';
import { ChunkStore, type OpenOptions } from '../../memory/files/store.ts';
import { expandHome } from '../../memory/fsutil.ts';
import type { CliIO } from './io.ts';

/**
 * The --store folder (else RLM_STORE) as an absolute path, `~` expanded and relative paths taken from the
 * command's working directory; a usage error when neither is given.
 */
export function storeDir(flag: string | undefined, io: CliIO): string {
  const env = readEnv(io.env);
  const dir = flag ?? env.store;
  if (!dir) throw new RlmError('BAD_INPUT', '--store DIR is required (or set RLM_STORE)');
  return path.resolve(io.cwd, expandHome(dir, env.home));
}

/**
 * Refuses to turn a folder that already holds other files into a store, unless asked (`--create`): a
 * mistyped `--store ~/notes` would otherwise scatter store files among the user's own.
 */
export function checkNewStoreDir(dir: string, create: boolean | undefined): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // missing: it will be created; not a folder: open() says so
  }
  if (names.length === 0 || names.includes(MANIFEST_FILE) || names.includes(SEGMENTS_DIR) || create) return;
  throw new RlmError(
    'BAD_INPUT',
    `${dir} is not an rlm store and is not empty; pass --create to make a store in it anyway, or choose an empty or new folder`,
  );
}

export function openStore(flag: string | undefined, io: CliIO, opts: OpenOptions = {}): Promise<ChunkStore> {
  return ChunkStore.open(storeDir(flag, io), {
    env: io.env,
    onLockWait: (owner) =>
      io.stderr.write(
        `rlm: waiting for the store lock held by process ${owner.pid}${owner.command ? ` (${owner.command})` : ''}…\n`,
      ),
    onWarning: (message) => io.stderr.write(`rlm: warning: ${message}\n`),
    ...opts,
  });
}

/**
 * Runs `fn` on the store, which is created when missing, and closes it. When `fn` fails on a store this
 * command created and nothing was stored yet, the store is removed: a failed first command leaves no
 * empty store behind.
 */
export async function withStore<T>(
  flag: string | undefined,
  io: CliIO,
  opts: OpenOptions,
  fn: (store: ChunkStore) => Promise<T>,
): Promise<T> {
  const dir = storeDir(flag, io);
  const fresh = !existsSync(dir);
  const store = await openStore(flag, io, { ...opts, create: true });
  let failed = false;
  try {
    return await fn(store);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await store.close();
    if (failed && fresh) await discardEmptyStore(dir);
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
