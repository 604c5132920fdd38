/**
 * The PostgreSQL store's tables are rlm's to create and migrate: `rlm_schema` records each version
 * applied, an older store is migrated when opened, a newer one is refused with a clear line, and a
 * schema with no store is STORE_MISSING unless the caller creates it. Stores an older rlm wrote (at
 * versions 1 and 2: documents, chunks and the linker's signatures as rows, the index as postings) are
 * migrated to version 3, whose search index is built from the chunks they hold: they then search and
 * rank as a store written at version 3 does, and take new writes.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { Db } from '../../../memory/postgres/db.ts';
import { prepareSchema } from '../../../memory/postgres/schema.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { parsePostgresUrl } from '../../../memory/postgres/url.ts';
import type { ChunkRecord, DocumentRecord } from '../../../memory/types.ts';
import { caught } from '../../helpers/errors.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';

const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!;

async function versions(url: string): Promise<number[]> {
  const { rows } = await adminQuery(`SELECT version FROM ${schemaOf(url)}.rlm_schema ORDER BY version`);
  return rows.map((r) => Number(r.version));
}

const TEXTS: Record<string, string[]> = {
  rivers: [
    'The glacier feeds the river through the spring, and the river floods the valley below.',
    'Salmon swim up the river to spawn where the water runs cold and clear.',
  ],
  cities: ['The old city grew around its harbour; merchants built warehouses along the river.'],
  kitchen: ['Bread needs flour, water, salt and time; the oven must be hot before it goes in.'],
};

/** The documents of {@link TEXTS} with their chunks, as records (one chunk per text). */
function records(): { document: DocumentRecord; chunks: ChunkRecord[] }[] {
  return Object.entries(TEXTS).map(([id, texts]) => {
    let at = 0;
    const chunks = texts.map((text, ordinal): ChunkRecord => {
      const start = at;
      at += text.length + 1;
      return {
        id: `${id}:${ordinal}`,
        document: id,
        ordinal,
        start,
        end: start + text.length,
        tokens: text.split(' ').length,
        type: 'text',
        tags: [],
        createdAt: '2026-01-01T00:00:00.000Z',
        text,
      };
    });
    const document: DocumentRecord = {
      id,
      path: null,
      hash: `hash-${id}`,
      bytes: at,
      chunker: 'paragraph',
      chunks: chunks.length,
      tokens: chunks.reduce((n, c) => n + c.tokens, 0),
      ingestedAt: '2026-01-01T00:00:00.000Z',
      segment: 'postgres',
      first: 0,
    };
    return { document, chunks };
  });
}

/**
 * A store left by an older rlm at `version` (1 or 2): its tables as that version created them, holding
 * {@link TEXTS} and one memory as that rlm wrote rows (a signature row per chunk; postings are not needed
 * by the migration, which drops them).
 */
async function oldStore(url: string, version: number): Promise<void> {
  const db = await Db.create(parsePostgresUrl(url));
  try {
    await prepareSchema(db, true, version);
  } finally {
    await db.end();
  }
  const s = schemaOf(url);
  const chars = version >= 2 ? ', chars' : '';
  for (const { document: d, chunks } of records()) {
    const { rows } = await adminQuery(
      `SELECT nextval('${s}.chunk_seq') AS seq FROM generate_series(1, $1::integer)`,
      [chunks.length],
    );
    const seqs = rows.map((r) => Number(r.seq));
    await adminQuery(
      `INSERT INTO ${s}.documents (id, path, hash, bytes, chunker, chunks, tokens, ingested_at, first_seq${chars})
       VALUES ($1, NULL, $2, $3, 'paragraph', $4, $5, $6, $7${version >= 2 ? ', $8' : ''})`,
      [d.id, d.hash, d.bytes, d.chunks, d.tokens, d.ingestedAt, seqs[0], ...(version >= 2 ? [d.bytes] : [])],
    );
    for (const [i, c] of chunks.entries()) {
      await adminQuery(
        `INSERT INTO ${s}.chunks (seq, document, ordinal, start_at, end_at, tokens, type, tags, created_at, terms, text)
         VALUES ($1, $2, $3, $4, $5, $6, 'text', '{}', $7, 0, $8)`,
        [seqs[i], d.id, c.ordinal, c.start, c.end, c.tokens, c.createdAt, c.text],
      );
      await adminQuery(`INSERT INTO ${s}.signatures (term, seq) VALUES ('river', $1)`, [seqs[i]]);
    }
  }
  const { rows } = await adminQuery(`SELECT nextval('${s}.chunk_seq') AS seq`);
  await adminQuery(
    `INSERT INTO ${s}.documents (id, path, hash, bytes, chunker, chunks, tokens, ingested_at, first_seq, topic, importance, source)
     VALUES ('mem-river', NULL, 'h', 30, 'memory', 1, 6, '2026-01-01T00:00:00.000Z', $1, 'travel', 'critical', 'cli')`,
    [rows[0]!.seq],
  );
  await adminQuery(
    `INSERT INTO ${s}.chunks (seq, document, ordinal, start_at, end_at, tokens, type, tags, created_at, terms, text)
     VALUES ($1, 'mem-river', 0, 0, 30, 6, 'text', '{}', '2026-01-01T00:00:00.000Z', 0, 'we crossed the river by ferry')`,
    [rows[0]!.seq],
  );
}

