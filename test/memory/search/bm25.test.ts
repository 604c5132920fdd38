import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { Analyzer } from '../../../memory/search/analyzer.ts';
import {
  BM25_K1,
  Bm25Index,
  type Bm25Segment,
  buildSegment,
  FUZZY_WEIGHT,
} from '../../../memory/search/bm25.ts';

type Doc = { id: string; text: string };

function indexOf(...segments: Doc[][]): Bm25Index {
  const index = new Bm25Index();
  segments.forEach((docs, i) => {
    index.addSegment(`s${i}`, buildSegment(docs));
  });
  return index;
}

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
const scoreOf = (hits: { id: string; score: number }[], id: string) =>
  hits.find((h) => h.id === id)?.score ?? 0;

/** `n` filler words that no query uses, so chunk lengths can be set independently of the terms tested. */
const filler = (n: number) => Array.from({ length: n }, () => 'lorem').join(' ');

/** A seeded corpus of word salad with some shared and some rare words. */
function corpus(n: number): Doc[] {
  const words =
    'alpha beta gamma delta epsilon zeta theta iota kappa lambda omicron sigma tau upsilon omega'.split(' ');
  let seed = 7;
  const rand = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  return Array.from({ length: n }, (_, i) => {
    const len = 5 + Math.floor(rand() * 30);
    const text = Array.from({ length: len }, () => words[Math.floor(rand() * rand() * words.length)]).join(
      ' ',
    );
    return { id: `c${i}`, text };
  });
}

describe('BM25 ranking', () => {
  const docs: Doc[] = [
    { id: 'cat-mat', text: 'The cat sat on the mat' },
    { id: 'dog-cat', text: 'The dog chased the cat around the garden' },
    { id: 'zebra', text: 'A zebra crossed the road near the cat' },
    { id: 'cat-dog', text: 'The cat and the dog' },
  ];

  it('ranks first the chunk holding the rare query term', () => {
    const hits = indexOf(docs).search('zebra cat', { k: 10 });
    expect(hits[0]!.id).toBe('zebra');
    expect(hits).toHaveLength(4);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
  });

  it('returns nothing for terms absent from every chunk', () => {
    expect(indexOf(docs).search('quantum', { k: 5, fuzzy: false })).toEqual([]);
    expect(indexOf(docs).search('', { k: 5 })).toEqual([]);
  });

  it('saturates term frequency: more occurrences help less and less', () => {
    const index = indexOf([
      { id: 'tf1', text: `apple ${filler(19)}` },
      { id: 'tf2', text: `apple apple ${filler(18)}` },
      { id: 'tf20', text: Array(20).fill('apple').join(' ') },
      { id: 'none', text: filler(20) },
    ]);
    const hits = index.search('apple', { k: 10 });
    expect(ids(hits)).toEqual(['tf20', 'tf2', 'tf1']);
    const [s1, s2, s20] = [scoreOf(hits, 'tf1'), scoreOf(hits, 'tf2'), scoreOf(hits, 'tf20')];
    expect(s2 - s1).toBeGreaterThan((s20 - s2) / 18);
    expect(s20).toBeLessThan(s1 * (BM25_K1 + 1));
  });

  it('normalises by length: the same match counts more in a shorter chunk', () => {
    const index = indexOf([
      { id: 'long', text: `apple ${filler(60)}` },
      { id: 'short', text: 'apple pie' },
      { id: 'other', text: filler(10) },
    ]);
    expect(ids(index.search('apple', { k: 10 }))).toEqual(['short', 'long']);
  });

  it('returns the k best, best first, with a stable order for equal scores', () => {
    const index = indexOf(Array.from({ length: 30 }, (_, i) => ({ id: `same${i}`, text: 'kiwi fruit' })));
    expect(ids(index.search('kiwi', { k: 3 }))).toEqual(['same0', 'same1', 'same2']);
    expect(index.search('kiwi', { k: 0 })).toEqual([]);
    expect(index.search('kiwi', { k: Number.MAX_SAFE_INTEGER })).toHaveLength(30);
  });

  it('finds French chunks with a French query and English ones with an English query', () => {
    const index = indexOf([
      { id: 'fr', text: 'Les chevaux courent dans la prairie depuis le matin.' },
      { id: 'en', text: 'The horses are running in the meadow since the morning.' },
    ]);
    expect(ids(index.search('cheval', { k: 5 }))).toEqual(['fr']);
    expect(ids(index.search('les chevaux', { k: 5 }))).toEqual(['fr']);
    expect(ids(index.search('horse running', { k: 5 }))).toEqual(['en']);
  });

  it('rejects a bad k', () => {
    const index = indexOf(docs);
    for (const k of [-1, 1.5, Number.NaN]) {
      expect(() => index.search('cat', { k })).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }));
    }
  });
});

