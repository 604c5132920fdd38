/**
 * Store paths that cannot hold a store are refused with one clear error before anything is made: under
 * a file, in /proc, /sys or /dev (where Node's recursive mkdir would spin for ever), or in a folder the
 * user may not write.
 */
import { promises, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

async function refusal(run: () => Promise<unknown>): Promise<Error> {
  const err = await run().then(
    () => new Error('no error'),
    (e: unknown) => e as Error,
  );
  return err;
}

describe('a store path that cannot be a store', () => {
  it('under a file is BAD_INPUT naming the file, for opening, creating and repairing', async () => {
    const root = tempDir();
    const file = path.join(root, 'afile');
    writeFileSync(file, 'x');
    const dir = path.join(file, 'sub', 'store');
    for (const run of [
      () => ChunkStore.open(dir),
      () => ChunkStore.open(dir, { create: true }),
      () => repairStore(dir),
    ]) {
      const err = await refusal(run);
      expect(isRlmError(err, 'BAD_INPUT'), String(err)).toBe(true);
      expect(err.message).toBe(`store path ${dir} lies under ${file}, which is a file`);
    }
  });

  it('in /proc, /sys or /dev is BAD_INPUT, and returns', async () => {
    for (const dir of [
      '/proc/rlm-test-store',
      '/proc/self/rlm-test-store',
      '/sys/rlm-test-store',
      '/dev/rlm-test',
    ])
      expect((await refusal(() => ChunkStore.open(dir, { create: true }))).message).toBe(
        `store path ${dir} is in /proc, /sys or /dev, where no store can be`,
      );
  });

  it('in /dev/shm is a store like any other', async () => {
    const dir = path.join('/dev/shm', `rlm-test-${process.pid}`, 'store');
    onTestFinished(() => rmSync(path.dirname(dir), { recursive: true, force: true }));
    const store = await ChunkStore.open(dir, { create: true });
    await store.remember({ text: 'kept in memory-backed files' });
    await store.close();
  });

  it('in a folder the user may not write is ACCESS_DENIED', async () => {
    const dir = path.join(tempDir(), 'locked', 'store');
    vi.spyOn(promises, 'mkdir').mockRejectedValue(
      Object.assign(new Error(`EACCES: permission denied, mkdir '${dir}'`), { code: 'EACCES' }),
    );
    const err = await refusal(() => ChunkStore.open(dir, { create: true }));
    expect(isRlmError(err, 'ACCESS_DENIED'), String(err)).toBe(true);
    expect(err.message).toBe(`cannot make the store folder ${dir} (EACCES)`);
  });
});
