/** The document filter of a search: names resolved to ids, a file in parts named whole, typos refused. */
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { searchDocumentIds } from '../../memory/read.ts';
import type { DocumentRecord } from '../../memory/types.ts';

const store = (ids: string[], paths: Record<string, string> = {}) => ({
  findDocument: (name: string) => {
    const id = ids.includes(name) ? name : paths[name];
    return id === undefined ? undefined : ({ id } as DocumentRecord);
  },
});

describe('searchDocumentIds', () => {
  it('names every part of a file stored in parts, by its id or its path, and a part alone by its own id', async () => {
    const s = store(['big', 'big.p2', 'big.p3', 'small', 'other.p2'], { '/data/big.log': 'big' });
    expect(await searchDocumentIds(s, ['big'])).toEqual(['big', 'big.p2', 'big.p3']);
    expect(await searchDocumentIds(s, ['data/big.log'], (n) => `/${n}`)).toEqual(['big', 'big.p2', 'big.p3']);
    expect(await searchDocumentIds(s, ['big.p2', 'small'])).toEqual(['big.p2', 'small']);
  });

  it('refuses a name that matches no document', async () => {
    const err = await searchDocumentIds(store(['a']), ['a', 'nope']).catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toContain('no document "nope" in the store');
  });
});
