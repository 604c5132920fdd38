/** The document filter of a search: names resolved to ids, a file in parts named whole, typos refused. */
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { searchDocumentIds } from '../../memory/read.ts';
import type { DocumentRecord } from '../../memory/types.ts';

/** A store whose files are `parts` (first part's id → every part's id) at `paths`, counting its lookups. */
const store = (parts: Record<string, string[]>, paths: Record<string, string> = {}) => {
  const lookups: string[] = [];
  return {
    lookups,
    documentsNamed: (name: string) => {
      lookups.push(name);
      const first = paths[name] ?? name;
      const owner = Object.entries(parts).find(([id, all]) => id === first || all.includes(first));
      if (!owner) return [];
      return (owner[0] === first ? owner[1] : [first]).map((id) => ({ id }) as DocumentRecord);
    },
  };
};

describe('searchDocumentIds', () => {
  const files = { big: ['big', 'big.p2', 'big.p3'], small: ['small'] };

  it('names every part of a file by its id or its path, and a part alone by its own id', async () => {
    const s = store(files, { '/data/big.log': 'big' });
    expect(await searchDocumentIds(s, ['big'])).toEqual(['big', 'big.p2', 'big.p3']);
    expect(await searchDocumentIds(s, ['data/big.log'], (n) => `/${n}`)).toEqual(['big', 'big.p2', 'big.p3']);
    expect(await searchDocumentIds(s, ['big.p2', 'small'])).toEqual(['big.p2', 'small']);
  });

  it('looks a file up once: ids it returned resolve again in one lookup per file', async () => {
    const s = store(files);
    const ids = await searchDocumentIds(s, ['big', 'small']);
    s.lookups.length = 0;
    expect(await searchDocumentIds(s, ids, (n) => `/cwd/${n}`)).toEqual(ids);
    expect(s.lookups).toEqual(['big', 'small']);
  });

  it('refuses a name that matches no document, as given or resolved', async () => {
    const s = store(files);
    const err = await searchDocumentIds(s, ['small', 'nope'], (n) => `/cwd/${n}`).catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toContain('no document "nope" in the store');
    expect(s.lookups).toEqual(['small', 'nope', '/cwd/nope']);
  });
});
