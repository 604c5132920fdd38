/**
 * The PostgreSQL store's tables are rlm's to create and migrate: `rlm_schema` records each version
 * applied, an older store is migrated when opened, a newer one is refused with a clear line, and a
 * schema with no store is STORE_MISSING unless the caller creates it.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { PG_SCHEMA_VERSION } from '../../../memory/postgres/schema.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { caught } from '../../helpers/errors.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { noise } from '../helpers/corpus.ts';

const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!;

async function versions(url: string): Promise<number[]> {
  const { rows } = await adminQuery(`SELECT version FROM ${schemaOf(url)}.rlm_schema ORDER BY version`);
  return rows.map((r) => Number(r.version));
}

/** Every version a new store records. */
const ALL = [1, 2, 4];

/** Takes a store back to what version 2 left: no chunk seams, no vectors table. */
async function undoVersion4(schema: string): Promise<void> {
  await adminQuery(`DELETE FROM ${schema}.rlm_schema WHERE version = 4`);
  await adminQuery(`DROP TABLE ${schema}.vectors`);
  await adminQuery(`ALTER TABLE ${schema}.chunks DROP COLUMN seam`);
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
  });

  it('migrates a version 1 store when opened: documents written before keep working', async () => {
    const url = freshSchemaUrl();
    const first = await PostgresStore.open(url, { create: true });
    await first.ingestText('old', 'Written by an rlm that kept no length.');
    await first.close();
    // Back to version 1 as an older rlm left it: no `chars` column, one version row.
    const schema = schemaOf(url);
    await adminQuery(`ALTER TABLE ${schema}.documents DROP COLUMN chars`);
    await adminQuery(`DELETE FROM ${schema}.rlm_schema WHERE version > 1`);
    await undoVersion4(schema);
    const store = await PostgresStore.open(url);
    onTestFinished(() => store.close());
    expect(await versions(url)).toEqual(ALL);
    const old = (await store.documents()).find((d) => d.id === 'old')!;
    expect(old.chars).toBeUndefined();
    expect((await store.readDocument('old'))?.text).toBe('Written by an rlm that kept no length.');
    await store.ingestText('new', 'Written after the migration.');
    expect((await store.findDocument('new'))?.chars).toBe('Written after the migration.'.length);
  });

  it('migrates a version 2 store: vectors kept from now on; grep reads documents whose chunk seams are unknown, and finds matches across edges', async () => {
    const url = freshSchemaUrl();
    const first = await PostgresStore.open(url, { create: true });
    const text = noise(3, 3000);
    await first.ingestText('old', text, { chunker: 'size', chunkTokens: 40, overlapTokens: 0 });
    await first.ingestText('one', 'A single chunk.');
    await first.close();
    const schema = schemaOf(url);
    await undoVersion4(schema);
    const store = await PostgresStore.open(url);
    onTestFinished(() => store.close());
    expect(await versions(url)).toEqual(ALL);
    const { rows } = await adminQuery(
      `SELECT ordinal, seam FROM ${schema}.chunks WHERE document = 'old' ORDER BY ordinal LIMIT 2`,
    );
    expect(rows).toEqual([
      { ordinal: 0, seam: '' },
      { ordinal: 1, seam: null },
    ]);
    const vectors = await adminQuery('SELECT to_regclass($1) AS t', [`${schema}.vectors`]);
    expect(vectors.rows[0].t).not.toBeNull();
    expect(store.embedder).toBeNull();
    const chunks = await store.documentChunks('old');
    const edge = chunks[0]!.end;
    const across = text.slice(edge - 5, edge + 5);
    expect(chunks.some((c) => c.text.includes(across))).toBe(false);
    const hits = await store.grep(across, { literal: true });
    expect(hits.matches.map((m) => m.documentOffset)).toContain(edge - 5);
  });

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
