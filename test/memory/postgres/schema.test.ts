/**
 * The PostgreSQL store's tables are rlm's to create and migrate: `rlm_schema` records each version
 * applied, an older store is migrated when opened, a newer one is refused with a clear line, and a
 * schema with no store is STORE_MISSING unless the caller creates it. Stores an older rlm wrote (at
 * versions 1, 2 and 4: documents, chunks and the linker's signatures as rows, the index as postings;
 * version 4 also chunk seams, vectors, hand-made links and access stats) are migrated to version 5
 * (version 3 is never applied), whose search index is built from the chunks they hold: they then
 * search, grep and recall as a store written at version 5 does, keep what they held, and take writes.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { Db } from '../../../memory/postgres/db.ts';
import { PG_SCHEMA_VERSION, prepareSchema } from '../../../memory/postgres/schema.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { parsePostgresUrl } from '../../../memory/postgres/url.ts';
import { hashEmbed } from '../../../memory/search/embedders/hashing.ts';
import type { ChunkRecord, DocumentRecord } from '../../../memory/types.ts';
import { caught } from '../../helpers/errors.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { noise } from '../helpers/corpus.ts';

const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!;

async function versions(url: string): Promise<number[]> {
  const { rows } = await adminQuery(`SELECT version FROM ${schemaOf(url)}.rlm_schema ORDER BY version`);
  return rows.map((r) => Number(r.version));
}

/** Every version a new store records: no step is numbered 3. */
const ALL = [1, 2, 4, 5];

const TEXTS: Record<string, string[]> = {
  rivers: [
    'The glacier feeds the river through the spring, and the river floods the valley below.',
    'Salmon swim up the river to spawn where the water runs cold and clear.',
  ],
  cities: ['The old city grew around its harbour; merchants built warehouses along the river.'],
  kitchen: ['Bread needs flour, water, salt and time; the oven must be hot before it goes in.'],
};

/** A document of random words cut mid-word by the `size` chunker: its first chunk ends at {@link EDGE}. */
const NOISE = noise(3, 600);
const EDGE = 253;

