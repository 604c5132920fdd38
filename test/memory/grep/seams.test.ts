/**
 * A file stored in parts is grepped as its one text (memory/grep/seams.ts): whether its parts come in one
 * corpus or page by page with the carries between (as the PostgreSQL store feeds them), by the worker
 * (regex) or in-process (literal), every match, its line, context and offsets, and every count are what
 * grep gives for the whole text read as one document; and what a part carries to the next stays bounded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type GrepCarry, type GrepChunk, GrepRunner } from '../../../memory/grep/grep.ts';
import { SEAM_CHARS } from '../../../memory/grep/seams.ts';
import type { GrepMatch, GrepOptions, GrepResult } from '../../../memory/types.ts';

const runners: GrepRunner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

function runner(): GrepRunner {
  const r = new GrepRunner();
  runners.push(r);
  return r;
}

/**
 * Numbered lines: one of 3,000 characters where the first part's tail begins (SEAM_CHARS before its end,
 * a marker at its end), and one of 300,000 that the third seam cuts (a part is cut inside a line when no
 * line ends in its second half), needles along it near and far from that seam.
 */
function fileText(): { text: string; cuts: number[] } {
  const lines: string[] = [];
  for (let i = 0; i < 12_000; i++) lines.push(`line ${i} of the log: café ${'x'.repeat(i % 30)}\n`);
  lines[1000] = `line 1000 of the log: café ${'w'.repeat(3000)} marker\n`;
  const head = lines.slice(0, 9000).join('');
  const long = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? 'needle' : 'y').padEnd(1000, 'y')).join(
    '',
  );
  const text = `${head}${long}\n${lines.slice(9000).join('')}`;
  const cut = (near: number) => text.indexOf('\n', near) + 1;
  const wide = text.indexOf('line 1000 of');
  return {
    text,
    cuts: [cut(wide + 1500 + SEAM_CHARS), cut(260_000), head.length + 150_000, cut(head.length + 400_000)],
  };
}

/** The file as parts `F`, `F.p2`, … of chunks of 4,000 characters, each part's first chunk linked. */
function partChunks(text: string, cuts: number[]): GrepChunk[][] {
  const bounds = [0, ...cuts, text.length];
  return bounds.slice(0, -1).map((from, k) => {
    const doc = k === 0 ? 'F' : `F.p${k + 1}`;
    const part = text.slice(from, bounds[k + 1]);
    const chunks: GrepChunk[] = [];
    for (let at = 0; at < part.length; at += 4000)
      chunks.push({ id: `${doc}:${chunks.length}`, text: part.slice(at, at + 4000), document: doc });
    if (k > 0) chunks[0]!.prevPart = k === 1 ? 'F' : `F.p${k}`;
    if (k + 2 < bounds.length) chunks[0]!.nextPart = `F.p${k + 2}`;
    return chunks;
  });
}

/** What a match says of the file, the same whichever chunk it was found in. */
const seen = (m: GrepMatch) => [m.document, m.documentOffset, m.text, m.before, m.after];

const PATTERNS: [string, GrepOptions][] = [
  ['x*\\nline \\d+', {}],
  ['^line \\d+ ', { context: 1000 }],
  ['(?<=^line \\d+ [^\\n]*)marker', {}],
  ['\\d of the log: café x*$', { context: 120 }],
  ['(?<=café )x{5}', {}],
  ['line 1\\d*[^\\n]*\\n[^\\n]*\\n', { context: 20 }],
  ['needle', { context: 300 }],
  ['café xxx', { literal: true, context: 10 }],
  ['NEEDLE', { literal: true, ignoreCase: true }],
];

describe('grep over a file in parts', () => {
  const { text, cuts } = fileText();
  const parts = partChunks(text, cuts);
  const byId = new Map(parts.flat().map((c) => [c.id, c.text]));

  it('finds, shapes and counts what the whole text gives, in one corpus and page by page', async () => {
    const whole = runner();
    const inOne = runner();
    const paged = runner();
    for (const [pattern, opts] of PATTERNS) {
      for (const count of [false, true]) {
        const o = { ...opts, count, limit: 100_000 };
        const expected = await whole.grep(
          { version: -1, chunks: [{ id: 'W:0', text, document: 'F' }] },
          pattern,
          o,
        );
        const one = await inOne.grep({ version: -1, chunks: parts.flat() }, pattern, o);
        const carries = new Map<string, GrepCarry>();
        const pages: GrepResult[] = [];
        for (const chunks of parts)
          pages.push(await paged.grep({ version: -1, chunks, carries }, pattern, o));
        expect(carries.size, pattern).toBe(0);
        if (count) {
          expect(expected.counts!.matches, pattern).toBeGreaterThan(0);
          expect(one.counts, pattern).toEqual(expected.counts);
          expect(
            pages.flatMap((p) => p.counts!.documents),
            pattern,
          ).toEqual(expected.counts!.documents);
          continue;
        }
        expect(expected.matches.length, pattern).toBeGreaterThan(0);
        expect(one.matches.map(seen), pattern).toEqual(expected.matches.map(seen));
        expect(
          pages.flatMap((p) => p.matches.map(seen)),
          pattern,
        ).toEqual(expected.matches.map(seen));
        for (const m of one.matches) {
          const chunk = byId.get(m.id)!;
          expect(text.startsWith(chunk.slice(m.offset, m.offset + 40), m.documentOffset), pattern).toBe(true);
        }
      }
    }
  });

  it('finds a match that starts within SEAM_CHARS before a seam, and carries no more than that', async () => {
    const seam = cuts[0]!;
    // From 60,000 characters before the first seam to just past it.
    const start = text.lastIndexOf('\n', seam - 60_000) + 1;
    const pattern = `${text.slice(start, start + 20)}[^]*?${text.slice(seam, seam + 12)}`;
    const one = await runner().grep({ version: -1, chunks: parts.flat() }, pattern, {});
    expect(one.matches.map((m) => m.documentOffset)).toEqual([start]);

    const carries = new Map<string, GrepCarry>();
    const paged = runner();
    for (const [k, chunks] of parts.slice(0, -1).entries()) {
      await paged.grep({ version: -1, chunks, carries }, 'café', { context: 10_000, limit: 100_000 });
      const carry = carries.get(k === 0 ? 'F' : `F.p${k + 1}`)!;
      expect(carry.file).toBe('F');
      expect(carry.text.length).toBeLessThanOrEqual(2 * SEAM_CHARS + 10_000 + 200);
      expect(text.slice(0, cuts[k]).endsWith(carry.text)).toBe(true);
    }
  });
});
