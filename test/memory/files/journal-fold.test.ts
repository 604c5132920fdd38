/** The memory journal is folded by its bytes as well as its lines: every open reads all of it. */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOURNAL_FOLD_BYTES } from '../../../memory/engine/memories.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';

describe('the memory journal', () => {
  it('is folded once it holds JOURNAL_FOLD_BYTES, however few memories that is', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    const big = (i: number) => `memory ${i} ${'a long note about the harbour ledger '.repeat(25_000)}`;
    const n = Math.ceil(JOURNAL_FOLD_BYTES / big(0).length) + 1;
    for (let i = 0; i < n; i++) await store.remember({ text: big(i) });
    await store.close();
    const journal = readdirSync(dir).find((f) => f.startsWith('memories-'));
    const bytes = journal === undefined ? 0 : statSync(path.join(dir, journal)).size;
    expect(bytes).toBeLessThan(JOURNAL_FOLD_BYTES);
    expect(readdirSync(path.join(dir, 'segments')).some((f) => f.endsWith('.chunks'))).toBe(true);
    const reopened = await ChunkStore.open(dir);
    expect((await reopened.listMemories()).length).toBe(n);
    await reopened.close();
  });
});