describe('segments', () => {
  const all = corpus(60);
  const queries = ['alpha', 'omega sigma', 'theta kappa lambda', 'upsilon', 'beta beta gamma'];

  it('give the same ranking and scores split in segments as in one', () => {
    const one = indexOf(all);
    const two = indexOf(all.slice(0, 25), all.slice(25));
    const three = indexOf(all.slice(0, 10), all.slice(10, 40), all.slice(40));
    for (const q of queries) {
      const expected = one.search(q, { k: 15 });
      expect(expected.length).toBeGreaterThan(0);
      expect(two.search(q, { k: 15 })).toEqual(expected);
      expect(three.search(q, { k: 15 })).toEqual(expected);
    }
    expect(three.chunkCount).toBe(60);
    expect(three.vocabularySize).toBe(one.vocabularySize);
    expect(three.idf('alpha')).toBe(one.idf('alpha'));
  });

  it('search the same after a JSON round trip', () => {
    const seg = buildSegment(all);
    const copy = JSON.parse(JSON.stringify(seg)) as Bm25Segment;
    const a = new Bm25Index();
    a.addSegment('x', seg);
    const b = new Bm25Index();
    b.addSegment('x', copy);
    for (const q of queries) expect(b.search(q, { k: 20 })).toEqual(a.search(q, { k: 20 }));
  });

  it('drop out of results and statistics when removed, and replace by name', () => {
    const index = indexOf([{ id: 'a', text: 'unique marmalade' }], [{ id: 'b', text: 'marmalade toast' }]);
    expect(ids(index.search('marmalade', { k: 5 })).sort()).toEqual(['a', 'b']);
    expect(index.removeSegment('s0')).toBe(true);
    expect(index.removeSegment('s0')).toBe(false);
    expect(ids(index.search('marmalade', { k: 5 }))).toEqual(['b']);
    expect(index.df('marmalad')).toBe(1);
    index.addSegment('s1', buildSegment([{ id: 'c', text: 'jam' }]));
    expect(index.search('marmalade', { k: 5 })).toEqual([]);
    expect(index.segmentNames).toEqual(['s1']);
  });

  it('build identically when the analyzer memo is cleared in the middle of a build', () => {
    const tiny = new Analyzer({ cacheSize: 16 });
    expect(buildSegment(all, tiny)).toEqual(buildSegment(all, new Analyzer()));
  });

  it('refuses damaged segment data with STORE_CORRUPT', () => {
    const index = new Bm25Index();
    const good = buildSegment(all.slice(0, 3));
    const bad: unknown[] = [
      null,
      {},
      { ...good, version: 2 },
      { ...good, lengths: [1] },
      { ...good, terms: {} },
    ];
    for (const seg of bad) {
      let error: unknown;
      try {
        index.addSegment('bad', seg as Bm25Segment);
      } catch (e) {
        error = e;
      }
      expect(isRlmError(error, 'STORE_CORRUPT')).toBe(true);
    }
    expect(index.chunkCount).toBe(0);
  });
});

describe('tombstones and filters', () => {
  const docs: Doc[] = [
    { id: 'a', text: 'orange juice' },
    { id: 'b', text: 'orange marmalade' },
    { id: 'c', text: 'orange orange orange' },
    { id: 'd', text: 'apple juice' },
  ];

  it('excludes deleted chunks until the tombstones are lifted', () => {
    const index = indexOf(docs.slice(0, 2), docs.slice(2));
    index.setDeleted(new Set(['c', 'nope']));
    expect(ids(index.search('orange', { k: 10 })).sort()).toEqual(['a', 'b']);
    expect(index.chunkCount).toBe(3);
    // Tombstoned chunks still count in df until compaction.
    expect(index.df('orang')).toBe(3);
    index.addSegment('late', buildSegment([{ id: 'e', text: 'orange soda' }]));
    index.setDeleted(new Set(['e']));
    expect(ids(index.search('orange', { k: 10 }))).toContain('c');
    expect(ids(index.search('orange', { k: 10 }))).not.toContain('e');
    index.setDeleted(new Set());
    expect(index.search('orange', { k: 10 })).toHaveLength(4);
  });

  it('applies tombstones to segments added later', () => {
    const index = new Bm25Index();
    index.setDeleted(new Set(['a']));
    index.addSegment('s', buildSegment(docs));
    expect(ids(index.search('juice', { k: 10 }))).toEqual(['d']);
  });

  it('respects the filter and still fills k from the rest', () => {
    const index = indexOf(docs);
    const seen: string[] = [];
    const hits = index.search('orange juice', {
      k: 2,
      filter: (id) => {
        seen.push(id);
        return id !== 'a';
      },
    });
    expect(hits).toHaveLength(2);
    expect(ids(hits)).not.toContain('a');
    expect(seen).toContain('a');
    expect(index.search('orange', { k: 5, filter: () => false })).toEqual([]);
  });
});