describe.skipIf(!postgresAvailable('postgres schema'))('PostgreSQL store schema', () => {
  it('is created on request, at every version, and a missing store is STORE_MISSING', async () => {
    const url = freshSchemaUrl();
    const missing = await caught(PostgresStore.open(url));
    expect(missing.code).toBe('STORE_MISSING');
    expect(missing.message).toMatch(/no rlm store at .*rlm ingest PATH --store URL/);
    const store = await PostgresStore.open(url, { create: true });
    onTestFinished(() => store.close());
    expect(await versions(url)).toEqual([1, 2, 3]);
    expect((await store.stats()).schema).toBe(3);
  });

  for (const version of [1, 2]) {
    it(`migrates a version ${version} store when opened: it searches and ranks as a new one, and takes writes`, async () => {
      const url = freshSchemaUrl();
      await oldStore(url, version);
      const store = await PostgresStore.open(url);
      onTestFinished(() => store.close());
      expect(await versions(url)).toEqual([1, 2, 3]);
      const { rows } = await adminQuery(
        `SELECT to_regclass('${schemaOf(url)}.postings') AS postings, to_regclass('${schemaOf(url)}.signatures') AS signatures`,
      );
      expect(rows[0]).toEqual({ postings: null, signatures: null });
      const rivers = (await store.documents()).find((d) => d.id === 'rivers')!;
      expect(rivers.chars).toBe(version >= 2 ? rivers.bytes : undefined);
      expect((await store.readDocument('kitchen'))?.text).toBe(TEXTS.kitchen![0]);

      // The same chunks written by this version rank the same, with the same scores.
      const fresh = await PostgresStore.open(freshSchemaUrl(), { create: true });
      onTestFinished(() => fresh.close());
      await fresh.writeRecords(records());
      await fresh.remember({
        text: 'we crossed the river by ferry',
        topic: 'travel',
        importance: 'critical',
      });
      const migrated = await store.search('river water', { k: 10, touch: false });
      const expected = await fresh.search('river water', { k: 10, touch: false });
      expect(migrated.map((h) => h.score)).toEqual(expected.map((h) => h.score));
      const documents = (hits: { id: string }[]) =>
        hits.map((h) => (h.id.startsWith('mem-') ? 'memory' : h.id));
      expect(documents(migrated)).toEqual(documents(expected));
      expect((await store.recall('ferry')).map((m) => m.id)).toEqual(['mem-river']);
      // grep's index covers the documents written before the migration too.
      const grep = await store.grep('warehouses along', { literal: true });
      expect(grep.matches.map((m) => m.id)).toEqual(['cities:0']);

      await store.ingestText('new', 'A new river text written after the migration.');
      expect((await store.findDocument('new'))?.chars).toBe(
        'A new river text written after the migration.'.length,
      );
      expect((await store.search('migration', { touch: false })).map((h) => h.id)).toEqual(['new:0']);
      expect(await store.removeDocument('rivers')).toBe(true);
      expect((await store.search('salmon', { touch: false })).length).toBe(0);
    });
  }

  it('refuses a store written by a newer rlm, in one line, without changing it', async () => {
    const url = freshSchemaUrl();
    const store = await PostgresStore.open(url, { create: true });
    await store.close();
    await adminQuery(`INSERT INTO ${schemaOf(url)}.rlm_schema (version) VALUES (99)`);
    const err = await caught(PostgresStore.open(url, { create: true }));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toMatch(/has schema 99, newer than this rlm understands \(3\); upgrade rlm$/);
    expect(err.message).not.toContain(decodeURIComponent(new URL(url).password));
    expect(await versions(url)).toEqual([1, 2, 3, 99]);
  });
});
