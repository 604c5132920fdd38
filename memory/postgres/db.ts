/**
 * The connection pool of a PostgreSQL store, transactions with a retry on deadlock and serialization
 * failures, and the translation of the client's errors into one clear line (never with the password).
 */
import type { Client, ClientBase, Pool, PoolClient, QueryResultRow } from 'pg';
import { readEnv } from '../../core/env.ts';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { type PostgresTarget, redactIn } from './url.ts';

/**
 * How long opening a connection may take before the store is called unreachable, ms. A refused or
 * unknown host fails at once; this bounds a host that never answers, and leaves room for a busy server
 * that is slow to start a session.
 */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * Further tries at opening a connection that timed out, once this pool has reached the server: it is
 * there, only slow to start a session (a loaded machine forks a backend slowly), so a call waits for it
 * rather than failing; a server never reached still fails after one timeout.
 */
const RECONNECT_TRIES = 5;
/** Attempts of a transaction that PostgreSQL aborted to break a deadlock or a serialization conflict. */
const TX_ATTEMPTS = 5;
/**
 * How long a transaction waits for a lock by default (another writer of the same documents, `rlm repair` holding
 * the store) before it fails with STORE_LOCKED, ms. A write transaction holds its locks for one batch,
 * seconds; a writer that holds them longer has stalled (a stopped process, a laptop gone to sleep),
 * and without a bound every other writer would wait for it in silence.
 */
const LOCK_TIMEOUT_MS = 120_000;
/** After how long a transaction still waiting for a lock is reported (`onLockWait`), ms. */
const LOCK_NOTICE_MS = 1_000;
/**
 * TCP keepalive of the server's side of each connection: a client that vanished (a laptop asleep, a
 * network gone) is found out in about two minutes and its session ended, its locks with it, instead of
 * after the system's default of two hours.
 */
const SERVER_KEEPALIVE = '-c tcp_keepalives_idle=60 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=6';

export interface DbOptions {
  /** Connections held at most (default 8). */
  maxConnections?: number;
  /** How long a transaction waits for a lock before STORE_LOCKED, ms (default two minutes). */
  lockTimeoutMs?: number;
  /** Told once when a transaction has waited a second for a lock another session holds. */
  onLockWait?: (holder: { pid: number; host: string; command?: string }) => void;
}

const DEFAULT_CONNECTIONS = 8;

/** A connection held by {@link Db.session}. */
export interface Session {
  /**
   * Takes the session-level advisory lock of `key` (held until {@link close}), waiting at most
   * `timeoutMs` for another session that holds it (then STORE_LOCKED); a wait is told to `onLockWait`.
   */
  lock(key: string, timeoutMs: number): Promise<void>;
  /** Takes the lock of `key` as {@link lock} does if no other session holds it; false, at once, if one does. */
  tryLock(key: string): Promise<boolean>;
  /** Lets go of the locks of `keys` taken on this session (the connection stays). */
  unlock(keys: string[]): Promise<void>;
  /** A transaction on this connection, as {@link Db.tx}. */
  tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T>;
  /** Lets go of every lock and of the connection. */
  close(): Promise<void>;
}

/** Something that runs SQL: the pool (each statement on its own) or a transaction's client. */
export interface Sql {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

export class Db implements Sql {
  readonly target: PostgresTarget;
  readonly #pool: Pool;
  /**
   * Callers beyond the pool's size wait here, not in the pool: the pool's connection timeout is for
   * reaching the server (a dead server is reported within seconds), never for a busy moment.
   */
  #free: number;
  readonly #waiting: (() => void)[] = [];
  /** A connection was made once: a later connect timeout means a busy server, not a missing one. */
  #reached = false;

  readonly #onLockWait: DbOptions['onLockWait'];
  readonly #lockTimeoutMs: number;

  /** A connection of its own, outside the pool, configured as the pool's are (for sessions). */
  readonly #client: () => Client;

