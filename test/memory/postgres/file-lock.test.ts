/**
 * A big file stored in parts, written by one PostgreSQL writer while another writes or deletes it: its
 * parts go in several transactions, so the ingest holds the file (memory/postgres/locks.ts
 * `fileLockKey`) until it ends. Another ingest of the same path waits and then replaces it whole; a
 * delete waits and then takes every part. Before, two versions' parts interleaved into a file that
 * never existed, and a file deleted mid-ingest came back without its first parts.
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
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

/** Resolves once `store` holds some part of the file ingested from `file`. */
async function firstCommit(store: PostgresStore, file: string): Promise<void> {
  while (!(await store.documents()).some((d) => d.path === file)) await sleep(10);
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
  },
);
