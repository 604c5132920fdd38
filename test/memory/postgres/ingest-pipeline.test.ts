/**
 * A PostgreSQL ingest prepares its next batch while the previous one commits. A batch whose commit fails
 * fails the ingest: the batches before it stay, none after it is written, and the process's search index
 * holds nothing of what was not committed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { documentIdFor } from '../../../memory/ingest/files.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import { caught } from '../../helpers/errors.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp.ts';
import { prose } from '../helpers/corpus.ts';

describe.skipIf(!postgresAvailable('postgres ingest pipeline'))('PostgreSQL ingest pipeline', () => {
  it('stops at a batch whose commit fails, keeping the ones before and writing none after', async () => {
    const url = freshSchemaUrl();
    const store = await PostgresStore.open(url, { create: true });
    onTestFinished(() => store.close());
    const dir = path.join(tempDir(), 'docs');
    mkdirSync(dir);
    const files = Array.from({ length: 6 }, (_, i) => path.join(dir, `f${i}.txt`));
    for (const [i, f] of files.entries()) writeFileSync(f, `${prose(i + 1, 20)}\nmarker${i}word\n`);
    // The server refuses the third file's document: its batch's transaction fails.
    const s = new URL(url).searchParams.get('schema')!;
    await adminQuery(`CREATE FUNCTION ${s}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = '${documentIdFor(files[2]!)}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await adminQuery(
      `CREATE TRIGGER refuse BEFORE INSERT ON ${s}.documents FOR EACH ROW EXECUTE FUNCTION ${s}.refuse()`,
    );
    // One file per batch.
    const err = await caught(store.ingestPaths([dir], { segmentChars: 1000 }));
    expect(err.message).toContain('refused by the test');
    const stored = (await store.documents()).map((d) => d.id).sort();
    expect(stored).toEqual([documentIdFor(files[0]!), documentIdFor(files[1]!)].sort());
    for (let i = 0; i < 6; i++) {
      const hits = await store.search(`marker${i}word`, { touch: false, fuzzy: false });
      expect(hits.length, `marker${i}word`).toBe(i < 2 ? 1 : 0);
    }
    // Once the server takes it, a re-run writes the rest.
    await adminQuery(`DROP TRIGGER refuse ON ${s}.documents`);
    const report = await store.ingestPaths([dir], { segmentChars: 1000 });
    expect(report).toMatchObject({ added: 4, skipped: 2, documents: 6 });
    for (let i = 0; i < 6; i++)
      expect((await store.search(`marker${i}word`, { touch: false, fuzzy: false })).length).toBe(1);
  });
});