/** The documents of {@link TEXTS} with their chunks, as records (one chunk per text), and {@link NOISE}. */
function records(): { document: DocumentRecord; chunks: ChunkRecord[] }[] {
  const texts = Object.entries(TEXTS).map(([id, texts]) => {
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
  const cut = (start: number, end: number, ordinal: number): ChunkRecord => ({
    id: `noise:${ordinal}`,
    document: 'noise',
    ordinal,
    start,
    end,
    tokens: 40,
    type: 'text',
    tags: [],
    createdAt: '2026-01-01T00:00:00.000Z',
    text: NOISE.slice(start, end),
  });
  const document: DocumentRecord = {
    id: 'noise',
    path: null,
    hash: 'hash-noise',
    bytes: NOISE.length,
    chunker: 'size',
    chunks: 2,
    tokens: 80,
    ingestedAt: '2026-01-01T00:00:00.000Z',
    segment: 'postgres',
    first: 0,
  };
  return [...texts, { document, chunks: [cut(0, EDGE, 0), cut(EDGE, NOISE.length, 1)] }];
}

/**
 * A store left by an older rlm at `version` (1, 2 or 4): its tables as that version created them (with
 * the trigram indexes that rlm made), holding {@link records} and one memory as that rlm wrote rows (a
 * signature row per chunk; postings are not needed by the migration, which drops them). At version 4
 * each chunk also has its seam and a vector of the store's embedder (`hash`), and there are a hand-made
 * link and access stats.
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
       VALUES ($1, NULL, $2, $3, $8, $4, $5, $6, $7${version >= 2 ? ', $9' : ''})`,
      [
        d.id,
        d.hash,
        d.bytes,
        d.chunks,
        d.tokens,
        d.ingestedAt,
        seqs[0],
        d.chunker,
        ...(version >= 2 ? [d.bytes] : []),
      ],
    );
    for (const [i, c] of chunks.entries()) {
      await adminQuery(
        `INSERT INTO ${s}.chunks (seq, document, ordinal, start_at, end_at, tokens, type, tags, created_at, terms, text)
         VALUES ($1, $2, $3, $4, $5, $6, 'text', '{}', $7, 0, $8)`,
        [seqs[i], d.id, c.ordinal, c.start, c.end, c.tokens, c.createdAt, c.text],
      );
      await adminQuery(`INSERT INTO ${s}.signatures (term, seq) VALUES ('river', $1)`, [seqs[i]]);
      if (version >= 4) {
        await adminQuery(`UPDATE ${s}.chunks SET seam = $2 WHERE seq = $1`, [
          seqs[i],
          i === 0 ? '' : NOISE.slice(c.start - 16, c.start + 16),
        ]);
        await adminQuery(`INSERT INTO ${s}.vectors (seq, embedder, embedding) VALUES ($1, 'hash', $2)`, [
          seqs[i],
          hashEmbed(c.text),
        ]);
      }
    }
  }
  await adminQuery(`CREATE INDEX chunks_text_trgm ON ${s}.chunks USING gin (text gin_trgm_ops)`);
  if (version >= 4) {
    await adminQuery(`CREATE INDEX chunks_seam_trgm ON ${s}.chunks USING gin (seam gin_trgm_ops)`);
    await adminQuery(
      `INSERT INTO ${s}.store_settings (key, value) VALUES ('embedder', '{"spec": "hash", "dimensions": 384}')`,
    );
    await adminQuery(
      `INSERT INTO ${s}.manual_links (from_doc, from_ordinal, to_doc, to_ordinal, type, strength)
       VALUES ('rivers', 0, 'cities', 0, 'supports', 1)`,
    );
    await adminQuery(`INSERT INTO ${s}.access (id, count, last_ms) VALUES ('rivers:1', 3, 1000)`);
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
  if (version >= 4)
    await adminQuery(`INSERT INTO ${s}.vectors (seq, embedder, embedding) VALUES ($1, 'hash', $2)`, [
      rows[0]!.seq,
      hashEmbed('we crossed the river by ferry'),
    ]);
}

describe.skipIf(!postgresAvailable('postgres schema'))('PostgreSQL store schema', () => {
  it('is created on request, at every version, and a missing store is STORE_MISSING', async () => {
    const url = freshSchemaUrl();
    const missing = await caught(PostgresStore.open(url));
    expect(missing.code).toBe('STORE_MISSING');
    expect(missing.message).toMatch(/no rlm store at .*rlm ingest PATH --store URL/);
    const store = await PostgresStore.open(url, { create: true });
    onTestFinished(() => store.close());
    expect(await versions(url)).toEqual(ALL);
    expect((await store.stats()).schema).toBe(PG_SCHEMA_VERSION);
    const { rows } = await adminQuery(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'chunks' AND column_name = 'seam'`,
      [schemaOf(url)],
    );
    expect(rows).toEqual([]);
  });

  for (const version of [1, 2, 4]) {
    it(`migrates a version ${version} store when opened: it searches, greps and recalls as a new one, keeps what it held, and takes writes`, async () => {
      const url = freshSchemaUrl();
      await oldStore(url, version);
      const store = await PostgresStore.open(url);
      onTestFinished(() => store.close());
      expect(await versions(url)).toEqual(ALL);
      const s = schemaOf(url);
      const { rows } = await adminQuery(
        `SELECT to_regclass('${s}.postings') AS postings, to_regclass('${s}.signatures') AS signatures,
                to_regclass('${s}.chunks_text_trgm') AS text_trgm, to_regclass('${s}.chunks_seam_trgm') AS seam_trgm,
                to_regclass('${s}.documents_grams_trgm') IS NOT NULL AS grams_trgm, to_regclass('${s}.vectors') IS NOT NULL AS vectors`,
      );
      expect(rows[0]).toEqual({
        postings: null,
        signatures: null,
        text_trgm: null,
        seam_trgm: null,
        grams_trgm: true,
        vectors: true,
      });
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
      const migrated = await store.search('river water', { k: 10, touch: false, mode: 'bm25' });
      const expected = await fresh.search('river water', { k: 10, touch: false });
      expect(migrated.map((h) => h.score)).toEqual(expected.map((h) => h.score));
      const documents = (hits: { id: string }[]) =>
        hits.map((h) => (h.id.startsWith('mem-') ? 'memory' : h.id));
      expect(documents(migrated)).toEqual(documents(expected));
      expect((await store.recall('ferry')).map((m) => m.id)).toEqual(['mem-river']);
      // grep's index covers the documents written before the migration too, and finds a literal cut
      // mid-word by a chunk edge.
      const grep = await store.grep('warehouses along', { literal: true });
      expect(grep.matches.map((m) => m.id)).toEqual(['cities:0']);
      const across = NOISE.slice(EDGE - 5, EDGE + 5);
      expect((await store.documentChunks('noise')).some((c) => c.text.includes(across))).toBe(false);
      const found = async (st: PostgresStore) =>
        (await st.grep(across, { literal: true })).matches.map((m) => [m.id, m.documentOffset]);
      expect(await found(store)).toEqual([['noise:0', EDGE - 5]]);
      expect(await found(store)).toEqual(await found(fresh));

      if (version >= 4) {
        // What a version 4 store held beside its chunks is kept: its embedder and vectors, a hand-made
        // link, access stats.
        expect(store.embedder).toBe('hash');
        const { rows: vectors } = await adminQuery(`SELECT count(*)::int AS n FROM ${s}.vectors`);
        expect(vectors[0].n).toBe((await store.stats()).chunks);
        expect((await store.manualLinks()).map((l) => [l.from, l.to, l.type])).toEqual([
          ['rivers:0', 'cities:0', 'supports'],
        ]);
        expect((await store.accessStats('rivers:1')).count).toBe(3);
      } else expect(store.embedder).toBeNull();

      await store.ingestText('new', 'A new river text written after the migration.');
      expect((await store.findDocument('new'))?.chars).toBe(
        'A new river text written after the migration.'.length,
      );
      expect((await store.search('migration', { touch: false, mode: 'bm25' })).map((h) => h.id)).toEqual([
        'new:0',
      ]);
      expect(await store.removeDocument('rivers')).toBe(true);
      expect((await store.search('salmon', { touch: false, mode: 'bm25' })).length).toBe(0);
      if (version >= 4) {
        // Written with the store's embedder: the new chunk has its vector, the removed ones lost theirs.
        const { rows: vectors } = await adminQuery(`SELECT count(*)::int AS n FROM ${s}.vectors`);
        expect(vectors[0].n).toBe((await store.stats()).chunks);
      }
    });
  }

  it('refuses a store written by a newer rlm, in one line, without changing it', async () => {
    const url = freshSchemaUrl();
    const store = await PostgresStore.open(url, { create: true });
    await store.close();
    await adminQuery(`INSERT INTO ${schemaOf(url)}.rlm_schema (version) VALUES (99)`);
    const err = await caught(PostgresStore.open(url, { create: true }));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toMatch(
      new RegExp(`has schema 99, newer than this rlm understands \\(${PG_SCHEMA_VERSION}\\); upgrade rlm$`),
    );
    expect(err.message).not.toContain(decodeURIComponent(new URL(url).password));
    expect(await versions(url)).toEqual([...ALL, 99]);
  });
});
