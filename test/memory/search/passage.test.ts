import { describe, expect, it } from 'vitest';
import { highlight, matchingWords, passage, queryTerms } from '../../../memory/search/passage.ts';

describe('passages', () => {
  it('finds words by their terms: plurals, stems and camelCase parts', () => {
    const text = 'Tokens are refreshed; see refreshToken() and the TOKEN table.';
    const words = matchingWords(text, queryTerms('refresh token')).map((m) => text.slice(m.start, m.end));
    expect(words).toEqual(['Tokens', 'refreshed', 'refreshToken', 'TOKEN']);
  });

  it('previews the window holding most query terms, not the chunk start', () => {
    const text = `${'filler words here. '.repeat(30)}The river crossed the stone bridge. ${'more filler. '.repeat(30)}`;
    const p = passage(text, 'stone bridge', 80);
    expect(p.length).toBeLessThanOrEqual(80);
    expect(p.startsWith('…')).toBe(true);
    expect(p).toContain('stone bridge');
    // Nothing matches: the start, cut.
    expect(passage(text, 'zeppelin', 80)).toBe(`${text.slice(0, 79)}…`);
    // Short text: as is, on one line.
    expect(passage('a\n\n  b', 'x')).toBe('a b');
  });

  it('highlights matching words only', () => {
    expect(highlight('the stone bridges of stonehenge', 'stone bridge', '[', ']')).toBe(
      'the [stone] [bridges] of stonehenge',
    );
  });
});
