/**
 * The PostgreSQL store's tables are rlm's to create and migrate: `rlm_schema` records each version
 * applied, an older store is migrated when opened, a newer one is refused with a clear line, and a
 * schema with no store is STORE_MISSING unless the caller creates it.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { caught } from '../../helpers/errors.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';

const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!;

async function versions(url: string): Promise<number[]> {
  const { rows } = await adminQuery(`SELECT version FROM ${schemaOf(url)}.rlm_schema ORDER BY version`);
  return rows.map((r) => Number(r.version));
}

describe.skipIf(!postgresAvailable('postgres schema'))('PostgreSQL store schema', () => {
  it('is created on request, at every version, and a missing store is STORE_MISSING', async () => {
    const url = freshSchemaUrl();
    const missing = await caught(PostgresStore.open(url));
    expect(missing.code).toBe('STORE_MISSING');
    expect(missing.message).toMatch(/no rlm store at .*rlm ingest PATH --store URL/);
    const store = await PostgresStore.open(url, { create: true });
    onTestFinished(() => store.close());
    expect(await versions(url)).toEqual([1, 2]);
    expect((await store.stats()).schema).toBe(2);
  });

  it('migrates a version 1 store when opened: documents written before keep working', async () => {
    const url = freshSchemaUrl();
    const first = await PostgresStore.open(url, { create: true });
    await first.ingestText('old', 'Written by an rlm that kept no length.');
    await first.close();
    // Back to version 1 as an older rlm left it: no `chars` column, one version row.
    const schema = schemaOf(url);
    await adminQuery(`ALTER TABLE ${schema}.documents DROP COLUMN chars`);
    await adminQuery(`DELETE FROM ${schema}.rlm_schema WHERE version = 2`);
    const store = await PostgresStore.open(url);
    onTestFinished(() => store.close());
    expect(await versions(url)).toEqual([1, 2]);
    const old = (await store.documents()).find((d) => d.id === 'old')!;
    expect(old.chars).toBeUndefined();
    expect((await store.readDocument('old'))?.text).toBe('Written by an rlm that kept no length.');
    await store.ingestText('new', 'Written after the migration.');
    expect((await store.findDocument('new'))?.chars).toBe('Written after the migration.'.length);
  });

  it('refuses a store written by a newer rlm, in one line, without changing it', async () => {
    const url = freshSchemaUrl();
    const store = await PostgresStore.open(url, { create: true });
    await store.close();
    await adminQuery(`INSERT INTO ${schemaOf(url)}.rlm_schema (version) VALUES (99)`);
    const err = await caught(PostgresStore.open(url, { create: true }));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toMatch(/has schema 99, newer than this rlm understands \(2\); upgrade rlm$/);
    expect(err.message).not.toContain(decodeURIComponent(new URL(url).password));
    expect(await versions(url)).toEqual([1, 2, 99]);
  });
});
