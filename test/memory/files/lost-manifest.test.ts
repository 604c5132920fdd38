/**
 * A store folder whose manifest is lost or unreadable: nothing opens it as a new store (that would write
 * over its files), `rlm repair` finds it even with no segment, and the memories of its journal, the only
 * copy of what was remembered since the last fold, survive the repair and the writes after it.
 */
import { promises as fs, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { acquireLock } from '../../../memory/files/lock.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { writeSampleCorpus } from '../helpers/corpus.ts';

const MANIFEST = 'rlm-store.json';

async function texts(dir: string): Promise<string[]> {
  const store = await ChunkStore.open(dir);
  const all = (await store.listMemories()).map((m) => m.text);
  await store.close();
  return all.sort();
}

describe('a store that lost its manifest', () => {
  it.each([
    ['deleted', (file: string) => fs.rm(file)],
    ['cut short', (file: string) => fs.truncate(file, 50)],
  ])('(%s) keeps the memories of its journal through repair and the writes after it', async (_, damage) => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestPaths([writeSampleCorpus(root)]);
    await store.remember({ text: 'we chose postgres for billing', topic: 'db' });
    await store.remember({ text: 'staging deploys on fridays are frozen', topic: 'ops' });
    await store.close();
    expect(readdirSync(dir).filter((n) => n.startsWith('memories-'))).toHaveLength(1);
    await damage(path.join(dir, MANIFEST));

    const err = await ChunkStore.open(dir, { create: true }).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain('rlm repair');

    const highest = Math.max(...readdirSync(dir).map((n) => Number(/-(\d+)\./.exec(n)?.[1] ?? 0)));
    const report = await repairStore(dir);
    const { generation } = JSON.parse(await fs.readFile(path.join(dir, MANIFEST), 'utf8')) as {
      generation: number;
    };
    expect(generation).toBeGreaterThan(highest);
    expect(report.actions.join('\n')).toMatch(/memories-\d+\.jsonl: read as the memory journal/);
    expect(report.actions.join('\n')).toContain('folded 2 journaled memories');
    expect(await texts(dir)).toEqual([
      'staging deploys on fridays are frozen',
      'we chose postgres for billing',
    ]);

    // Later commits name new files above every generation the folder held: none lands on a kept one.
    const after = await ChunkStore.open(dir);
    expect(after.stats().documents).toBe(6);
    for (const text of ['one more', 'and another', 'and a third']) await after.remember({ text });
    expect((await after.recall('postgres billing')).map((h) => h.text)).toContain(
      'we chose postgres for billing',
    );
    await after.close();
    expect(await texts(dir)).toHaveLength(5);
  });

  it('keeps what its newest documents and links files hold: folded memories stay memories, manual links stay', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.configureMemory({ foldEvery: 1 });
    const folded = await store.remember({
      text: 'billing runs on postgres',
      topic: 'db',
      importance: 'high',
    });
    await store.ingestPaths([writeSampleCorpus(root)]);
    const doc = store.documents().find((d) => d.memory === undefined)!;
    await store.link(`${doc.id}:0`, `${folded.id}:0`, 'supports');
    await store.configureMemory({ foldEvery: 1000 });
    await store.remember({ text: 'queues run on redis', topic: 'ops' });
    await store.close();
    await fs.rm(path.join(dir, MANIFEST));

    const report = await repairStore(dir);
    expect(report.actions.join('\n')).toMatch(/read documents-\d+\.json.*links-\d+\.json as the store's/);
    const after = await ChunkStore.open(dir);
    const memories = (await after.listMemories()).map((m) => [m.text, m.topic, m.importance]);
    expect(memories.sort()).toEqual([
      ['billing runs on postgres', 'db', 'high'],
      ['queues run on redis', 'ops', 'medium'],
    ]);
    expect((await after.neighbors(`${doc.id}:0`, 'supports')).map((l) => l.to)).toEqual([`${folded.id}:0`]);
    await after.close();
  });

  it('holding only memories, is found by repair and not made anew by a remember', async () => {
    const dir = path.join(tempDir(), 'notes');
    const store = await ChunkStore.open(dir, { create: true });
    await store.remember({ text: 'only memory zebra' });
    await store.close();
    await fs.rm(path.join(dir, MANIFEST));
    const before = readdirSync(dir).sort();

    const err = await ChunkStore.open(dir, { create: true }).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(before);

    await repairStore(dir);
    expect(await texts(dir)).toEqual(['only memory zebra']);
  });

  it('is not taken for one while a writer creating the store holds the lock; the creator checks again under it', async () => {
    const dir = tempDir();
    const lock = await acquireLock(dir, { command: 'another creator' });
    writeFileSync(path.join(dir, 'documents-00000001.json'), '{}');
    const reading = await ChunkStore.open(dir).catch((e: unknown) => e);
    expect(isRlmError(reading, 'STORE_MISSING'), String(reading)).toBe(true);
    const creating = ChunkStore.open(dir, { create: true, lockWaitMs: 10_000 }).catch((e: unknown) => e);
    // The other creator dies before writing its manifest: its files are a lost manifest's after all.
    await lock.release();
    expect(isRlmError(await creating, 'STORE_CORRUPT')).toBe(true);
    expect(await fs.readFile(path.join(dir, 'documents-00000001.json'), 'utf8')).toBe('{}');
  });

  it('is refused even when a file of its names is all the folder holds', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'documents-00000001.json'), 'mine');
    const err = await ChunkStore.open(dir, { create: true }).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain('documents-00000001.json');
    expect(await fs.readFile(path.join(dir, 'documents-00000001.json'), 'utf8')).toBe('mine');
  });

  it("is not what a folder is whose files only look like a store's (rlm writes eight digits)", async () => {
    const dir = tempDir();
    for (const name of ['links-2024.json', 'documents-3.json', 'memories-1.jsonl'])
      writeFileSync(path.join(dir, name), 'mine');
    const err = await repairStore(dir).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_MISSING')).toBe(true);
    const store = await ChunkStore.open(dir, { create: true });
    await store.remember({ text: 'a store beside them' });
    await store.close();
    expect(await texts(dir)).toEqual(['a store beside them']);
    for (const name of ['links-2024.json', 'documents-3.json', 'memories-1.jsonl'])
      expect(await fs.readFile(path.join(dir, name), 'utf8')).toBe('mine');
  });
});

