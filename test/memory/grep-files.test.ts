import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { ChunkStore } from '../../memory/store.ts';
import { tempDir } from './helpers/corpus.ts';

describe('store grep over chunk files', () => {
  it('reports matches in document path order across segments, honours limit, document and context', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    // Written in reverse path order, one segment each, then one replaced: segment order ≠ path order.
    await store.ingestText('c-doc', 'gamma needle 3\nplain\n', { path: '/p/c.md' });
    await store.ingestText('b-doc', 'beta needle 2\n', { path: '/p/b.md' });
    await store.ingestText('a-doc', 'alpha needle 1\nalpha needle 1b\n', { path: '/p/a.md' });
    await store.ingestText('b-doc', 'beta needle 2 (new)\n', { path: '/p/b.md' });
    const all = await store.grep('needle \\d');
    expect(all.matches.map((m) => m.text)).toEqual([
      'alpha needle 1',
      'alpha needle 1b',
      'beta needle 2 (new)',
      'gamma needle 3',
    ]);
    expect(all.truncated).toBe(false);
    const two = await store.grep('needle', { limit: 2, literal: true });
    expect(two.matches.map((m) => m.id)).toEqual(['a-doc:0', 'a-doc:0']);
    expect(two.truncated).toBe(true);
    const onlyC = await store.grep('NEEDLE', {
      ignoreCase: true,
      literal: true,
      document: 'c-doc',
      context: 4,
    });
    expect(onlyC.matches).toEqual([
      { id: 'c-doc:0', offset: 6, text: 'gamma needle 3', before: '', after: '\npla' },
    ]);
    await store.close();
  });

  it('stops a catastrophic regex with TIMEOUT and stays usable', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestText('evil', `${'a'.repeat(40)}b\n`);
    const err = await store.grep('(a+)+$', { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(isRlmError(err, 'TIMEOUT')).toBe(true);
    expect((await store.grep('b$')).matches).toHaveLength(1);
    await store.close();
  });
});