  private constructor(
    target: PostgresTarget,
    pool: Pool,
    size: number,
    opts: DbOptions,
    client: () => Client,
  ) {
    this.target = target;
    this.#pool = pool;
    this.#free = size;
    this.#onLockWait = opts.onLockWait;
    this.#lockTimeoutMs = opts.lockTimeoutMs ?? LOCK_TIMEOUT_MS;
    this.#client = client;
  }

  async #slot<T>(fn: () => Promise<T>): Promise<T> {
    await this.#takeSlot();
    try {
      return await fn();
    } finally {
      this.#giveSlot();
    }
  }

  async #takeSlot(): Promise<void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #giveSlot(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }

  /** A pool for `target` whose connections see the store's schema first. Connects lazily. */
  static async create(target: PostgresTarget, opts: DbOptions = {}): Promise<Db> {
    const { default: pg } = await import('pg');
    const size = opts.maxConnections ?? DEFAULT_CONNECTIONS;
    const connection = {
      connectionString: target.connectionString,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: 'rlm',
      // The statements every search runs are prepared (named) and written so that their plan does not
      // depend on the values: planning them anew each time cost more than running them.
      options: `-c search_path=${target.schema},public -c plan_cache_mode=force_generic_plan ${SERVER_KEEPALIVE}`,
      keepAlive: true,
      // The client's side too: a server host gone (not a server process that stopped) is found out in
      // minutes, not after the system's default two hours.
      keepAliveInitialDelayMillis: 60_000,
      // int8 and numeric (counts, sums, sequence values) as numbers: a store stays far below 2^53.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20 || oid === 1700
            ? Number
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    };
    const pool = new pg.Pool({
      ...connection,
      max: size,
      // Kept a minute: opening a connection costs the server a process, much more than keeping one.
      idleTimeoutMillis: 60_000,
      allowExitOnIdle: true,
    });
    // An idle connection the server dropped must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    // Said again once connected: a server that ignores the startup options (PGlite's socket server,
    // some poolers) still reads the store's tables. Queued before any query of the connection.
    pool.on('connect', (client) => {
      client.query(`SET search_path TO ${target.schema}, public`).catch(() => undefined);
    });
    return new Db(target, pool, size, opts, () => new pg.Client(connection));
  }

