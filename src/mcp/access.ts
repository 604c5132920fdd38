/**
 * Which files a client may have the server read. Tools like `rlm_answer` carry a read-only annotation that
 * some hosts approve without asking, so reading "any file the process can read" is too much. The fences:
 * - the operator's folders, `rlm serve --allow-path DIR` (repeatable): when given, they are the whole
 *   fence. The operator started the server and said what it may read; what a client declares about
 *   roots neither widens nor narrows that (a client that declares roots but lists none, like the MCP
 *   Inspector, would otherwise lock every path out of a server its operator opened).
 * - without them, the client's MCP roots when it offers them (declared but none listed: no file access),
 *   and over HTTP, where the caller may be another program entirely, also the server's working folder.
 * Paths are compared after resolving symlinks, so a link inside an allowed folder cannot lead out of it.
 * Every refusal names the path and says how to allow it.
 */
import { type Dirent, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { RlmError } from '../../core/errors.ts';
import { inside } from '../../core/paths.ts';
import { shellQuote } from '../../core/shell.ts';
import { isStoreEntry } from '../../memory/files/directory.ts';

/** How deep {@link FileAccess.checkStore} looks into a store folder: its files, and those of its folders. */
const STORE_DEPTH = 3;

/** How long to wait for a client's answer to roots/list. */
const ROOTS_TIMEOUT_MS = 10_000;

/** The server's own fence: folders reads must stay inside. */
export interface ServerFence {
  /** The folders (resolved against the working folder). */
  folders: readonly string[];
  /**
   * True when the operator named them (`--allow-path`): then they alone decide and client roots are
   * not consulted. False for a default fence (the working folder over HTTP), which roots narrow.
   */
  explicit: boolean;
}

/** The file-access fences of one connection (one McpServer). */
export class FileAccess {
  readonly #server: McpServer;
  readonly #cwd: string;
  readonly #allowed: readonly string[] | undefined;
  readonly #explicit: boolean;
  #realAllowed: Promise<string[]> | undefined;
  /** The links of the store folders checked on this connection, by folder (see {@link checkStore}). */
  readonly #stores = new Map<string, StoreWalk>();
  #roots: Promise<string[] | undefined> | undefined;

  /** @param fence the server's own fence; undefined: none (stdio without `--allow-path`). */
  constructor(server: McpServer, cwd: string, fence: ServerFence | undefined) {
    this.#server = server;
    this.#cwd = cwd;
    this.#allowed = fence?.folders.map((d) => path.resolve(cwd, d));
    this.#explicit = fence?.explicit ?? false;
    server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      this.#roots = undefined;
    });
  }

  /** The server's allowed folders (absolute), or undefined when it sets none. */
  get allowedFolders(): readonly string[] | undefined {
    return this.#allowed;
  }

  /**
   * The folders of the client's roots, or undefined when the client offers none (it does not declare the
   * roots capability). Asked once per connection and again after the client says they changed.
   */
  roots(signal?: AbortSignal): Promise<string[] | undefined> {
    if (this.#server.server.getClientCapabilities()?.roots === undefined) return Promise.resolve(undefined);
    this.#roots ??= this.#fetchRoots(signal).catch((err: unknown) => {
      this.#roots = undefined;
      throw err;
    });
    return this.#roots;
  }

  async #fetchRoots(signal?: AbortSignal): Promise<string[]> {
    let listed: { roots: { uri: string }[] };
    try {
      listed = await this.#server.server.listRoots(undefined, {
        timeout: ROOTS_TIMEOUT_MS,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      throw new RlmError(
        'ACCESS_DENIED',
        `could not get the client's roots (${err instanceof Error ? err.message : String(err)}), so no file is read`,
        {},
        { cause: err },
      );
    }
    const dirs: string[] = [];
    for (const r of listed.roots) {
      // Only file: roots name folders; anything else cannot contain a local path.
      if (!r.uri.startsWith('file:')) continue;
      try {
        dirs.push(await real(fileURLToPath(r.uri)));
      } catch {
        // a malformed or missing root contains nothing
      }
    }
    return dirs;
  }

  /**
   * `given` resolved against the working folder, or ACCESS_DENIED naming it when it lies outside the
   * fences. A path that does not exist yet (a store to create) is judged by its nearest existing parent.
   */
  async check(given: string, signal?: AbortSignal): Promise<string> {
    const abs = path.resolve(this.#cwd, given);
    await this.checkResolved(abs, given, signal);
    return abs;
  }

  /**
   * Like {@link check} for a store folder, and for what it holds too: a store opens its manifest,
   * documents, journal and segments by name inside the folder, and any of them may be a link that leads
   * out of the fences (a cloned repository can carry such links). Only links are resolved: a plain entry
   * lies where its folder does. A link that leads nowhere yet is judged by its target, since writing
   * through it would create that.
   */
  async checkStore(given: string, signal?: AbortSignal): Promise<string> {
    const abs = await this.check(given, signal);
    if (!this.#fenced()) return abs;
    const seen = (await this.#unchanged(abs)) ?? (await walkStore(abs));
    for (const link of seen.links)
      await this.checkResolved(link, path.join(given, path.relative(abs, link)), signal);
    if (seen.folders.length > 0) this.#stores.set(abs, seen);
    return abs;
  }

  /**
   * What the last walk of the store at `abs` found, while none of its folders changed since (a link
   * made, removed or replaced changes its folder's time): a call then costs a few stats, not a listing
   * of every segment file.
   */
  async #unchanged(abs: string): Promise<StoreWalk | undefined> {
    const last = this.#stores.get(abs);
    if (last === undefined) return undefined;
    for (const [i, folder] of last.folders.entries()) {
      const now = await fs.stat(folder, { bigint: true }).catch(() => undefined);
      if (now?.mtimeNs !== last.stamps[i]) return undefined;
    }
    return last;
  }

  /** Whether any fence applies to this connection's paths. */
  #fenced(): boolean {
    return this.#allowed !== undefined || this.#usesRoots();
  }

  #usesRoots(): boolean {
    return !this.#explicit && this.#server.server.getClientCapabilities()?.roots !== undefined;
  }

  /** Like {@link check} for a path already absolute; `shown` is how the caller named it. */
  async checkResolved(abs: string, shown: string = abs, signal?: AbortSignal): Promise<void> {
    const useRoots = this.#usesRoots();
    if (this.#allowed === undefined && !useRoots) return;
    const target = await real(abs);
    const actual = target === abs ? abs : `${abs} -> ${target}`;
    const named = shown === abs ? actual : `${shown} (${actual})`;
    if (this.#allowed !== undefined) {
      this.#realAllowed ??= Promise.all(this.#allowed.map(real));
      const allowed = await this.#realAllowed;
      if (!allowed.some((dir) => inside(target, dir))) {
        throw new RlmError(
          'ACCESS_DENIED',
          `${named} is outside the folders this server may read (${this.#allowed.join(', ')}); ` +
            `to allow it, add --allow-path ${shellQuote(await folderOf(target))} to the server's command`,
          { path: abs },
        );
      }
    }
    if (!useRoots) return;
    const roots = await this.roots(signal);
    if (roots !== undefined && !roots.some((dir) => inside(target, dir))) {
      throw new RlmError(
        'ACCESS_DENIED',
        `${
          roots.length === 0
            ? `${named} cannot be read: the client declares MCP roots but shares none`
            : `${named} is outside the client's roots (${roots.join(', ')})`
        }; to allow it, have the client share a root that holds it, or start the server with --allow-path ` +
          `${shellQuote(await folderOf(target))} (honoured whatever the client says about roots)`,
        { path: abs },
      );
    }
  }
}

/** The folders of a store that were listed, with their modification times, and the links found in them. */
interface StoreWalk {
  folders: string[];
  stamps: bigint[];
  links: string[];
}

/**
 * The links among what a store opens at `abs`: the store's own entries (a store made in a project's
 * folder shares it with the project's files, links among them, that no store call reads), and what its
 * folders (segments/, vectors/) hold, down to {@link STORE_DEPTH}.
 */
async function walkStore(abs: string): Promise<StoreWalk> {
  const seen: StoreWalk = { folders: [], stamps: [], links: [] };
  const walk = async (folder: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    let stamp: bigint;
    try {
      stamp = (await fs.stat(folder, { bigint: true })).mtimeNs;
      entries = await fs.readdir(folder, { withFileTypes: true });
    } catch {
      return; // missing (a store to create) or not a folder: nothing in it is opened
    }
    seen.folders.push(folder);
    seen.stamps.push(stamp);
    for (const e of entries) {
      if (depth === 1 && !isStoreEntry(e.name)) continue;
      const entry = path.join(folder, e.name);
      if (e.isSymbolicLink()) seen.links.push(entry);
      if (depth < STORE_DEPTH && (e.isDirectory() || e.isSymbolicLink())) await walk(entry, depth + 1);
    }
  };
  await walk(abs, 1);
  return seen;
}

/** The folder to suggest allowing for `p`: itself when it is one (or does not exist yet), else its parent. */
async function folderOf(p: string): Promise<string> {
  try {
    return (await fs.stat(p)).isDirectory() ? p : path.dirname(p);
  } catch {
    return p;
  }
}

/** Links followed by {@link real} before it gives up on one (the kernel's own limit). */
const MAX_LINK_HOPS = 40;

/**
 * The real path of `p`, or of its nearest existing ancestor joined with the rest. A link that leads to
 * nothing yet is judged by where it leads, not where it lies: writing through it creates its target.
 */
async function real(p: string): Promise<string> {
  const rest: string[] = [];
  let at = path.resolve(p);
  for (let hops = 0; ; ) {
    try {
      return path.join(await fs.realpath(at), ...rest.reverse());
    } catch {
      const link = hops < MAX_LINK_HOPS ? await fs.readlink(at).catch(() => undefined) : undefined;
      if (link !== undefined) {
        hops++;
        at = path.resolve(path.dirname(at), link);
        continue;
      }
      const parent = path.dirname(at);
      if (parent === at) return path.resolve(p);
      rest.push(path.basename(at));
      at = parent;
    }
  }
}
