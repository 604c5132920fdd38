/**
 * A big file stored in parts, written by one PostgreSQL writer while another writes or deletes it: its
 * parts go in several transactions, so the ingest holds the file (memory/postgres/locks.ts
 * `fileLockKey`) until its last part commits. Another ingest of the same path waits and then replaces it
 * whole; a delete waits and then takes every part. Before, two versions' parts interleaved into a file
 * that never existed, and a file deleted mid-ingest came back without its first parts.
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { documentIdFor } from '../../../memory/ingest/files.ts';
import { fileLockKey } from '../../../memory/postgres/locks.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable, postgresUrl } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp.ts';

const PART = 64 * 1024;
const opts = { partBytes: PART, segmentChars: PART };

/** A log of about `parts` parts whose every line names `word`. */
function log(word: string, parts: number): string {
  const line = (i: number) => `line ${i}: the ${word} walked along the harbour wall at dusk\n`;
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < parts * PART; i++) {
    out.push(line(i));
    size += line(i).length;
  }
  return out.join('');
}

/** `link` made to point at `target`, replacing what it pointed at in one rename. */
function pointAt(link: string, target: string): void {
  const tmp = `${link}.tmp`;
  symlinkSync(target, tmp);
  renameSync(tmp, link);
}

async function open(url: string, maxConnections?: number): Promise<PostgresStore> {
  const store = await PostgresStore.open(url, {
    create: true,
    ...(maxConnections ? { maxConnections } : {}),
  });
  onTestFinished(() => store.close());
  return store;
}

/** Polls `ready` until it holds; fails after a minute saying what never happened (not the test's timeout). */
async function until(what: string, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`waited a minute for ${what}`);
    await sleep(10);
  }
}

/** Resolves once `store` holds some part of the file ingested from `file`. */
async function firstCommit(store: PostgresStore, file: string): Promise<void> {
  await until(`a first part of ${file}`, async () => (await store.documents()).some((d) => d.path === file));
}

/** The key of the advisory lock an ingest into the store at `url` takes on a file (lock) or document (doc). */
function lockKey(url: string, kind: 'file' | 'doc', id: string): string {
  const schema = new URL(url).searchParams.get('schema')!;
  return kind === 'file' ? fileLockKey(schema, id) : `rlm-doc:${schema}:${id}`;
}

/** A connection of the test's own that holds advisory locks, as another writer would. */
async function gate() {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  onTestFinished(() => client.end());
  return {
    hold: (key: string) => client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]),
    release: (key: string) => client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]),
    /** Whether another session holds `key` (tried, and let go again if this one got it). */
    heldElsewhere: async (key: string) => {
      const { rows } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [key],
      );
      if (rows[0]!.ok) await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
      return !rows[0]!.ok;
    },
  };
}

/** Resolves once some session waits for the advisory lock of `key`. */
async function someoneWaitsFor(key: string): Promise<void> {
  await until(`a session waiting for ${key}`, async () => {
    const { rows } = await adminQuery(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
         AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
      [key],
    );
    return rows[0].n > 0;
  });
}

/** Two files of three parts each, `first` and `second`, and a new store. */
async function twoFiles() {
  const dir = tempDir('rlm-pg-filelock-');
  const [first, second] = ['first', 'second'].map((name) => {
    const file = path.join(dir, `${name}.log`);
    writeFileSync(file, log(name, 3));
    return file;
  }) as [string, string];
  const url = freshSchemaUrl();
  return { first, second, url, store: await open(url) };
}