describe('fuzzy matching', () => {
  const docs: Doc[] = [
    { id: 'search', text: 'A search engine indexes documents' },
    { id: 'receive', text: 'You will receive a package tomorrow' },
    { id: 'starch', text: 'Potato starch thickens the sauce' },
    { id: 'other', text: 'Nothing related here at all, just a cat' },
  ];
  const index = indexOf(docs);

  it('finds a word from a transposed spelling', () => {
    expect(ids(index.search('serach', { k: 5 }))[0]).toBe('search');
    expect(ids(index.search('recieve', { k: 5 }))).toEqual(['receive']);
    expect(ids(index.search('pakage', { k: 5 }))).toEqual(['receive']);
  });

  it('weights a fuzzy match below the exact one', () => {
    const exact = index.search('search', { k: 1 })[0]!.score;
    const fuzzy = index.search('serach', { k: 1 })[0]!.score;
    expect(fuzzy).toBeCloseTo(exact * FUZZY_WEIGHT, 10);
  });

  it('does not fuzz terms the index knows', () => {
    expect(ids(index.search('search', { k: 5 }))).toEqual(['search']);
    expect(ids(index.search('starch', { k: 5 }))).toEqual(['starch']);
  });

  it('can be switched off, and leaves short words alone', () => {
    expect(index.search('serach', { k: 5, fuzzy: false })).toEqual([]);
    expect(ids(index.search('cat', { k: 5 }))).toEqual(['other']);
    expect(index.search('cta', { k: 5 })).toEqual([]);
  });

  it('allows two edits for long words', () => {
    const long = indexOf([
      { id: 'doc', text: 'documentation matters' },
      { id: 'x', text: 'other words' },
    ]);
    // "dokumnetation" stems to "dokumnet": a substitution and a swap away from "document".
    expect(ids(long.search('dokumnetation', { k: 5 }))).toEqual(['doc']);
    expect(long.search('dokumnetation', { k: 5 })[0]!.score).toBeCloseTo(
      long.search('documentation', { k: 5 })[0]!.score * FUZZY_WEIGHT ** 2,
      10,
    );
  });
});

describe('topTerms', () => {
  const docs: Doc[] = [
    { id: 'a', text: 'The kernel scheduler picks threads; the scheduler runs often.' },
    { id: 'b', text: 'Threads share memory with other threads.' },
    { id: 'c', text: 'Memory allocation and memory pages.' },
    { id: 'd', text: 'Threads wait on locks.' },
  ];

  it('ranks a text’s terms by tf·idf and skips unknown terms', () => {
    const index = indexOf(docs);
    const top = index.topTerms('The scheduler runs threads, the scheduler rules. Zanzibar!', 3);
    expect(top[0]).toBe('schedul');
    expect(top).toContain('run');
    expect(top).not.toContain('zanzibar');
    expect(top).toHaveLength(3);
    expect(index.topTerms('zanzibar quux', 5)).toEqual([]);
  });

  it('leads back to the chunk it came from through searchTerms', () => {
    const index = indexOf(docs);
    expect(index.searchTerms(index.topTerms(docs[2]!.text, 3), { k: 1 })[0]!.id).toBe('c');
  });

  it('gives per chunk of a segment the same terms as topTerms on its text', () => {
    const index = indexOf(docs.slice(0, 2), docs.slice(2));
    const fromSegment = index.segmentTopTerms('s1', 4);
    expect(fromSegment).toEqual(docs.slice(2).map((d) => index.topTerms(d.text, 4)));
    expect(() => index.segmentTopTerms('missing', 4)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });

  it('agrees with topTerms on a corpus full of tied scores', () => {
    const docs = corpus(40);
    const index = indexOf(docs.slice(0, 15), docs.slice(15));
    for (const n of [1, 3, 6]) {
      expect(index.segmentTopTerms('s1', n)).toEqual(docs.slice(15).map((d) => index.topTerms(d.text, n)));
    }
    expect(index.segmentTopTerms('s1', 0).every((t) => t.length === 0)).toBe(true);
  });

  it('has an idf that falls as df rises', () => {
    const index = indexOf(docs);
    expect(index.idf('thread')).toBeLessThan(index.idf('kernel'));
    expect(index.idf('kernel')).toBeGreaterThan(0);
  });
});
