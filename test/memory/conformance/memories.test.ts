/**
 * Memories behave the same on every backend (the in-memory double, the folder store, PostgreSQL):
 * remember, recall, decay, archive, restore, forget and consolidate, through the shared memory model.
 */
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/errors.ts';
import { backends } from '../helpers/backends.ts';

const DAY = 86_400_000;
const T0 = new Date('2026-01-01T00:00:00Z');
const at = (days: number) => new Date(T0.getTime() + days * DAY);

describe.each(backends('memory conformance'))('%s store', (_name, backend) => {
  describe('remember and recall', () => {
    it('finds a memory by its words (English and French, with a typo) and shows its fields', async () => {
      const store = await backend.open();
      const db = await store.remember({
        text: 'We decided to use PostgreSQL for the billing service.',
        topic: 'architecture',
        importance: 'high',
        tags: ['db', 'billing'],
        now: T0,
      });
      await store.remember({
        text: 'Le client préfère les réunions le mardi matin.',
        topic: 'client',
        now: T0,
      });
      await store.remember({ text: 'The office plant needs water on Fridays.', now: T0 });
      expect(db).toMatchObject({
        topic: 'architecture',
        importance: 'high',
        tags: ['billing', 'db'],
        source: 'cli',
        created: T0.toISOString(),
        accessCount: 0,
        archived: false,
      });
      expect(db.id).toMatch(/^mem-/);
      const [hit] = await store.recall('which database for billing?', { now: T0 });
      expect(hit?.id).toBe(db.id);
      expect(hit?.text).toContain('PostgreSQL');
      expect((await store.recall('réunion mardi', { now: T0 }))[0]?.topic).toBe('client');
      expect((await store.recall('postgress', { now: T0 }))[0]?.id).toBe(db.id);
      // Each recall that returned it counted as an access: the first question and the typo.
      expect((await store.getMemory(db.id))?.accessCount).toBe(2);
    });

    it('filters by topic, tags, since and until', async () => {
      const store = await backend.open();
      const a = await store.remember({
        text: 'deploy on monday',
        topic: 'ops',
        tags: ['deploy'],
        now: at(0),
      });
      const b = await store.remember({ text: 'deploy with blue green', topic: 'ops', now: at(10) });
      const c = await store.remember({ text: 'deploy docs site weekly', topic: 'docs', now: at(20) });
      const ids = async (o: Parameters<typeof store.recall>[1]) =>
        (await store.recall('deploy', { now: at(20), ...o })).map((h) => h.id).sort();
      expect(await ids({ topic: 'ops' })).toEqual([a.id, b.id].sort());
      expect(await ids({ tags: ['deploy'] })).toEqual([a.id]);
      expect(await ids({ since: at(5) })).toEqual([b.id, c.id].sort());
      expect(await ids({ until: at(15) })).toEqual([a.id, b.id].sort());
      expect(await ids({ k: 1 })).toHaveLength(1);
    });

    it('ranks an equally relevant but heavier and newer memory first, and recall reinforces', async () => {
      const store = await backend.open();
      const old = await store.remember({ text: 'the api key rotates monthly', now: at(0) });
      const fresh = await store.remember({ text: 'the api key rotates monthly', now: at(30) });
      const hits = await store.recall('api key', { now: at(30) });
      expect(hits.map((h) => h.id)).toEqual([fresh.id, old.id]);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      // Recalling the old one many times reinforces it past the fresh one.
      const before = (await store.getMemory(old.id, at(30)))!.weight;
      for (let i = 0; i < 5; i++) await store.recall('api key', { now: at(30), k: 2 });
      const after = (await store.getMemory(old.id, at(30)))!;
      expect(after.accessCount).toBe(6);
      expect(after.weight).toBeGreaterThan(before);
      expect(after.lastAccessed).toBe(at(30).toISOString());
    });

    it('records a recall asked as of a later time (now in the future) as an access of now', async () => {
      const store = await backend.open();
      const m = await store.remember({ text: 'the build cache lives in the bucket' });
      const future = new Date(Date.now() + 2 * DAY);
      expect((await store.recall('build cache', { now: future })).map((h) => h.id)).toEqual([m.id]);
      const seen = Date.parse((await store.getMemory(m.id))!.lastAccessed!);
      expect(seen).toBeLessThanOrEqual(Date.now());
      expect(seen).toBeGreaterThan(Date.now() - 60_000);
    });

    it('is visible to search like any chunk, with type "memory" and topic filters', async () => {
      const store = await backend.open();
      await store.ingestText('notes', 'Kafka topics are partitioned by customer id.');
      const m = await store.remember({ text: 'Kafka retention is seven days', topic: 'kafka' });
      expect((await store.search('kafka')).map((h) => h.document).sort()).toEqual([m.id, 'notes'].sort());
      expect((await store.search('kafka', { type: 'memory' })).map((h) => h.document)).toEqual([m.id]);
      expect((await store.search('kafka', { topic: 'kafka' })).map((h) => h.document)).toEqual([m.id]);
      expect(await store.search('kafka', { topic: 'other' })).toEqual([]);
      expect((await store.getChunk(`${m.id}:0`))?.text).toBe('Kafka retention is seven days');
      expect((await store.grep('retention')).matches.map((x) => x.id)).toEqual([`${m.id}:0`]);
    });

    it('refuses bad input with one clear line and writes nothing', async () => {
      const store = await backend.open();
      await store.remember({ text: 'one good memory' });
      const cases: [Parameters<typeof store.remember>[0], RegExp][] = [
        [{ text: 'x', importance: 'urgent' }, /unknown importance "urgent"/],
        [{ text: '   ' }, /text is empty/],
        [{ text: 'x', topic: 't'.repeat(201) }, /topic is 201 characters; at most 200/],
        [{ text: 'a'.repeat(1024 * 1024 + 1) }, /at most 1048576/],
      ];
      for (const [input, message] of cases) {
        const err = await caught(store.remember(input));
        expect(err.code).toBe('BAD_INPUT');
        expect(err.message).toMatch(message);
        expect(err.message).not.toContain('\n');
      }
      expect(await store.listMemories()).toHaveLength(1);
    });
  });

  describe('decay, archive and restore', () => {
    it('archives by weight and importance, never critical ones, and restores', async () => {
      const store = await backend.open();
      const ids: Record<string, string> = {};
      for (const imp of ['critical', 'high', 'medium', 'low'] as const) {
        ids[imp] = (await store.remember({ text: `${imp} fact about widgets`, importance: imp, now: T0 })).id;
      }
      // 0.95^(d·m) < 0.1 ⇔ d·m > 44.9: low at 23 days, medium at 45, high at 90, critical never.
      expect(await store.decay(at(20))).toEqual({ decayed: 3, archived: [] });
      expect((await store.decay(at(30))).archived).toEqual([ids.low]);
      expect((await store.getMemory(ids.medium!, at(30)))!.weight).toBeCloseTo(0.95 ** 30, 6);
      expect((await store.getMemory(ids.high!, at(30)))!.weight).toBeCloseTo(0.95 ** 15, 6);
      // recall at 60 days already leaves medium out although decay has not run: same formula.
      const visible = (await store.recall('widgets', { now: at(60) })).map((h) => h.id);
      expect(visible.sort()).toEqual([ids.critical, ids.high].sort());
      expect((await store.decay(at(365))).archived.sort()).toEqual([ids.high, ids.medium].sort());
      expect((await store.getMemory(ids.critical!, at(3650)))!.archived).toBe(false);
      expect(await store.topics(at(365))).toEqual([{ topic: 'general', memories: 1, archived: 3 }]);
      expect(await store.search('widgets', { type: 'memory' })).toHaveLength(1);
      const all = await store.recall('widgets', { now: at(365), archived: true });
      expect(all).toHaveLength(4);
      expect(await store.restore([ids.low!], at(365))).toEqual([ids.low]);
      const back = (await store.getMemory(ids.low!, at(365)))!;
      expect(back.archived).toBe(false);
      expect(back.accessCount).toBe(2); // the recall with archived: true, then the restore
      expect((await store.recall('widgets', { now: at(366) })).map((h) => h.id)).toContain(ids.low);
      expect((await caught(store.restore(['mem-nope']))).code).toBe('NOT_FOUND');
    });

    it('an access refreshes the clock', async () => {
      const store = await backend.open();
      const m = await store.remember({ text: 'refresh me please', now: T0 });
      await store.recall('refresh', { now: at(40) });
      // 10 days since the access instead of 50 since creation: (1 + 0.2·ln 2)·0.95^10, not 0.95^50.
      expect((await store.getMemory(m.id, at(50)))!.weight).toBeCloseTo(
        (1 + 0.2 * Math.log(2)) * 0.95 ** 10,
        6,
      );
      expect((await store.decay(at(60))).archived).toEqual([]);
    });

    it('uses settings saved in the store', async () => {
      const store = await backend.open();
      await store.remember({ text: 'short lived', now: T0 });
      await store.configureMemory({ decayRate: 0.5, pruneThreshold: 0.3 });
      const again = (await backend.reopen(store)) ?? store;
      expect(await again.memorySettings()).toMatchObject({ decayRate: 0.5, pruneThreshold: 0.3 });
      expect((await again.decay(at(2))).archived).toHaveLength(1);
      expect((await caught(again.configureMemory({ decayRate: 2 }))).message).toMatch(/decay rate/);
    });
  });

  describe('forget and consolidate', () => {
    it('forget really deletes the memory, its links and the summary written from it', async () => {
      const store = await backend.open();
      const a = await store.remember({ text: 'alpha one', topic: 't' });
      const b = await store.remember({ text: 'alpha two', topic: 't' });
      const { summary } = await store.consolidate('t', async () => 'alpha summary');
      expect(await store.neighbors(`${summary}:0`, 'summarizes')).toHaveLength(2);
      expect((await caught(store.forgetMemories([a.id, 'mem-missing']))).code).toBe('NOT_FOUND');
      expect(await store.getMemory(a.id)).toBeDefined();
      // The summary may repeat what was forgotten: it goes too, and the other source is active again.
      expect(await store.forgetMemories([`${a.id}:0`])).toEqual([a.id, summary]);
      expect(await store.getMemory(a.id)).toBeUndefined();
      expect(await store.getChunk(`${a.id}:0`)).toBeUndefined();
      expect(await store.getMemory(summary)).toBeUndefined();
      expect((await store.getMemory(b.id))?.archived).toBe(false);
      expect((await store.recall('alpha')).map((m) => m.id)).toEqual([b.id]);
    });

    it('writes one summary linked to its sources and archives them; critical ones stay', async () => {
      const store = await backend.open();
      const a = await store.remember({
        text: 'cache TTL is 60s',
        topic: 'cache',
        tags: ['perf'],
        now: at(0),
      });
      const b = await store.remember({
        text: 'cache uses redis',
        topic: 'cache',
        importance: 'high',
        now: at(1),
      });
      const c = await store.remember({
        text: 'never cache auth tokens',
        topic: 'cache',
        importance: 'critical',
      });
      let seen: string[] = [];
      const result = await store.consolidate(
        'cache',
        async (topic, memories) => {
          seen = memories.map((m) => m.text);
          return `Summary of ${topic}: redis, 60s TTL.`;
        },
        { now: at(2) },
      );
      expect(seen).toEqual(['cache TTL is 60s', 'cache uses redis']);
      expect(result.archived.sort()).toEqual([a.id, b.id].sort());
      const summary = (await store.getMemory(result.summary))!;
      expect(summary).toMatchObject({
        source: 'consolidation',
        importance: 'high',
        topic: 'cache',
        tags: ['perf'],
      });
      expect((await store.neighbors(`${result.summary}:0`, 'summarizes')).map((l) => l.to).sort()).toEqual(
        [`${a.id}:0`, `${b.id}:0`].sort(),
      );
      expect((await store.getMemory(a.id))!.archived).toBe(true);
      expect((await store.getMemory(c.id))!.archived).toBe(false);
      expect(await store.topics(at(2))).toEqual([{ topic: 'cache', memories: 2, archived: 2 }]);
      expect((await caught(store.consolidate('empty', async () => 'x'))).code).toBe('BAD_INPUT');
      const err = await caught(
        (async () => {
          await store.remember({ text: 'one more', topic: 'x' });
          await store.remember({ text: 'two more', topic: 'x' });
          return store.consolidate('x', async () => '  ');
        })(),
      );
      expect(err.code).toBe('PROVIDER');
      // A summary too big for a memory is the model's failure too, not bad input.
      const huge = await caught(store.consolidate('x', async () => 'x'.repeat(1024 * 1024 + 1)));
      expect(huge.code).toBe('PROVIDER');
      expect(huge.message).toContain('the model wrote a summary of 1048577 bytes');
      expect((await store.topics()).find((t) => t.topic === 'x')).toEqual({
        topic: 'x',
        memories: 2,
        archived: 0,
      });
    });

    it('writes nothing when a source is forgotten while the model summarizes: its text would live on', async () => {
      const store = await backend.open();
      await store.remember({ text: 'alpha fact one', topic: 'race' });
      const secret = await store.remember({ text: 'the password is hunter2', topic: 'race' });
      await store.remember({ text: 'gamma fact three', topic: 'race' });
      const err = await caught(
        store.consolidate('race', async (_topic, memories) => {
          // Another writer's forget, committed before this consolidation takes the lock.
          await store.forgetMemories([secret.id]);
          return memories.map((m) => m.text).join('; ');
        }),
      );
      expect(err.code).toBe('RUNTIME');
      expect(err.message).toContain('changed while the model summarized it');
      expect((await store.grep('hunter2', { literal: true })).matches).toEqual([]);
      expect((await store.listMemories({ topic: 'race' })).map((m) => m.text).sort()).toEqual([
        'alpha fact one',
        'gamma fact three',
      ]);
      expect((await store.topics()).find((t) => t.topic === 'race')).toEqual({
        topic: 'race',
        memories: 2,
        archived: 0,
      });
    });
  });
});