describe.runIf(postgresAvailable('postgres file locks'))(
  'a big file written by two PostgreSQL writers',
  () => {
    it('a second ingest of the same path waits for the first and replaces the file whole', async () => {
      const dir = tempDir('rlm-pg-filelock-');
      const v1 = log('alpha', 24);
      const v2 = log('omega', 5);
      writeFileSync(path.join(dir, 'v1.log'), v1);
      writeFileSync(path.join(dir, 'v2.log'), v2);
      const shared = path.join(dir, 'shared.log');
      pointAt(shared, path.join(dir, 'v1.log'));
      const url = freshSchemaUrl();
      const [a, b] = [await open(url), await open(url)];
      const first = a.ingestPaths([shared], opts);
      await firstCommit(b, shared);
      // The path now names another file: a second machine sees another version of it.
      pointAt(shared, path.join(dir, 'v2.log'));
      const second = b.ingestPaths([shared], opts);
      await Promise.all([first, second]);
      const read = await b.readDocument(shared);
      expect(read?.text).toBe(v2);
      expect((await b.grep('alpha', { count: true })).counts?.matches).toBe(0);
      expect((await b.documents()).filter((d) => d.path === shared)).toHaveLength(read!.documents.length);
    });

    it('a delete of the file while it is ingested waits, then takes every part (deleteDocuments, removeDocument)', async () => {
      for (const how of ['deleteDocuments', 'removeDocument'] as const) {
        const dir = tempDir('rlm-pg-filelock-');
        mkdirSync(dir, { recursive: true });
        const file = path.join(dir, 'big.log');
        writeFileSync(file, log('alpha', 24));
        const url = freshSchemaUrl();
        const [a, b] = [await open(url), await open(url)];
        const ingest = a.ingestPaths([file], opts);
        await firstCommit(b, file);
        if (how === 'deleteDocuments')
          expect((await b.deleteDocuments([file])).deleted.length).toBeGreaterThan(20);
        else expect(await b.removeDocument(file)).toBe(true);
        await ingest;
        expect(await b.documents(), how).toEqual([]);
        expect((await b.grep('alpha', { count: true })).counts?.matches).toBe(0);
      }
    });

    it('holds the files on a connection of its own: big files ingest at once on a store of one connection', async () => {
      const dir = tempDir('rlm-pg-filelock-');
      const files = ['one', 'two', 'three'].map((name) => {
        const file = path.join(dir, `${name}.log`);
        writeFileSync(file, log(name, 3));
        return file;
      });
      const store = await open(freshSchemaUrl(), 1);
      const reports = await Promise.all(files.map((f) => store.ingestPaths([f], opts)));
      expect(reports.every((r) => r.added > 1)).toBe(true);
      expect(new Set((await store.documents()).map((d) => d.path))).toEqual(new Set(files));
    });

    it('lets a file go once its last part commits, not when the whole ingest ends', async () => {
      const { first, second, url, store } = await twoFiles();
      // Another writer holds the second file's second part: the ingest stops at its commit.
      const other = await gate();
      const part = lockKey(url, 'doc', `${documentIdFor(second)}.p2`);
      await other.hold(part);
      const ingest = store.ingestPaths([first, second], opts);
      await someoneWaitsFor(part);
      expect(await other.heldElsewhere(lockKey(url, 'file', documentIdFor(first)))).toBe(false);
      expect(await other.heldElsewhere(lockKey(url, 'file', documentIdFor(second)))).toBe(true);
      await other.release(part);
      expect((await ingest).added).toBeGreaterThan(4);
      expect((await store.readDocument(first))?.text).toBe(log('first', 3));
      expect((await store.readDocument(second))?.text).toBe(log('second', 3));
    });

    it('holds no file while it waits for one: what is in flight is committed and let go first', async () => {
      const { first, second, url, store } = await twoFiles();
      // Another ingest holds the second file; were this one to wait holding the first, an ingest of
      // the two in the other order would wait for it for ever.
      const other = await gate();
      const held = lockKey(url, 'file', documentIdFor(second));
      await other.hold(held);
      const ingest = store.ingestPaths([first, second], opts);
      await someoneWaitsFor(held);
      expect(await other.heldElsewhere(lockKey(url, 'file', documentIdFor(first)))).toBe(false);
      expect((await store.readDocument(first))?.text).toBe(log('first', 3));
      await other.release(held);
      await ingest;
      expect((await store.readDocument(second))?.text).toBe(log('second', 3));
    });

    it('holds a file stored in parts that is one part now, and removes its other parts with it', async () => {
      const dir = tempDir('rlm-pg-filelock-');
      const file = path.join(dir, 'shrinks.log');
      writeFileSync(file, log('alpha', 4));
      const url = freshSchemaUrl();
      const store = await open(url);
      await store.ingestPaths([file], opts);
      expect((await store.documents()).length).toBeGreaterThan(3);
      writeFileSync(file, 'now one short line\n');
      const other = await gate();
      const key = lockKey(url, 'file', documentIdFor(file));
      await other.hold(key);
      const ingest = store.ingestPaths([file], opts);
      const waited = await Promise.race([someoneWaitsFor(key).then(() => true), ingest.then(() => false)]);
      expect(waited).toBe(true);
      await other.release(key);
      await ingest;
      expect((await store.documents()).map((d) => d.id)).toEqual([documentIdFor(file)]);
      expect((await store.readDocument(file))?.text).toBe('now one short line\n');
    });
  },
);
