import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../../memory/ingest/chunkers/index.ts';
import { markdownSections } from '../../../../memory/ingest/chunkers/markdown.ts';
import { expectCovers, expectWellFormed } from './invariants.ts';

const body = (words: number, word = 'content') => `${`${word} `.repeat(words).trim()}.\n`;

describe('markdownSections', () => {
  it('follows ATX headings and ignores # inside fenced code', () => {
    const doc = [
      '# Guide',
      'intro',
      '```sh',
      '# not a heading',
      '```',
      '~~~~',
      '## still code',
      '~~~~',
      '## Install',
      '### Linux ###',
      '#hashtag is not a heading',
      '## Usage',
      '# Appendix',
      '',
    ].join('\n');
    expect(markdownSections(doc).map((s) => s.path.join(' > '))).toEqual([
      'Guide',
      'Guide > Install',
      'Guide > Install > Linux',
      'Guide > Usage',
      'Appendix',
    ]);
  });
});

describe('markdown chunker', () => {
  const doc = [
    '# Guide',
    '',
    body(80, 'welcome'),
    '## Install',
    '',
    body(90, 'install'),
    '### Linux',
    '',
    body(90, 'apt'),
    '## Usage',
    '',
    body(90, 'run'),
  ].join('\n');

  it('makes one chunk per section with its heading path and slug tags', () => {
    const drafts = chunkText(doc, 'markdown');
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    expect(drafts.map((d) => d.section)).toEqual([
      'Guide',
      'Guide > Install',
      'Guide > Install > Linux',
      'Guide > Usage',
    ]);
    expect(drafts[2]!.tags).toEqual(['guide', 'install', 'linux']);
    expect(drafts[2]!.text.startsWith('### Linux')).toBe(true);
  });

  it('merges tiny sections into the next one under the same parent', () => {
    const text = [
      '# Décisions Techniques',
      '## Base de données',
      'Short.',
      '## Cache',
      '',
      body(120, 'redis'),
      '## Tiny end',
      'x',
      '# Other',
      '',
      body(120, 'other'),
    ].join('\n');
    const drafts = chunkText(text, 'markdown');
    expectWellFormed(text, drafts);
    expectCovers(text, drafts);
    expect(drafts.map((d) => d.section)).toEqual([
      'Décisions Techniques',
      'Décisions Techniques > Tiny end',
      'Other',
    ]);
    expect(drafts[0]!.tags).toEqual(['decisions-techniques', 'base-de-donnees', 'cache']);
    expect(drafts[0]!.text.startsWith('# Décisions')).toBe(true);
    expect(drafts[0]!.text).toContain('redis');
  });

  it('splits sections over chunkTokens with the paragraph logic, keeping the path', () => {
    const paragraphs = Array.from(
      { length: 30 },
      (_, i) => `Paragraph ${i}. ${'detail '.repeat(60).trim()}.`,
    );
    const text = `# Big\n\n${paragraphs.join('\n\n')}\n\n# After\n\n${body(80)}`;
    const drafts = chunkText(text, 'markdown', { chunkTokens: 500 });
    expectWellFormed(text, drafts);
    expectCovers(text, drafts);
    const big = drafts.filter((d) => d.section === 'Big');
    expect(big.length).toBeGreaterThan(2);
    for (const d of big) expect(d.tags).toEqual(['big']);
    expect(drafts.at(-1)!.section).toBe('After');
  });

  it('keeps text before the first heading with the first section when it is tiny', () => {
    const text = `---\ntitle: x\n---\n# Title\n\n${body(100)}`;
    const drafts = chunkText(text, 'markdown');
    expect(drafts).toHaveLength(1);
    expect(drafts[0]!.section).toBe('Title');
    expect(drafts[0]!.start).toBe(0);
  });

  it('handles a document without headings', () => {
    const text = body(200);
    const drafts = chunkText(text, 'markdown');
    expect(drafts).toHaveLength(1);
    expect(drafts[0]!.section).toBeUndefined();
    expect(drafts[0]!.tags).toBeUndefined();
  });
});