  /**
   * Runs one statement on a connection of the pool. A `name` makes it a prepared statement, parsed and
   * planned once per connection: for the statements every search runs. The name is made the
   * connection's own (process and connection numbers): a server that runs every client in one session
   * (PGlite's socket server) would otherwise find a second connection preparing a name another has.
   */
  async query<R extends QueryResultRow = QueryResultRow>(
    text: string,
    values?: unknown[],
    name?: string,
  ): Promise<{ rows: R[] }> {
    return this.#slot(async () => {
      const client = await this.#connect();
      const lost = watchConnection(client);
      let broken: Error | undefined;
      try {
        return await (name
          ? client.query<R>({
              name: `${name}_${process.pid}_${connectionNumber(client)}`,
              text,
              values: storable(values ?? []),
            })
          : client.query<R>(text, values && storable(values)));
      } catch (err) {
        // An error without a SQLSTATE is the connection's own: that connection is not reused.
        if (lost.error !== undefined || !/^[0-9A-Z]{5}$/.test(String((err as { code?: unknown }).code)))
          broken = lost.error ?? (err as Error);
        throw this.explain(lost.error ?? err);
      } finally {
        lost.stop();
        client.release(broken);
      }
    });
  }

  /** A connection of the pool, tried again on a connect timeout once the server was reached. */
  async #connect(): Promise<PoolClient> {
    for (let attempt = 1; ; attempt++) {
      try {
        const client = await this.#pool.connect();
        this.#reached = true;
        return client;
      } catch (err) {
        const e = this.explain(err);
        const slow = e.code === 'STORE_UNAVAILABLE' && /no answer in/.test(e.message);
        if (!(slow && this.#reached && attempt <= RECONNECT_TRIES)) throw e;
      }
    }
  }

  /**
   * Runs `fn` in one transaction (READ COMMITTED). When PostgreSQL aborts it to break a deadlock or a
   * serialization conflict with another writer, it is run again from the start: `fn` must not have
   * effects outside the database before it returns.
   */
  tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.#slot(() => this.#tx(fn));
  }

  async #tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.#connect();
      const lost = watchConnection(client);
      try {
        return await this.#attempt(client, lost, fn);
      } catch (err) {
        if (retryable(err, lost) && attempt < TX_ATTEMPTS) continue;
        throw this.#failure(err, lost);
      } finally {
        lost.stop();
        // A lost connection is closed, not handed to the next caller.
        client.release(lost.error);
      }
    }
  }

  /** One try at a transaction on `client`: rolled back (while the connection lives) when `fn` fails. */
  async #attempt<T>(client: ClientBase, lost: Watched, fn: (sql: Sql) => Promise<T>): Promise<T> {
    const notice = this.#lockNotice(client);
    try {
      await client.query(`BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.floor(this.#lockTimeoutMs))}`);
      const result = await fn({
        query: <R extends QueryResultRow>(text: string, values?: unknown[]) =>
          client.query<R>(text, values && storable(values)),
      });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (lost.error === undefined) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      clearInterval(notice);
    }
  }

  /**
   * A connection lost mid-transaction makes the next statement fail with a message about the client;
   * the cause (the server going away, a timeout) is what the user needs to hear.
   */
  #failure(err: unknown, lost: Watched): RlmError {
    return isRlmError(err) && lost.error === undefined ? err : this.explain(lost.error ?? err);
  }

  /**
   * One connection held until `close`: for session-level advisory locks (an ingest holding the files it
   * writes in parts, memory/postgres/locks.ts) and the transactions that must not wait on them, which run
   * on it. It is a connection of its own, outside the pool: a session never keeps the pool's statements
   * waiting, however many are open.
   */
  async session(): Promise<Session> {
    const client = this.#client();
    // A connection that breaks while idle between statements must not crash the process either.
    const lost = watchConnection(client);
    try {
      await client.connect();
      // Said again, as the pool's connections do: a server that ignores the startup options.
      await client.query(`SET search_path TO ${this.target.schema}, public`);
    } catch (err) {
      lost.stop();
      await client.end().catch(() => undefined);
      throw this.explain(err);
    }
    let closed = false;
    let queue: Promise<unknown> = Promise.resolve();
    // One statement or transaction at a time on the one connection.
    const serial = <T>(work: () => Promise<T>): Promise<T> => {
      const next = queue.then(work, work);
      queue = next.catch(() => undefined);
      return next;
    };
    return {
      lock: (key, timeoutMs) =>
        serial(async () => {
          for (let attempt = 1; ; attempt++) {
            const notice = this.#lockNotice(client);
            try {
              await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
              await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
              return;
            } catch (err) {
              // Two writers waiting for each other's files: PostgreSQL picked this one to give way.
              if (retryable(err, lost) && attempt < TX_ATTEMPTS) continue;
              if ((err as { code?: string }).code === '55P03' && lost.error === undefined)
                throw new RlmError(
                  'STORE_LOCKED',
                  `store ${this.target.label}: another writer has been writing the same big file for over ${Math.round(timeoutMs / 60_000)} minutes; try again later`,
                  { store: this.target.label },
                );
              throw this.#failure(err, lost);
            } finally {
              clearInterval(notice);
            }
          }
        }),
      tryLock: (key) =>
        serial(async () => {
          try {
            const { rows } = await client.query<{ ok: boolean }>(
              'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
              [key],
            );
            return rows[0]?.ok === true;
          } catch (err) {
            throw this.#failure(err, lost);
          }
        }),
      unlock: (keys) =>
        serial(async () => {
          try {
            await client.query(
              'SELECT pg_advisory_unlock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k',
              [keys],
            );
          } catch (err) {
            throw this.#failure(err, lost);
          }
        }),
      tx: (fn) =>
        serial(async () => {
          for (let attempt = 1; ; attempt++) {
            try {
              return await this.#attempt(client, lost, fn);
            } catch (err) {
              if (retryable(err, lost) && attempt < TX_ATTEMPTS) continue;
              throw this.#failure(err, lost);
            }
          }
        }),
      close: () =>
        serial(async () => {
          if (closed) return;
          closed = true;
          // Ending the session ends its locks; nothing of it goes back to a pool.
          await client.end().catch(() => undefined);
          lost.stop();
        }),
    };
  }

  /**
   * Watches a transaction's connection for a lock wait (only when someone listens): once it has waited
   * a second, tells `onLockWait` which session holds the lock (its server process, on the server's
   * host), once per transaction. A look costs one
   * small query on another connection, each second.
   */
  #lockNotice(client: ClientBase): NodeJS.Timeout | undefined {
    const tell = this.#onLockWait;
    if (tell === undefined) return undefined;
    let told = false;
    const pid = (client as unknown as { processID?: number }).processID;
    const timer = setInterval(() => {
      if (told || pid === undefined) return;
      this.#pool
        .query<{ pid: number; app: string | null; addr: string | null }>(
          `SELECT h.pid, h.application_name AS app, host(h.client_addr) AS addr
           FROM pg_stat_activity h WHERE h.pid = ANY(pg_blocking_pids($1)) LIMIT 1`,
          [pid],
        )
        .then(({ rows }) => {
          const holder = rows[0];
          if (told || holder === undefined) return;
          told = true;
          tell({
            pid: holder.pid,
            host: new URL(this.target.connectionString).hostname || 'localhost',
            command: `PostgreSQL session of ${holder.app || 'a client'}${holder.addr ? ` from ${holder.addr}` : ''}`,
          });
        })
        .catch(() => undefined);
    }, LOCK_NOTICE_MS);
    timer.unref();
    return timer;
  }

  async end(): Promise<void> {
    await this.#pool.end();
  }

  /** An error of the client or the server as one line naming the store, code chosen by cause. */
  explain(err: unknown): RlmError {
    if (isRlmError(err)) return err;
    const e = err as { code?: string; message?: string; errors?: { code?: string }[] };
    const url = new URL(this.target.connectionString);
    const where = `${url.hostname || 'localhost'}:${url.port || '5432'}`;
    const user = decodeURIComponent(url.username) || readEnv().pgUser || 'the default user';
    const database = decodeURIComponent(url.pathname.slice(1));
    const code = e.code ?? e.errors?.find((x) => x.code)?.code;
    const detail = redactIn(String(e.message ?? err), this.target.connectionString);
    const fail = (c: ConstructorParameters<typeof RlmError>[0], message: string) =>
      new RlmError(
        c,
        message,
        { store: this.target.label, ...(code ? { sqlstate: code } : {}) },
        { cause: err },
      );
    switch (code) {
      case 'ECONNREFUSED':
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
      case 'ETIMEDOUT':
      case 'ECONNRESET':
      case '57P01': // admin shutdown, pg_terminate_backend
      case '57P02': // crash shutdown
      case '57P03': // cannot connect now
      case '25P03': // idle-in-transaction timeout: the session was closed
      case '53300': // too many clients
      case '08000':
      case '08001':
      case '08003':
      case '08004':
      case '08006':
        return fail('STORE_UNAVAILABLE', `cannot reach PostgreSQL at ${where} (${shortCause(code, detail)})`);
      case '28P01':
      case '28000':
        return fail(
          'ACCESS_DENIED',
          `PostgreSQL at ${where} refused the login of user "${user}" (${detail})`,
        );
      case '3D000':
        return fail(
          'STORE_MISSING',
          `database "${database}" does not exist on PostgreSQL at ${where} (create it first: createdb ${database})`,
        );
      case '42501':
        return fail(
          'ACCESS_DENIED',
          `user "${user}" lacks a permission on store ${this.target.label} (${detail}); grant it or use another user`,
        );
      case '57014':
        return fail('TIMEOUT', `PostgreSQL cancelled a statement that ran too long (${detail})`);
      case '55P03':
        return fail(
          'STORE_LOCKED',
          `store ${this.target.label}: another session held a lock this write needs for over ${Math.round(this.#lockTimeoutMs / 1000)} s (an ingest still writing a big file, \`rlm repair\` running, or a writer that stalled); try again, or find it in pg_stat_activity`,
        );
      default:
        // The client's own words for a connection that closed under it (no SQLSTATE).
        if (
          code === undefined &&
          /^Connection terminated|connection error and is not queryable/i.test(detail)
        )
          return fail(
            'STORE_UNAVAILABLE',
            `cannot reach PostgreSQL at ${where} (the connection was closed: ${detail})`,
          );
        if (/timeout/i.test(detail) && /connect/i.test(detail))
          return fail(
            'STORE_UNAVAILABLE',
            `cannot reach PostgreSQL at ${where} (no answer in ${CONNECT_TIMEOUT_MS / 1000} s)`,
          );
        return fail('RUNTIME', `PostgreSQL store ${this.target.label}: ${detail}`);
    }
  }
}

