/**
 * Each process keeps a copy of a PostgreSQL store's search index and keeps it current from the change
 * feed. Whatever the order in which concurrent transactions took their ids and committed, a search sees
 * every commit made before it began, from any handle (each handle here has its own pool and copy, as a
 * process would), including removals and the merges that rewrite the index; and its results are those
 * of a copy read afresh.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import type { SearchHit } from '../../../memory/types.ts';
import { adminQuery, freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';

async function open(url: string, create = false): Promise<PostgresStore> {
  const store = await PostgresStore.open(url, { create });
  onTestFinished(() => store.close());
  return store;
}

const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!;

/** Every hit of a search with its score, in one order (ties may come in either), to compare two handles. */
async function ranking(store: PostgresStore, query: string): Promise<[string, number][]> {
  const hits: SearchHit[] = await store.search(query, { k: 1000, touch: false });
  return hits
    .map((h): [string, number] => [h.id, Number(h.score.toFixed(9))])
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** Resolves once a session of the server waits on advisory lock `key` (a writer held in its transaction). */
async function waitForLockWaiter(key: number): Promise<void> {
  for (;;) {
    const { rows } = await adminQuery(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1`,
      [key],
    );
    if (rows[0]!.n > 0) return;
  }
}

describe.skipIf(!postgresAvailable('postgres live index'))('PostgreSQL search index copies', () => {
  it('see a transaction that took its id before one already seen but committed after it', async () => {
    const url = freshSchemaUrl();
    const reader = await open(url, true);
    const slow = await open(url);
    const fast = await open(url);
    await reader.ingestText('base', 'A first document about lighthouses.');
    expect((await reader.search('lighthouses', { touch: false })).length).toBe(1);
    // A trigger holds the writer of document `slow` inside its transaction, after its rows (and so its
    // transaction id) exist, until the test lets it go.
    const s = schemaOf(url);
    await adminQuery(`CREATE FUNCTION ${s}.hold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = 'slow' THEN PERFORM pg_advisory_xact_lock(0, 4242); END IF; RETURN NEW; END $$`);
    await adminQuery(
      `CREATE TRIGGER hold AFTER INSERT ON ${s}.documents FOR EACH ROW EXECUTE FUNCTION ${s}.hold()`,
    );
    const { Client } = (await import('pg')).default;
    const gate = new Client({ connectionString: process.env.RLM_TEST_POSTGRES });
    await gate.connect();
    onTestFinished(() => gate.end());
    await gate.query('SELECT pg_advisory_lock(0, 4242)');
    const held = slow.ingestText('slow', 'The keeper of the lighthouse polished its lens every night.');
    await waitForLockWaiter(4242);
    // A later transaction commits first; the reader sees it, not the one still open.
    await fast.ingestText('fast', 'A lighthouse keeper logs every ship that passes the lens.');
    expect((await reader.search('lens', { touch: false })).map((h) => h.id)).toEqual(['fast:0']);
    await gate.query('SELECT pg_advisory_unlock(0, 4242)');
    await held;
    // The earlier transaction committed after the reader's last look: it must not be skipped.
    expect((await reader.search('lens', { touch: false })).map((h) => h.id).sort()).toEqual([
      'fast:0',
      'slow:0',
    ]);
    // The same holds for a removal held open the same way.
    await adminQuery(`CREATE OR REPLACE FUNCTION ${s}.hold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF OLD.id = 'slow' THEN PERFORM pg_advisory_xact_lock(0, 4242); END IF; RETURN OLD; END $$`);
    await adminQuery(
      `CREATE TRIGGER hold_delete AFTER DELETE ON ${s}.documents FOR EACH ROW EXECUTE FUNCTION ${s}.hold()`,
    );
    await gate.query('SELECT pg_advisory_lock(0, 4242)');
    const removing = slow.removeDocument('slow');
    await waitForLockWaiter(4242);
    expect(await fast.removeDocument('fast')).toBe(true);
    expect((await reader.search('lens', { touch: false })).map((h) => h.id)).toEqual(['slow:0']);
    await gate.query('SELECT pg_advisory_unlock(0, 4242)');
    expect(await removing).toBe(true);
    expect(await reader.search('lens', { touch: false })).toEqual([]);
  });

  it('many writers at once: a search finds each memory once its remember returned', async () => {
    const url = freshSchemaUrl();
    const reader = await open(url, true);
    const writers = await Promise.all([1, 2, 3, 4].map(() => open(url)));
    await reader.search('warmup', { touch: false });
    const missed: string[] = [];
    await Promise.all(
      writers.map(async (w, i) => {
        for (let n = 0; n < 40; n++) {
          const token = `tok${i}x${n}q`;
          const m = await w.remember({ text: `note ${token} from writer ${i}`, topic: `w${i}` });
          const hits = await reader.search(token, { touch: false, fuzzy: false });
          if (hits.map((h) => h.document).join() !== m.id) missed.push(token);
        }
      }),
    );
    expect(missed).toEqual([]);
    // After all this (small segments merged along the way), the reader's copy ranks as a fresh one.
    const fresh = await open(url);
    for (const q of ['note from writer', 'writer 2', 'tok1x7q']) {
      expect(await ranking(reader, q)).toEqual(await ranking(fresh, q));
    }
  }, 120_000);

  it('follows merges and removals, and forgotten memories leave the index', async () => {
    const url = freshSchemaUrl();
    const writer = await open(url, true);
    const reader = await open(url);
    await reader.search('warmup', { touch: false });
    const ids: string[] = [];
    for (let n = 0; n < 70; n++) {
      const text = n < 30 ? `harbour note ${n} about the quixotic crane` : `harbour note ${n}`;
      ids.push((await writer.remember({ text, topic: 'port' })).id);
    }
    // 70 single-memory segments were merged along the way: the index holds few segments.
    const { rows } = await adminQuery(`SELECT count(*)::int AS n FROM ${schemaOf(url)}.bm25_segments`);
    expect(rows[0]!.n).toBeLessThan(16);
    expect((await reader.search('harbour', { k: 100, touch: false })).length).toBe(70);
    await writer.forgetMemories(ids.slice(0, 30));
    const left = await reader.search('harbour', { k: 100, touch: false });
    expect(left.map((h) => h.document).sort()).toEqual(ids.slice(30).sort());
    // Forgotten words are gone from the stored index, not only hidden: no segment holds them.
    const { rows: words } = await adminQuery(
      `SELECT count(*)::int AS n FROM ${schemaOf(url)}.bm25_segments WHERE data LIKE '%quixot%'`,
    );
    expect(words[0]!.n).toBe(0);
    expect(await ranking(reader, 'harbour note')).toEqual(await ranking(await open(url), 'harbour note'));
  }, 120_000);

  it('lets go of segments merged away while it did not look', async () => {
    const url = freshSchemaUrl();
    const writer = await open(url, true);
    const reader = await open(url);
    for (let n = 0; n < 4; n++) await writer.remember({ text: `comet sighting ${n}`, topic: 'sky' });
    expect((await reader.search('comet', { k: 100, touch: false })).length).toBe(4);
    // Enough single remembers to merge the small segments twice over, the ones the reader holds first.
    for (let n = 4; n < 70; n++) await writer.remember({ text: `comet sighting ${n}`, topic: 'sky' });
    await writer.forgetMemories((await writer.listMemories()).slice(0, 5).map((m) => m.id));
    const hits = await reader.search('comet', { k: 100, touch: false });
    expect(hits.length).toBe(65);
    expect(new Set(hits.map((h) => h.id)).size).toBe(65);
    expect(await ranking(reader, 'comet sighting')).toEqual(await ranking(await open(url), 'comet sighting'));
  });

  it('keeps its own segment written but not yet committed when another process merges', async () => {
    const url = freshSchemaUrl();
    const store = await open(url, true);
    const other = await open(url);
    for (const text of ['the ferry leaves at nine', 'the ferry is late on sundays'])
      await store.remember({ text, topic: 'ferry' });
    // A trigger holds consolidate's transaction open after its summary's segment is written.
    const s = schemaOf(url);
    await adminQuery(`CREATE FUNCTION ${s}.hold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock(0, 4343); RETURN NEW; END $$`);
    await adminQuery(
      `CREATE TRIGGER hold AFTER UPDATE ON ${s}.documents FOR EACH ROW WHEN (NEW.topic = 'ferry') EXECUTE FUNCTION ${s}.hold()`,
    );
    const { Client } = (await import('pg')).default;
    const gate = new Client({ connectionString: process.env.RLM_TEST_POSTGRES });
    await gate.connect();
    onTestFinished(() => gate.end());
    await gate.query('SELECT pg_advisory_lock(0, 4343)');
    const consolidating = store.consolidate('ferry', async () => 'summary: ferries are unreliable');
    await waitForLockWaiter(4343);
    // Another process merges the small segments meanwhile; this process's search sees the merge.
    for (let n = 0; n < 8; n++) await other.remember({ text: `tram note ${n}`, topic: 'tram' });
    expect((await store.search('tram', { k: 20, touch: false })).length).toBe(8);
    await gate.query('SELECT pg_advisory_unlock(0, 4343)');
    await consolidating;
    expect((await store.search('unreliable', { touch: false })).length).toBe(1);
  });

  it('recall on one process sees the archiving, restoring and reads another committed', async () => {
    const url = freshSchemaUrl();
    const a = await open(url, true);
    const b = await open(url);
    const m = await a.remember({
      text: 'the lighthouse lamp runs on kerosene',
      topic: 'coast',
      importance: 'low',
    });
    expect((await b.recall('lighthouse lamp')).map((x) => x.id)).toEqual([m.id]);
    // Archived by the other process (a decay a year on), then brought back.
    const later = new Date(Date.now() + 365 * 86_400_000);
    expect((await a.decay(later)).archived).toEqual([m.id]);
    expect(await b.recall('lighthouse lamp')).toEqual([]);
    expect((await b.recall('lighthouse lamp', { archived: true })).map((x) => x.id)).toEqual([m.id]);
    await a.restore([m.id]);
    // Reads the other process made and wrote show in the weights this one computes: its restore and 3
    // recalls, with this one's own 2 reads (not written yet).
    for (let n = 0; n < 3; n++) await a.recall('lighthouse lamp');
    await a.accessStats(`${m.id}:0`);
    const [hit] = await b.recall('lighthouse lamp');
    expect(hit?.id).toBe(m.id);
    expect(hit?.accessCount).toBe(6);
  });

  it('recall counts this process’s own reads before they are written', async () => {
    const url = freshSchemaUrl();
    const store = await open(url, true);
    const m = await store.remember({ text: 'the tide tables are in the drawer', topic: 'boat' });
    for (let n = 1; n <= 3; n++) {
      const [hit] = await store.recall('tide tables');
      expect(hit?.id).toBe(m.id);
      expect(hit?.accessCount).toBe(n - 1);
    }
    expect((await store.getMemory(m.id))?.accessCount).toBe(3);
  });
});
