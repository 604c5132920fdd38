/**
 * grep on a PostgreSQL store reads only the documents whose tokens contain each token of the pattern's
 * literal: that must keep every document holding the literal, wherever its chunks were cut (at line
 * and sentence ends, mid-word, back to back, overlapping, with gaps), since a document's tokens are
 * taken from its text as grep reads it, across chunk edges. No server.
 */
import { describe, expect, it } from 'vitest';
import { assemble } from '../../../memory/grep/grep-scan.ts';
import {
  documentGrams,
  type GramsChunk,
  gramsByDocument,
  grepChunkOf,
  literalTokens,
} from '../../../memory/postgres/grams.ts';
import { noise } from '../helpers/corpus.ts';

/** Chunks of `text` from `[start, end)` ranges, as a chunker would record them. */
function chunksOf(text: string, ranges: [number, number][]): GramsChunk[] {
  return ranges.map(([start, end], ordinal) => ({
    document: 'd',
    ordinal,
    start,
    end,
    text: text.slice(start, end),
  }));
}

/** Texts back to back, as chunks. */
function backToBack(texts: string[]): GramsChunk[] {
  const ranges: [number, number][] = [];
  let at = 0;
  for (const t of texts) {
    ranges.push([at, at + t.length]);
    at += t.length;
  }
  return chunksOf(texts.join(''), ranges);
}

/** Whether the test grep's index runs keeps a document: each literal token inside its tokens. */
function kept(chunks: GramsChunk[], literal: string, chunker = 'paragraph'): boolean {
  const grams = documentGrams(chunks, chunker);
  return literalTokens(literal).every((t) => grams.includes(t));
}

/** Whether every literal of the text grep reads (up to 40 characters) passes the narrowing test. */
function everyLiteralKept(chunks: GramsChunk[], chunker: string): boolean {
  const { text } = assemble(chunks.map((c) => grepChunkOf(c, chunker)));
  const grams = documentGrams(chunks, chunker);
  for (let from = 0; from < text.length; from++) {
    for (const length of [3, 4, 7, 15, 16, 17, 33, 40]) {
      if (from + length > text.length) continue;
      if (!literalTokens(text.slice(from, from + length)).every((t) => grams.includes(t))) return false;
    }
  }
  return true;
}

describe('document tokens for grep', () => {
  it('are the distinct runs between spaces, tabs and line ends, case and punctuation kept', () => {
    expect(documentGrams(backToBack(['The cat, the\tcat.\nThe ', 'cat.  x']), 'paragraph')).toBe(
      'The cat, the cat. x',
    );
    expect(literalTokens(' of the  end.')).toEqual(['of', 'the', 'end.']);
  });

  it('keep every document that holds a literal, for literals cut anywhere in its text', () => {
    const text =
      'Governments govern; the government of a county (its council) keeps records.\nERR-0042: disk full\tat 03:00';
    // Chunks cut at line and sentence ends, as the chunkers cut.
    const chunks = backToBack([
      'Governments govern; the government of a county (its council) keeps records.\n',
      'ERR-0042: disk full\tat 03:00',
    ]);
    for (let start = 0; start < text.length; start++) {
      for (let end = start + 1; end <= Math.min(text.length, start + 30); end++) {
        const literal = text.slice(start, end);
        expect(kept(chunks, literal), JSON.stringify(literal)).toBe(true);
      }
    }
  });

  const text = noise(11, 600);

  it('keep literals across chunks cut mid-word back to back, short chunks included', () => {
    const cuts = [0, 5, 9, 40, 41, 130, 300, 310, 600];
    const ranges = cuts.slice(1).map((end, i) => [cuts[i]!, end] as [number, number]);
    expect(everyLiteralKept(chunksOf(text, ranges), 'paragraph')).toBe(true);
  });

  it('keep literals across overlapping chunks and gaps (size and turn chunkers keep offsets)', () => {
    const overlapping: [number, number][] = [
      [0, 120],
      [100, 250],
      [240, 260],
      [245, 255], // inside the one before: read once
      [250, 420],
      [430, 600], // a gap: grep puts a line break between the two sides
    ];
    expect(everyLiteralKept(chunksOf(text, overlapping), 'size')).toBe(true);
    expect(everyLiteralKept(chunksOf(text, overlapping), 'turn')).toBe(true);
  });

  it('would miss a literal cut mid-word if taken chunk by chunk', () => {
    const chunks = chunksOf(text, [
      [0, 299],
      [299, 600],
    ]);
    // Position 299 is inside a word of seven (a space every eighth character).
    const across = text.slice(297, 301);
    expect(across).not.toContain(' ');
    expect(chunks.some((c) => c.text.includes(across))).toBe(false);
    const byChunk = chunks.map((c) => documentGrams([{ ...c, ordinal: 0 }], 'paragraph')).join(' ');
    expect(byChunk.includes(across)).toBe(false);
    expect(kept(chunks, across)).toBe(true);
  });

  it('leave out a document that lacks one of the literal tokens', () => {
    expect(kept(backToBack(['the council keeps records']), 'council keeps minutes')).toBe(false);
    expect(kept(backToBack(['the council keeps records']), 'Council')).toBe(false);
  });
});

describe('document tokens from chunk rows', () => {
  it('are taken per document from its rows in ordinal order, in the order the documents first appear', () => {
    const row = (document: string, ordinal: number, start: number, text: string, grams: string | null) => ({
      document,
      ordinal,
      start_at: start,
      end_at: start + text.length,
      text,
      chunker: 'paragraph',
      grams,
    });
    // Store order (a migration reads by sequence number) need not be ordinal order.
    const rows = [
      row('b', 1, 4, 'tern rises', 'stored b'),
      row('a', 0, 0, 'red kite', null),
      row('b', 0, 0, 'the ', 'stored b again'),
    ];
    const byDoc = gramsByDocument(rows);
    expect([...byDoc.keys()]).toEqual(['b', 'a']);
    expect(byDoc.get('b')!.grams).toBe('the tern rises');
    expect(byDoc.get('b')!.row).toBe(rows[0]);
    expect(byDoc.get('a')!.grams).toBe('red kite');
  });
});