function shortCause(code: string, detail: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused: is the server running?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'unknown host';
    case 'ETIMEDOUT':
      return 'no answer';
    default:
      return detail;
  }
}

/**
 * `values` as PostgreSQL can store them: a NUL character, which no `text` value may hold (the server
 * refuses the whole statement, and an ingest's batch with it), becomes U+FFFD, one UTF-16 unit like it,
 * so every offset stays. A lone surrogate needs nothing here: the client's UTF-8 encoding makes it U+FFFD.
 * Strings in arrays (the batch writes' columns) are seen to as well; JSON text is made by
 * {@link storableJson}.
 */
function storable(values: unknown[]): unknown[] {
  const fix = (v: unknown): unknown =>
    typeof v === 'string'
      ? v.includes('\0')
        ? v.replaceAll('\0', '\uFFFD')
        : v
      : Array.isArray(v)
        ? v.some((x) => typeof x === 'string' || Array.isArray(x))
          ? v.map(fix)
          : v
        : v;
  return values.map(fix);
}

/**
 * JSON text PostgreSQL's `json` functions take: its strings without NUL or lone surrogates (JSON writes
 * them as `\u0000` and `\ud800`, which the server refuses), each replaced by U+FFFD as {@link storable} does.
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' ? v.replaceAll('\0', '\uFFFD').toWellFormed() : v,
  );
}

/** A connection's loss, as {@link watchConnection} heard it. */
interface Watched {
  readonly error: Error | undefined;
  stop(): void;
}

/** Whether a failed transaction is tried again: PostgreSQL broke a deadlock or a serialization conflict. */
function retryable(err: unknown, lost: Watched): boolean {
  const code = (err as { code?: string }).code;
  return lost.error === undefined && (code === '40P01' || code === '40001');
}

/**
 * Listens for the loss of a connection while it is checked out of the pool. The pool listens only to
 * idle connections: one that the server drops while a caller holds it (between the statements of a
 * transaction, say: a restart, `pg_terminate_backend`, an idle-in-transaction timeout) emits an 'error'
 * that, unheard, crashes the whole process, an MCP server with it.
 */
function watchConnection(client: ClientBase): Watched {
  let error: Error | undefined;
  const heard = (err: Error) => {
    error ??= err;
  };
  client.on('error', heard);
  return {
    get error() {
      return error;
    },
    stop: () => client.off('error', heard),
  };
}

/** A number for each connection, for the names of its prepared statements. */
const connectionNumbers = new WeakMap<PoolClient, number>();
let connections = 0;

function connectionNumber(client: PoolClient): number {
  let n = connectionNumbers.get(client);
  if (n === undefined) {
    n = ++connections;
    connectionNumbers.set(client, n);
  }
  return n;
}
