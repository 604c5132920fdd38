/**
 * grep's document-level behaviour, the same on every backend: a document is read as one text (a match
 * across a chunk edge, context reaching into the next chunk, overlapping chunks read once), count mode
 * per document in store order, and the document filter (ids, ingested paths, lists; unknown names
 * refused).
 */
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/errors.ts';
import { backends } from '../helpers/backends.ts';
import { noise } from '../helpers/corpus.ts';

describe.each(backends('grep conformance'))('grep over documents, %s store', (_name, backend) => {
  it('finds a match across a chunk edge, context across it, and reads overlapping chunks once', async () => {
    const store = await backend.open();
    const text = Array.from({ length: 1200 }, (_, i) => `line ${i} ERR-${String(i).padStart(4, '0')}`).join(
      '\n',
    );
    await store.ingestText('log', text, { chunker: 'size', chunkTokens: 400, overlapTokens: 100 });
    const chunks = await store.documentChunks('log');
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks[1]!.start).toBeLessThan(chunks[0]!.end);
    const all = await store.grep('ERR-\\d{4}', { limit: 10_000 });
    expect(all.matches).toHaveLength(1200);
    expect(new Set(all.matches.map((m) => m.documentOffset)).size).toBe(1200);
    for (const m of all.matches.slice(0, 50)) {
      const c = (await store.getChunk(m.id))!;
      expect(c.text.slice(m.offset, m.offset + 4)).toBe('ERR-');
      expect(m.documentOffset).toBe(c.start + m.offset);
    }
    const counted = await store.grep('ERR-\\d{4}', { count: true });
    expect(counted.counts).toEqual({
      matches: 1200,
      lines: 1200,
      documents: [{ id: 'log', matches: 1200, lines: 1200 }],
    });
    // A pattern spanning the end of chunk 0 and the start of the text after it.
    const edge = chunks[0]!.end;
    const across = text.slice(edge - 6, edge + 6);
    const hit = await store.grep(across, { literal: true, context: 40 });
    expect(hit.matches.map((m) => m.documentOffset)).toContain(edge - 6);
    const m = hit.matches.find((x) => x.documentOffset === edge - 6)!;
    // Its context comes from past the edge: text only the next chunk holds whole.
    expect(m.after.trim().length).toBeGreaterThan(20);
    expect(text.slice(edge, edge + 100)).toContain(m.after.trim());
  });

  it('finds a pattern whose literal straddles chunk edges, short or long, spanning one chunk whole', async () => {
    const store = await backend.open();
    // Text of random letters and digits cut into chunks mid-word, back to back (no overlap).
    const text = noise(7, 4000);
    await store.ingestText('noise', text, { chunker: 'size', chunkTokens: 60, overlapTokens: 0 });
    const chunks = await store.documentChunks('noise');
    expect(chunks[1]!.start).toBe(chunks[0]!.end);
    expect(chunks[1]!.end - chunks[1]!.start).toBeLessThan(150);
    const [e1, e2] = [chunks[0]!.end, chunks[1]!.end];
    const cases: [from: number, to: number][] = [
      [e1 - 1, e1 + 2], // 3 characters, the shortest literal the trigram index takes
      [e1 - 2, e1 + 2],
      [e1 - 10, e1 + 20], // longer than a seam's side, less of it before the edge
      [e1 - 20, e1 + 20],
      [e1 - 50, e1 + 10], // more before the edge than a seam holds
      [e1 - 10, e2 + 10], // across the whole second chunk
    ];
    for (const [from, to] of cases) {
      const literal = text.slice(from, to);
      // No chunk holds it whole: only reading across the edge finds it.
      expect(
        chunks.filter((c) => c.text.includes(literal)),
        literal,
      ).toEqual([]);
      const found = async (pattern: string, opts: { literal?: boolean; ignoreCase?: boolean }) =>
        (await store.grep(pattern, { ...opts, limit: 10_000 })).matches.map((m) => m.documentOffset);
      expect(await found(literal, { literal: true }), literal).toContain(from);
      expect(await found(`${literal}\\S*`, {}), literal).toContain(from);
      expect(await found(literal.toUpperCase(), { literal: true, ignoreCase: true }), literal).toContain(
        from,
      );
      const counted = await store.grep(literal, { literal: true, count: true });
      expect(counted.counts?.matches, literal).toBeGreaterThanOrEqual(1);
    }
  });

  it('finds what the regex finds whatever its escapes and case folding (no index may rule a match out)', async () => {
    const store = await backend.open();
    await store.ingestText('log', 'line one ERR-0042 here\n## Section 2\nthe οδος and the ſtar of Kelvin\n');
    const count = async (pattern: string, ignoreCase = false) =>
      (await store.grep(pattern, { count: true, ignoreCase })).counts?.matches;
    // Escapes whose bodies are not text: hex, unicode, octal and control.
    expect(await count('\\x45RR-00')).toBe(1);
    expect(await count('\\u0045RR-00')).toBe(1);
    expect(await count('\\105RR-00')).toBe(1);
    expect(await count('\\cJ## Section')).toBe(1);
    // Greek final sigma is σ to /i; with the u flag (a \\u{…} escape asks for it) ſ is s, K is k.
    expect(await count('ΟΔΟΣ', true)).toBe(1);
    expect(await count('\\u{3BF}ΔΟΣ and', true)).toBe(1);
    expect(await count('\\u{20}star of', true)).toBe(1);
    expect(await count('\\u{74}he οδος and the ſtar of kelvin', true)).toBe(1);
  });

  it('counts per document in store order, with no cap', async () => {
    const store = await backend.open();
    await store.ingestText('b-doc', 'x ERR-1 y ERR-2\nERR-3\n', { path: '/p/b.log' });
    await store.ingestText('a-doc', 'ERR-9\n', { path: '/p/a.log' });
    await store.ingestText('c-doc', 'clean\n', { path: '/p/c.log' });
    const res = await store.grep('ERR-\\d', { count: true });
    expect(res.counts).toEqual({
      matches: 4,
      lines: 3,
      documents: [
        { id: 'a-doc', matches: 1, lines: 1 },
        { id: 'b-doc', matches: 3, lines: 2 },
      ],
    });
  });

  it('filters by ids, ingested paths (every part of a file) and lists, and refuses an unknown name', async () => {
    const store = await backend.open();
    await store.ingestText('one', 'alpha hit\n', { path: '/data/one.txt' });
    await store.ingestText('two', 'beta hit\n', { path: '/data/two.txt' });
    await store.ingestText('two.p2', 'gamma hit\n', { path: '/data/two.txt' });
    const ids = async (document: string | string[]) =>
      (await store.grep('hit', { document })).matches.map((m) => m.id);
    expect(await ids('one')).toEqual(['one:0']);
    expect(await ids('/data/two.txt')).toEqual(['two:0', 'two.p2:0']);
    expect(await ids(['one', '/data/two.txt'])).toEqual(['one:0', 'two:0', 'two.p2:0']);
    expect((await store.grep('hit', { document: '/data/two.txt', count: true })).counts?.matches).toBe(2);
    const err = await caught(store.grep('hit', { document: ['one', '/data/tow.txt'] }));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toContain('"/data/tow.txt"');
  });
});
