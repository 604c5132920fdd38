/**
 * `rlm repair` keeps the manual links whose two ends name chunks the store holds and drops the others,
 * which count in `stats` but which no reader lists (an id an older rlm stored as given, `DOC:1.0`).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { writeSampleCorpus } from '../helpers/corpus.ts';

describe('repair of manual links', () => {
  it('drops links whose ends name no chunk and keeps the rest', async () => {
    const root = tempDir();
    const dir = path.join(root, 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestPaths([writeSampleCorpus(root)]);
    const [a, b] = store.documents();
    await store.link(`${a!.id}:0`, `${b!.id}:0`, 'supports');
    await store.close();
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'rlm-store.json'), 'utf8')) as {
      links: string;
    };
    const file = path.join(dir, manifest.links);
    const links = JSON.parse(await fs.readFile(file, 'utf8')) as { links: object[] };
    const bad = [`${a!.id}:0.0`, `${a!.id}:${a!.chunks}`, 'gone-doc:0'];
    for (const from of bad) links.links.push({ from, to: `${b!.id}:0`, type: 'contradicts', strength: 1 });
    await fs.writeFile(file, JSON.stringify(links));
    const before = await ChunkStore.open(dir);
    const counted = before.stats().links;
    await before.close();

    const report = await repairStore(dir);
    expect(report.actions).toContain('dropped 3 manual links whose ends name no chunk of the store');
    const after = await ChunkStore.open(dir);
    expect(after.stats().links).toBe(counted - 3);
    expect((await after.neighbors(`${a!.id}:0`, 'supports')).map((l) => l.to)).toEqual([`${b!.id}:0`]);
    await after.close();
  });
});
