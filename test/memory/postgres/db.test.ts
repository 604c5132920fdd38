/**
 * The PostgreSQL store's connections (memory/postgres/db.ts): a connection the server drops while a
 * caller holds it (between the statements of a transaction) must fail that call with one clear line,
 * STORE_UNAVAILABLE, and never crash the process: an unheard 'error' event of the client would. A
 * transaction kept waiting for a lock says who holds it, and gives up with STORE_LOCKED.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Db } from '../../../memory/postgres/db.ts';
import { parsePostgresUrl } from '../../../memory/postgres/url.ts';
import { caught } from '../../helpers/errors.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable, postgresUrl } from '../../helpers/postgres.ts';

/** Ends the server session `pid` as a server restart or an administrator would. */
const terminate = (pid: number) => adminQuery('SELECT pg_terminate_backend($1)', [pid]);

describe.runIf(postgresAvailable('postgres connections'))(
  'Db: connections the server drops, locks other sessions hold',
  () => {
    async function db(): Promise<Db> {
      const d = await Db.create(parsePostgresUrl(freshSchemaUrl()));
      onTestFinished(() => d.end());
      return d;
    }

    it('fails a transaction whose connection is dropped between statements with STORE_UNAVAILABLE', async () => {
      const d = await db();
      const err = await caught(
        d.tx(async (sql) => {
          const { rows } = await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await terminate(rows[0]!.pid);
          // The client hears of it while no statement runs: its 'error' event, which nothing else hears.
          await sleep(200);
          await sql.query('SELECT 1');
        }),
      );
      expect(err.code).toBe('STORE_UNAVAILABLE');
      expect(err.message).toMatch(
        /^cannot reach PostgreSQL at [^ ]+ \(.*terminating connection due to administrator command/,
      );
      // The pool goes on with a new connection.
      expect((await d.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });

    it('fails a statement on a connection the server closed with STORE_UNAVAILABLE, and recovers', async () => {
      const d = await db();
      const { rows } = await d.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await terminate(rows[0]!.pid);
      await sleep(200);
      // The dropped idle connection left the pool; the next statement runs on a new one.
      expect((await d.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      // Dropped while its statement runs.
      const err = await caught(
        d.tx(async (sql) => {
          const { rows: mine } = await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await Promise.all([
            sql.query('SELECT pg_sleep(5)'),
            sleep(100).then(() => terminate(mine[0]!.pid)),
          ]);
        }),
      );
      expect(err.code).toBe('STORE_UNAVAILABLE');
      expect((await d.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });

    it('says who holds a lock a transaction waits for, and gives up with STORE_LOCKED', async () => {
      // Another session (a stalled writer) holds the lock and does nothing more.
      const holder = new pg.Client({ connectionString: postgresUrl, application_name: 'stalled-writer' });
      await holder.connect();
      onTestFinished(() => holder.end());
      await holder.query('SELECT pg_advisory_lock(424242)');
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const waits: { pid: number; host: string; command?: string }[] = [];
      const d = await Db.create(parsePostgresUrl(freshSchemaUrl()), {
        lockTimeoutMs: 2_500,
        onLockWait: (h) => waits.push(h),
      });
      onTestFinished(() => d.end());
      const err = await caught(d.tx((sql) => sql.query('SELECT pg_advisory_xact_lock(424242)')));
      expect(err.code).toBe('STORE_LOCKED');
      expect(err.message).toMatch(/another session held a lock this write needs for over 3 s/);
      expect(waits).toEqual([
        {
          pid: holderPid,
          host: '127.0.0.1',
          command: 'PostgreSQL session of stalled-writer from 127.0.0.1',
        },
      ]);
      // Once the holder lets go, the same write goes through.
      await holder.query('SELECT pg_advisory_unlock(424242)');
      await d.tx((sql) => sql.query('SELECT pg_advisory_xact_lock(424242)'));
    });
  },
);