describe('a damaged line in the memory journal', () => {
  it('stops writers before they fold it away, and repair drops its memory only when confirmed', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    const kept = [];
    for (const text of ['journal memory one', 'journal memory two', 'journal memory three'])
      kept.push(await store.remember({ text }));
    await store.close();
    const journal = readdirSync(dir).find((n) => n.startsWith('memories-'))!;
    const file = path.join(dir, journal);
    const lines = (await fs.readFile(file, 'utf8')).split('\n');
    lines[1] = lines[1]!.replace('"text"', '"texx"');
    await fs.writeFile(file, lines.join('\n'));

    // Readers go on with the rest; a write that would fold the journal refuses.
    const reading = await ChunkStore.open(dir);
    expect((await reading.listMemories()).map((m) => m.text).sort()).toEqual([
      'journal memory one',
      'journal memory three',
    ]);
    const err = await reading.forgetMemories([kept[0]!.id]).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT'), String(err)).toBe(true);
    expect((err as Error).message).toContain(
      `the memory journal ${journal} is corrupt: 1 line is not a memory`,
    );
    await reading.close();

    const asked: string[] = [];
    const refused = await repairStore(dir, {
      confirm: (dropped) => {
        asked.push(...dropped.map((d) => d.id));
        return false;
      },
    });
    expect(refused.applied).toBe(false);
    expect(asked).toEqual([kept[1]!.id]);
    expect(await fs.readFile(file, 'utf8')).toBe(lines.join('\n'));
    const done = await repairStore(dir, { confirm: () => true });
    expect(done.applied).toBe(true);
    expect(await texts(dir)).toEqual(['journal memory one', 'journal memory three']);
  });
});
