import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../../core/errors.ts';
import { CHUNKERS, chunkerFor, chunkText } from '../../../../memory/ingest/chunkers/index.ts';
import { expectWellFormed, prng, prose } from './invariants.ts';

const session = readFileSync(
  new URL('../../../fixtures/memory/claude-session.jsonl', import.meta.url),
  'utf8',
);

describe('chunkerFor', () => {
  it.each([
    ['notes.md', 'markdown'],
    ['README.MARKDOWN', 'markdown'],
    ['page.mdx', 'markdown'],
    ['data.json', 'lines'],
    ['app.log', 'lines'],
    ['table.csv', 'lines'],
    ['table.tsv', 'lines'],
    ['src/main.ts', 'lines'],
    ['lib.py', 'lines'],
    ['main.go', 'lines'],
    ['x.rs', 'lines'],
    ['Query.SQL', 'lines'],
    ['run.sh', 'lines'],
    ['Makefile', 'lines'],
    ['essay.txt', 'paragraph'],
    ['no-extension', 'paragraph'],
  ])('%s → %s', (path, expected) => {
    expect(chunkerFor(path, 'Some text.\n')).toBe(expected);
  });

  it('sends chat JSONL to turn and other JSONL to lines', () => {
    expect(chunkerFor('s.jsonl', session)).toBe('turn');
    expect(
      chunkerFor('s.jsonl', '{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n'),
    ).toBe('turn');
    expect(chunkerFor('rows.jsonl', '{"id":1,"v":2}\n{"id":2,"v":3}\n')).toBe('lines');
    expect(chunkerFor('rows.jsonl', '{"role":"admin","content":"x"}\n')).toBe('lines');
    expect(chunkerFor('rows.jsonl')).toBe('lines');
  });

  it('sends User:/Assistant: transcripts in text files to turn', () => {
    expect(chunkerFor('chat.txt', 'User: hi\nAssistant: hello\n')).toBe('turn');
    expect(chunkerFor('chat', 'Human: hi\n\nAI: hello\n')).toBe('turn');
    expect(chunkerFor('notes.txt', 'User: only one side of it\n')).toBe('paragraph');
  });
});

describe('chunkText', () => {
  it('returns nothing for empty or blank text', () => {
    for (const name of CHUNKERS) {
      expect(chunkText('', name)).toEqual([]);
      expect(chunkText('  \n\n \t ', name)).toEqual([]);
    }
  });

  it('rejects bad options and unknown chunkers with VALIDATION', () => {
    const bad = [
      () => chunkText('x', 'size', { chunkTokens: 0 }),
      () => chunkText('x', 'size', { chunkTokens: 100, overlapTokens: 100 }),
      () => chunkText('x', 'size', { overlapTokens: -1 }),
      () => chunkText('x', 'paragraph', { minTokens: 900, maxTokens: 800 }),
      () => chunkText('x', 'nope' as never),
    ];
    for (const f of bad) {
      let err: unknown;
      try {
        f();
      } catch (e) {
        err = e;
      }
      expect(isRlmError(err, 'VALIDATION')).toBe(true);
    }
  });

  it.each(CHUNKERS.filter((c) => c !== 'turn'))(
    '%s drafts are exact slices with exact token counts',
    (name) => {
      for (let seed = 1; seed <= 6; seed++) {
        const doc = prose(seed, 40);
        expectWellFormed(doc, chunkText(doc, name, { chunkTokens: 300, overlapTokens: 30 }));
      }
    },
  );

  it('keeps the invariants on random whitespace-heavy text', () => {
    const rnd = prng(99);
    const bits = [
      'word',
      ' ',
      '\n',
      '\n\n',
      ' \n',
      '\r\n',
      '\r',
      '\t',
      '. ',
      '# h\n',
      '```\n',
      'User: x\n',
      '😀',
      'é',
    ];
    for (let i = 0; i < 40; i++) {
      let doc = '';
      for (let j = 0; j < 400; j++) doc += bits[Math.floor(rnd() * bits.length)];
      for (const name of CHUNKERS) {
        expectWellFormed(
          doc,
          chunkText(doc, name, { chunkTokens: 40, overlapTokens: 5, maxTokens: 30, minTokens: 10 }),
        );
      }
    }
  });

  it('turn on JSONL renders exchanges whose offsets bound their source lines', () => {
    const drafts = chunkText(session, 'turn');
    expectWellFormed(session, drafts, { sliced: false });
    for (const d of drafts) {
      expect(d.start === 0 || session[d.start - 1] === '\n').toBe(true);
      expect(d.end === session.length || session[d.end] === '\n').toBe(true);
    }
  });
});
