/**
 * grep reads a document as one text (issue 30): context across chunk edges, matches that cross an edge,
 * counts with no cap, and a budget that grows with the text scanned (issue 23). The same over every
 * store (overlapping chunks read once, counts per document, the `document` filter by id or path):
 * test/memory/conformance/grep.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type GrepChunk, GrepRunner, grepTexts } from '../../../memory/grep/grep.ts';
import { assemble, ScanClock } from '../../../memory/grep/grep-scan.ts';

const runners: GrepRunner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

/** A changelog-like text: entries of about 350 characters, each ending in a signature line. */
function changelog(entries: number): string {
  const out: string[] = [];
  for (let i = 0; i < entries; i++) {
    out.push(
      `pkg (1.${i}) unstable; urgency=medium\n\n` +
        `  * Fix bug number ${1000 + i} in the parser, which broke on long lines.\n` +
        `  * Update the translations and the documentation for release 1.${i}.\n\n` +
        ` -- Maintainer ${i} <m${i}@example.org>  Mon, 0${(i % 9) + 1} Jan 2024 10:00:00 +0000\n\n`,
    );
  }
  return out.join('');
}

describe('a document is grepped as one text', () => {
  it('reaches across chunk edges for before/after, as far as asked, within the document', async () => {
    const text = changelog(40);
    // One chunk per line group: chunks of ~100-350 characters, as the changelog had.
    const lines = text.split(/(?<=\n)/);
    const chunks: GrepChunk[] = [];
    let at = 0;
    for (let i = 0; i < lines.length; i += 2) {
      const piece = lines.slice(i, i + 2).join('');
      chunks.push({
        id: `log:${chunks.length}`,
        text: piece,
        document: 'log',
        start: at,
        end: at + piece.length,
      });
      at += piece.length;
    }
    expect(chunks.length).toBeGreaterThan(50);
    for (const literal of [true, false]) {
      const r = await grepTexts(chunks, 'Fix bug number 1020', { context: 600, literal });
      const m = r.matches[0]!;
      expect(r.matches).toHaveLength(1);
      // The whole 600 characters either side: several chunks back and forth.
      expect(m.before).toHaveLength(600);
      expect(m.after).toHaveLength(600);
      const entryEnd = text.indexOf(' -- Maintainer 20 ', m.documentOffset);
      expect(m.after).toContain(' -- Maintainer 20 <m20@example.org>');
      expect(entryEnd).toBeGreaterThan(0);
      // Offsets: in the chunk it starts in, and in the document.
      const chunk = chunks.find((c) => c.id === m.id)!;
      expect(chunk.text.slice(m.offset, m.offset + 19)).toBe('Fix bug number 1020');
      expect(m.documentOffset).toBe(chunk.start! + m.offset);
      expect(text.slice(m.documentOffset, m.documentOffset! + 19)).toBe('Fix bug number 1020');
      expect(m.document).toBe('log');
    }
    // It never reaches into another document.
    const two = await grepTexts(
      [
        { id: 'a:0', text: 'first doc\n', document: 'a' },
        { id: 'b:0', text: 'needle here\n', document: 'b' },
        { id: 'b:1', text: 'rest of b\n', document: 'b' },
      ],
      'needle',
      { context: 100, literal: true },
    );
    expect(two.matches[0]).toMatchObject({ id: 'b:0', before: '', after: '\nrest of b\n' });
  });

  it('finds a match that crosses a chunk edge, and reports it in the chunk it starts in', async () => {
    const chunks: GrepChunk[] = [
      { id: 'd:0', text: 'the signature line is -- Main', document: 'd' },
      { id: 'd:1', text: 'tainer <x@y>\nnext line', document: 'd' },
    ];
    for (const literal of [true, false]) {
      const r = await grepTexts(chunks, '-- Maintainer <', { literal });
      expect(r.matches).toEqual([
        {
          id: 'd:0',
          offset: 22,
          text: 'the signature line is -- Maintainer <x@y>',
          before: '',
          after: '',
          document: 'd',
          documentOffset: 22,
        },
      ]);
    }
  });

  it('keeps rendered chunks (offsets that are not a slice of the text) on lines of their own', () => {
    const doc = assemble([
      { id: 't:0', text: 'User: hi\n\nAssistant: hello', document: 't', start: 0, end: 200 },
      { id: 't:1', text: 'User: again', document: 't', start: 200, end: 400 },
    ]);
    expect(doc.text).toBe('User: hi\n\nAssistant: hello\nUser: again');
  });
});

