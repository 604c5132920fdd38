import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';

const CODE = 'export function rotate() {\n  const refreshToken = await fetchNewRefreshToken(session);\n}\n';

async function bm25Files(dir: string): Promise<string[]> {
  const segs = path.join(dir, 'segments');
  return (await fs.readdir(segs)).filter((f) => f.endsWith('.bm25.json')).map((f) => path.join(segs, f));
}

describe('identifier parts in a store', () => {
  it('finds camelCase code for a prose query; an index from before still opens, searches, and repair upgrades it', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestText('auth-ts', CODE);
    await store.ingestText('prose', 'The weather was fine and the river was calm.');
    expect((await store.search('refresh token')).map((h) => h.id)).toEqual(['auth-ts:0']);
    await store.close();

    // Segments as analyzer 1 wrote them: no `analyzer` field.
    for (const file of await bm25Files(dir)) {
      const seg = JSON.parse(await fs.readFile(file, 'utf8'));
      expect(seg.analyzer).toBe(2);
      delete seg.analyzer;
      await fs.writeFile(file, JSON.stringify(seg));
    }
    const old = await ChunkStore.open(dir);
    expect((await old.search('refreshToken')).map((h) => h.id)).toEqual(['auth-ts:0']);
    await old.close();

    const report = await repairStore(dir);
    expect(report.documents).toBe(2);
    for (const file of await bm25Files(dir))
      expect(JSON.parse(await fs.readFile(file, 'utf8')).analyzer).toBe(2);
    const repaired = await ChunkStore.open(dir);
    expect((await repaired.search('refresh token')).map((h) => h.id)).toEqual(['auth-ts:0']);
    await repaired.close();
  });
});
