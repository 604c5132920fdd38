/**
 * Work stays linear in the input whatever its shape. Every hostile shape (one long token, long blank or
 * newline runs, long backtick or `#` runs, deep nesting...) goes through every tokenizing entry point
 * (token counting, each chunker, the Claude Code session reader) at two sizes, and the tokenizer's work
 * counters (code units scanned and encoded, see tokenizerWork) must grow like the size: a quadratic walk
 * shows as four times the work for twice the input. No clock is read; timings are in `npm run bench`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chunkText } from '../../../memory/ingest/chunkers/index.ts';
import { countTokens, tokenizerWork } from '../../../memory/ingest/tokens.ts';
import type { ChunkerName } from '../../../memory/types.ts';
import { readLines } from '../../../src/claude/lines.ts';
import { readSessionParts } from '../../../src/claude/reader.ts';
import { tempDir } from '../../helpers/temp.ts';

/** Inputs of about `n` code units shaped to make a naive scanner restart or backtrack. */
const SHAPES: Record<string, (n: number) => string> = {
  'one long token': (n) => 'a'.repeat(n),
  'base64 without breaks': (n) => 'QUJD+/9z'.repeat(n / 8),
  'one long number': (n) => '7'.repeat(n),
  'CJK without spaces': (n) => '漢字'.repeat(n / 2),
  'emoji run (surrogate pairs)': (n) => '🚀'.repeat(n / 2),
  'long blank run': (n) => `x${' '.repeat(n)}y`,
  'long newline run': (n) => `x${'\n'.repeat(n)}y`,
  'blanks and line breaks': (n) => ' \n'.repeat(n / 2),
  'carriage returns': (n) => '\r'.repeat(n),
  'backtick run': (n) => '`'.repeat(n),
  'hash run': (n) => '#'.repeat(n),
  'heading with a long blank run': (n) => `# title${' '.repeat(n)}#`,
  'deep brackets': (n) => `${'('.repeat(n / 2)}${')'.repeat(n / 2)}`,
  'deep JSON nesting': (n) => '{"a":'.repeat(n / 5),
  'punctuation run': (n) => '=>;{'.repeat(n / 4),
  apostrophes: (n) => "'s".repeat(n / 2),
};

/** Every way text is tokenized on ingest. */
const ENTRY_POINTS: Record<string, (text: string) => unknown> = {
  countTokens: (t) => countTokens(t),
  ...Object.fromEntries(
    (['size', 'paragraph', 'lines', 'turn', 'markdown'] satisfies ChunkerName[]).map((c) => [
      `${c} chunker`,
      (t: string) => chunkText(t, c),
    ]),
  ),
};

/** Large enough that every shape is split into many chunks at both sizes (below that, where a text stops fitting one chunk changes the work). */
const N = 300_000;

/** Tokenizer work (code units scanned plus encoded) done by `fn`. */
function workOf(fn: () => unknown): number {
  const before = tokenizerWork();
  fn();
  const after = tokenizerWork();
  return after.scanned - before.scanned + (after.encoded - before.encoded);
}

const cases = Object.entries(SHAPES).flatMap(([shape, make]) =>
  Object.entries(ENTRY_POINTS).map(([entry, run]) => ({ shape, entry, make, run })),
);

describe('tokenizer work over hostile shapes', () => {
  it.each(cases)('$entry on $shape: twice the input, at most about twice the work', ({ make, run }) => {
    const small = workOf(() => run(make(N)));
    const large = workOf(() => run(make(2 * N)));
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(2.5);
    // And a bounded number of passes over the text, not a constant that grows with something else.
    expect(large).toBeLessThan(12 * 2 * N);
  });
});

describe('Claude Code session import', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A session whose one assistant message is `text`. */
  function session(text: string): string {
    const file = join(tempDir('rlm-linear-'), 's.jsonl');
    const line = (type: string, content: unknown) =>
      JSON.stringify({
        type,
        uuid: type,
        sessionId: 's',
        timestamp: '2026-01-01T00:00:00Z',
        message: { role: type, content },
      });
    writeFileSync(file, `${line('user', 'hi')}\n${line('assistant', [{ type: 'text', text }])}\n`);
    return file;
  }

  it.each(Object.entries(SHAPES))(
    'a message that is %s reads in tokenizer work linear in its size',
    async (_, make) => {
      const read = async (n: number) => {
        const file = session(make(n));
        const before = tokenizerWork();
        for await (const _part of readSessionParts(
          { file, session: 's', project: '/p' },
          { from: 0, lines: 0, exchanges: 0 },
        ));
        const after = tokenizerWork();
        return after.scanned - before.scanned + (after.encoded - before.encoded);
      };
      const small = await read(N);
      const large = await read(2 * N);
      expect(small).toBeGreaterThan(0);
      expect(large / small).toBeLessThan(2.5);
    },
  );

  it('a line spread over many reads is copied a bounded number of times', async () => {
    const copied = async (n: number) => {
      const file = session('a'.repeat(n));
      const concat = vi.spyOn(Buffer, 'concat');
      for await (const _line of readLines(file, 0, 0, 4096));
      const bytes = concat.mock.results.reduce((sum, r) => sum + (r.value as Buffer).length, 0);
      concat.mockRestore();
      return bytes;
    };
    const small = await copied(N);
    const large = await copied(2 * N);
    expect(small).toBeGreaterThan(N);
    expect(large / small).toBeLessThan(2.5);
  });
});