describe('count mode', () => {
  it('counts every occurrence and every matching line per document, with no cap', async () => {
    // More matches than the largest limit a listing allows (100,000).
    const big = 'ERR-1234 ok ERR-5678\n'.repeat(60_000);
    const corpus: GrepChunk[] = [
      { id: 'a:0', text: big, document: 'a' },
      { id: 'b:0', text: 'nothing\n', document: 'b' },
      { id: 'c:0', text: 'ERR-0001\nERR-0002 and ERR-0003', document: 'c' },
    ];
    const r = new GrepRunner(corpus);
    runners.push(r);
    for (const literal of [false, true]) {
      const pattern = literal ? 'ERR-' : 'ERR-\\d{4}';
      const res = await r.grep(pattern, { count: true, literal });
      expect(res.matches).toEqual([]);
      expect(res.truncated).toBe(false);
      expect(res.counts).toEqual({
        matches: 120_003,
        lines: 60_002,
        documents: [
          { id: 'a', matches: 120_000, lines: 60_000 },
          { id: 'c', matches: 3, lines: 2 },
        ],
      });
    }
    // With the document filter, and an empty match counted once per position.
    expect((await r.grep('ERR', { count: true, document: 'c' })).counts?.matches).toBe(3);
    expect((await r.grep('^', { count: true, document: ['b', 'c'] })).counts).toEqual({
      matches: 3,
      lines: 3,
      documents: [
        { id: 'b', matches: 1, lines: 1 },
        { id: 'c', matches: 2, lines: 2 },
      ],
    });
  });
});

describe('the scan budget', () => {
  it('grows with the characters scanned, in CPU time', () => {
    // CPU and wall clocks in step, as on an idle machine.
    let now = 0;
    const clocks = { cpu: () => now, wall: () => now };
    const clock = new ScanClock(100, clocks);
    now = 99;
    expect(clock.over()).toBe(false);
    // 10 million characters buy 500 ms more.
    const big = new ScanClock(100, clocks);
    now += 550;
    big.add(10_000_000);
    expect(big.over()).toBe(false);
    now += 100;
    expect(big.over()).toBe(true);
    // Time spent reading files is given back.
    const reading = new ScanClock(100, clocks);
    now += 1000;
    reading.credit(950);
    expect(reading.over()).toBe(false);
  });

  it('is not spent by a busy machine: wall time passes, CPU time does not', () => {
    let wall = 0;
    let cpu = 0;
    const clock = new ScanClock(100, { cpu: () => cpu, wall: () => wall });
    // Other processes hold the cores: ten times the budget in wall time, half of it in CPU.
    wall = 1000;
    cpu = 50;
    expect(clock.over()).toBe(false);
    wall = 2000;
    cpu = 101;
    expect(clock.over()).toBe(true);
  });

  it('lets a simple pattern finish over a large text even with a tiny base budget', async () => {
    // 24 MB: with a fixed 1 ms budget this would time out; the allowance grows to ~1.2 s of CPU while
    // the scan needs a small fraction of it.
    const text = `${'INFO all good here\n'.repeat(400_000)}ERR-4242 the one\n`.repeat(3);
    const r = new GrepRunner([{ id: 'log', text, document: 'log' }], { timeoutMs: 1 });
    runners.push(r);
    const res = await r.grep('ERR-\\d{4}', { count: true });
    expect(res.counts?.matches).toBe(3);
    const listed = await r.grep('ERR-\\d{4}');
    expect(listed.matches.map((m) => m.documentOffset)).toHaveLength(3);
  });
});

describe('a match', () => {
  it('does not keep the document it was found in alive', () => {
    // Matches wait for the end of a grep (they are merged in rank order): a match whose line were a view
    // into its document's text would keep every matched document of the store in memory until then.
    const scan = new URL('../../../memory/grep/grep-scan.ts', import.meta.url).href;
    const script = `
      const { regexFinder, scanDocument, scanState, ScanClock } = await import(${JSON.stringify(scan)});
      const spec = { limit: 1000, context: 40, documents: null, count: false, clock: new ScanClock(60_000) };
      const state = scanState();
      const kept = [];
      gc();
      const before = process.memoryUsage().heapUsed;
      for (let d = 0; d < 40; d++) {
        // A document of 1 MB, each a string of its own.
        const text = 'filler line of document ' + d + '\\n' + ('x'.repeat(99) + d + '\\n').repeat(10_000) + 'the needle here, line ' + d + '\\n';
        scanDocument([{ id: 'doc' + d + ':0', text, document: 'doc' + d }], regexFinder(/needle/), spec, state, (m) => kept.push(m));
      }
      gc();
      const grewMB = (process.memoryUsage().heapUsed - before) / 1e6;
      console.log(JSON.stringify({ matches: kept.length, lines: kept.map((m) => m.text), before: kept[0].before.length, grewMB }));
    `;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { matches: number; lines: string[]; before: number; grewMB: number };
    expect(out.matches).toBe(40);
    expect(out.lines[7]).toBe('the needle here, line 7');
    expect(out.before).toBe(40);
    // The 40 documents are 40 MB; the matches, their lines and context, a few KB.
    expect(out.grewMB).toBeLessThan(5);
  });
});
