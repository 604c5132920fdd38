/** The JSON shapes built from store records (src/shapes.ts) that more than one surface prints. */
import { describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../memory/types.ts';
import { documentList } from '../src/shapes.ts';

const doc = (id: string, path: string | null, chunks: number, at: string): DocumentRecord =>
  ({ id, path, chunks, tokens: chunks * 100, ingestedAt: at }) as DocumentRecord;

describe('documentList (rlm ls --json)', () => {
  it('lists a file stored in parts once, with its parts counted and their totals', () => {
    const list = documentList([
      doc('log.p2', '/d/log', 3, '2026-01-01T00:00:02Z'),
      doc('log', '/d/log', 4, '2026-01-01T00:00:01Z'),
      doc('a', '/d/a.md', 1, '2026-01-01T00:00:00Z'),
      doc('log.p3', '/d/log', 2, '2026-01-01T00:00:01Z'),
      // A part whose first part is gone, and one after a gap, stand alone, as peek reads them.
      doc('gone.p2', '/d/gone', 1, '2026-01-01T00:00:00Z'),
      doc('log.p5', '/d/log', 1, '2026-01-01T00:00:00Z'),
      doc('mem-1', null, 1, '2026-01-01T00:00:00Z'),
    ]);
    expect(list.documents).toEqual([
      { id: 'a', path: '/d/a.md', chunks: 1, tokens: 100, modified: '2026-01-01T00:00:00Z' },
      { id: 'gone.p2', path: '/d/gone', chunks: 1, tokens: 100, modified: '2026-01-01T00:00:00Z' },
      { id: 'log', path: '/d/log', chunks: 9, tokens: 900, modified: '2026-01-01T00:00:02Z', parts: 3 },
      { id: 'log.p5', path: '/d/log', chunks: 1, tokens: 100, modified: '2026-01-01T00:00:00Z' },
      { id: 'mem-1', path: null, chunks: 1, tokens: 100, modified: '2026-01-01T00:00:00Z' },
    ]);
  });
});
