import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { DirectoryPersistence } from '../../../memory/files/directory.ts';
import type { Manifest } from '../../../memory/files/manifest.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';

/** A reader that saw the manifest of `stale` first, as a process does when a writer commits just after. */
class LateReader extends DirectoryPersistence {
  private readonly stale: Manifest;
  private staleReads: number;
  constructor(dir: string, stale: Manifest, staleReads: number) {
    super(dir);
    this.stale = stale;
    this.staleReads = staleReads;
  }
  override async readManifest(): Promise<Manifest> {
    if (this.staleReads > 0) {
      this.staleReads--;
      return this.stale;
    }
    return super.readManifest();
  }
}

async function storeWithTwoGenerations(): Promise<{ dir: string; old: Manifest }> {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'a.md'), '# A\n\nThe first document.\n');
  const store = await ChunkStore.open(path.join(dir, 'store'), { create: true, env: {} });
  await store.ingestPaths([path.join(dir, 'a.md')]);
  const old = await new DirectoryPersistence(path.join(dir, 'store')).readManifest();
  writeFileSync(path.join(dir, 'b.md'), '# B\n\nThe second document.\n');
  // This commit deletes the generation files `old` names.
  await store.ingestPaths([path.join(dir, 'b.md')]);
  await store.close();
  return { dir: path.join(dir, 'store'), old };
}

describe('DirectoryPersistence.readState without the lock', () => {
  it('reads the newer generation when a writer removed the files of the manifest it had just read', async () => {
    const { dir, old } = await storeWithTwoGenerations();
    const state = await new LateReader(dir, old, 1).readState();
    expect(state.generation).toBeGreaterThan(old.generation);
    expect(state.documents.size).toBe(2);
  });

  it('still reports STORE_CORRUPT when a file is missing under a manifest that does not move on', async () => {
    const { dir, old } = await storeWithTwoGenerations();
    const err = await new LateReader(dir, old, 1_000).readState().catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain('file is missing');
  });
});
