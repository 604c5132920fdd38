/**
 * grep on a PostgreSQL store reads only the documents whose tokens contain each token of the pattern's
 * literal: that must keep every document holding the literal, wherever its chunks were cut. No server.
 */
import { describe, expect, it } from 'vitest';
import { documentGrams, literalTokens } from '../../../memory/postgres/grams.ts';

/** Whether the test grep's index runs keeps a document: each literal token inside its tokens. */
function kept(chunks: string[], literal: string): boolean {
  const grams = documentGrams(chunks);
  return literalTokens(literal).every((t) => grams.includes(t));
}

describe('document tokens for grep', () => {
  it('are the distinct runs between spaces, tabs and line ends, case and punctuation kept', () => {
    expect(documentGrams(['The cat, the\tcat.\nThe', 'cat.  x'])).toBe('The cat, the cat. x');
    expect(literalTokens(' of the  end.')).toEqual(['of', 'the', 'end.']);
  });

  it('keep every document that holds a literal, for literals cut anywhere in its text', () => {
    const text =
      'Governments govern; the government of a county (its council) keeps records.\nERR-0042: disk full\tat 03:00';
    // Chunks cut at line and sentence ends, as the chunkers cut.
    const chunks = [
      'Governments govern; the government of a county (its council) keeps records.\n',
      'ERR-0042: disk full\tat 03:00',
    ];
    for (let start = 0; start < text.length; start++) {
      for (let end = start + 1; end <= Math.min(text.length, start + 30); end++) {
        const literal = text.slice(start, end);
        expect(kept(chunks, literal), JSON.stringify(literal)).toBe(true);
      }
    }
  });

  it('leave out a document that lacks one of the literal tokens', () => {
    expect(kept(['the council keeps records'], 'council keeps minutes')).toBe(false);
    expect(kept(['the council keeps records'], 'Council')).toBe(false);
  });
});
