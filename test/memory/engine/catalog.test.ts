import { describe, expect, it } from 'vitest';
import { DocumentCatalog } from '../../../memory/engine/catalog.ts';
import type { DocumentRecord } from '../../../memory/types.ts';

function record(id: string, n: number, extra: Partial<DocumentRecord> = {}): DocumentRecord {
  return {
    id,
    path: `/docs/${id}.md`,
    hash: n.toString(16).padStart(64, '0'),
    bytes: 100 + n,
    chars: 100 + n,
    chunker: 'markdown',
    chunks: 1 + (n % 7),
    tokens: 20 + n,
    ingestedAt: new Date(1_700_000_000_000 + n).toISOString(),
    segment: `seg-${String(1 + (n % 13)).padStart(6, '0')}`,
    first: n % 101,
    ...extra,
  };
}

/** A small deterministic generator, so a failing sequence can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function expectSame(catalog: DocumentCatalog, model: Map<string, DocumentRecord>): void {
  expect(catalog.size).toBe(model.size);
  expect(new Map(catalog)).toEqual(model);
  for (const [id, doc] of model) {
    expect(catalog.has(id)).toBe(true);
    expect(catalog.get(id)).toEqual(doc);
    expect(catalog.place(id)).toEqual({ segment: doc.segment, first: doc.first, chunks: doc.chunks });
    expect(catalog.segmentOf(id)).toBe(doc.segment);
  }
  expect(catalog.segments()).toEqual(new Set([...model.values()].map((d) => d.segment)));
}

describe('DocumentCatalog', () => {
  it('answers as a map does through thousands of sets and deletes, across folds into packed records', () => {
    const next = rng(7);
    const model = new Map<string, DocumentRecord>();
    let catalog = new DocumentCatalog();
    let n = 0;
    for (let step = 0; step < 12; step++) {
      catalog = catalog.copy(true);
      // Enough changes per step that copies fold the recent records more than once.
      for (let i = 0; i < 900; i++) {
        const roll = next();
        // Ids of one byte a code unit, and of two: a wide character, a lone surrogate.
        const suffix = roll < 0.02 ? '日' : roll < 0.035 ? '\ud800' : roll < 0.05 ? 'é' : '';
        const id = `doc-${Math.floor(next() * 3000)}${suffix}`;
        if (roll < 0.2) {
          expect(catalog.delete(id)).toBe(model.delete(id));
        } else {
          const doc = record(id, n++, roll > 0.95 ? { tags: ['x'], notes: ['a "quoted" note'] } : {});
          catalog.set(id, doc);
          model.set(id, doc);
        }
      }
      expectSame(catalog, model);
    }
    expect(catalog.get('missing')).toBeUndefined();
    expect(catalog.has('missing')).toBe(false);
    expect(catalog.delete('missing')).toBe(false);
  });

  it('leaves a catalog as it was when its copy changes', () => {
    const docs = Array.from({ length: 3000 }, (_, i) => record(`d${i}`, i));
    const before = new DocumentCatalog(docs);
    const copy = before.copy(true);
    copy.delete('d1');
    copy.set('d2', record('d2', 9999));
    copy.set('new', record('new', 1));
    expect(before.size).toBe(3000);
    expect(before.get('d1')).toEqual(docs[1]);
    expect(before.get('d2')).toEqual(docs[2]);
    expect(before.has('new')).toBe(false);
    expect(copy.size).toBe(3000);
  });

  it('tells the records set and the ids removed since an earlier state, folded or not', () => {
    const first = new DocumentCatalog(Array.from({ length: 100 }, (_, i) => record(`d${i}`, i)));
    const second = first.copy(true);
    second.set('d5', record('d5', 500));
    second.delete('d6');
    second.set('n1', record('n1', 1));
    expect(second.changesSince(first)).toEqual({ put: [record('d5', 500), record('n1', 1)], remove: ['d6'] });
    expect(second.changesSince(second)).toEqual({ put: [], remove: [] });

    // Past the fold: thousands of recent records become packed ones, and the answer is the same kind.
    let later = second.copy(true);
    for (let i = 0; i < 5000; i++) later.set(`m${i}`, record(`m${i}`, i));
    later = later.copy(true);
    later.delete('n1');
    const changes = later.changesSince(second);
    expect(changes.remove).toEqual(['n1']);
    expect(changes.put.map((d) => d.id).sort()).toEqual(
      Array.from({ length: 5000 }, (_, i) => `m${i}`).sort(),
    );

    // A record set again to an equal value still counts as set (a commit writes it).
    const again = later.copy(true);
    again.set('d0', later.get('d0')!);
    expect(again.changesSince(later).put.map((d) => d.id)).toEqual(['d0']);
  });

  it('writes replaced records anew once most packed bytes are dead, and reads the same', () => {
    const model = new Map<string, DocumentRecord>();
    let catalog = new DocumentCatalog();
    // 40 rounds of replacing the same 2,500 records: each fold leaves the last round's bytes dead.
    for (let round = 0; round < 40; round++) {
      catalog = catalog.copy(true);
      for (let i = 0; i < 2500; i++) {
        const doc = record(`d${i}`, round * 2500 + i);
        catalog.set(doc.id, doc);
        model.set(doc.id, doc);
      }
    }
    catalog = catalog.copy(true);
    expectSame(catalog, model);
    // Without repacking, the arenas would hold all 100,000 versions (about 8 MB); the live ones are 0.2 MB.
    const arenas = (catalog as unknown as { base: { arenas: { written: number } } }).base.arenas;
    expect(arenas.written).toBeLessThan(3 * 1024 * 1024);
  });

  it('packs the recent records of a catalog once however many copies are taken of it', () => {
    // Packed once first, so that later folds write into the arenas this catalog shares.
    const catalog = new DocumentCatalog(Array.from({ length: 3000 }, (_, i) => record(`p${i}`, i))).copy(
      true,
    );
    for (let i = 0; i < 3000; i++) catalog.set(`d${i}`, record(`d${i}`, i));
    const written = () =>
      (catalog as unknown as { base: { arenas: { written: number } } }).base.arenas.written;
    const packed = written();
    const one = catalog.copy(true);
    const after = written();
    expect(after).toBeGreaterThan(packed + 3000 * 40);
    const two = catalog.copy(true);
    expect(written()).toBe(after);
    expect(new Map(two)).toEqual(new Map(one));
  });

  it('packs nothing for a copy that does not ask to: a view of a state for readers', () => {
    const docs = Array.from({ length: 3000 }, (_, i) => record(`d${i}`, i));
    const view = new DocumentCatalog(docs).copy();
    view.set('x', record('x', 1));
    const base = (view as unknown as { base: { size: number; arenas: { written: number } } }).base;
    expect(base.size).toBe(0);
    expect(base.arenas.written).toBe(0);
    expect(view.get('d7')).toBe(docs[7]);
  });

  it('keeps the last of two records with one id given at construction', () => {
    const catalog = new DocumentCatalog([record('a', 1), record('b', 2), record('a', 3)]);
    expect(catalog.size).toBe(2);
    expect(catalog.get('a')).toEqual(record('a', 3));
    expect([...catalog.keys()]).toEqual(['a', 'b']);
  });
});
