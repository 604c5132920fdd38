import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type GrepCorpus, GrepRunner, grepTexts, MAX_LINE_CHARS } from '../../../memory/grep/grep.ts';
import type { GrepOptions } from '../../../memory/types.ts';
import { caught } from '../../helpers/errors.ts';

const CORPUS: GrepCorpus = [
  { id: 'c1', document: 'd1', text: 'alpha beta\ngamma Delta\nfoo bar foo\n' },
  { id: 'c2', document: 'd1', text: 'nothing here\r\nDELTA force\r\nend' },
  { id: 'c3', document: 'd2', text: 'delta in d2\nfoo again' },
];

const runners: GrepRunner[] = [];
function runner(corpus: GrepCorpus = CORPUS, timeoutMs?: number): GrepRunner {
  const r = new GrepRunner(corpus, timeoutMs === undefined ? {} : { timeoutMs });
  runners.push(r);
  return r;
}

afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

/** Both paths (literal in-process, regex in the worker) must agree on what they report. */
async function both(pattern: string, opts: GrepOptions = {}) {
  const r = runner();
  const literal = await r.grep(pattern, { ...opts, literal: true });
  const regex = await r.grep(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), opts);
  expect(regex).toEqual(literal);
  return literal;
}

describe('grep semantics', () => {
  it('reports id, offset and the whole line, one match per line', async () => {
    const res = await both('foo');
    expect(res.truncated).toBe(false);
    expect(res.matches).toEqual([
      {
        id: 'c1',
        offset: 23,
        text: 'foo bar foo',
        before: '',
        after: '',
        document: 'd1',
        documentOffset: 23,
      },
      { id: 'c3', offset: 12, text: 'foo again', before: '', after: '', document: 'd2', documentOffset: 12 },
    ]);
    expect(CORPUS[0]?.text.slice(23, 26)).toBe('foo');
  });

  it('is case-sensitive unless ignoreCase, and strips CR from lines', async () => {
    expect((await both('delta')).matches.map((m) => m.id)).toEqual(['c3']);
    const res = await both('delta', { ignoreCase: true });
    expect(res.matches.map((m) => [m.id, m.text])).toEqual([
      ['c1', 'gamma Delta'],
      ['c2', 'DELTA force'],
      ['c3', 'delta in d2'],
    ]);
  });

  it('adds context before and after the line', async () => {
    const res = await both('gamma', { context: 4 });
    expect(res.matches).toEqual([
      {
        id: 'c1',
        offset: 11,
        text: 'gamma Delta',
        before: 'eta\n',
        after: '\nfoo',
        document: 'd1',
        documentOffset: 11,
      },
    ]);
  });

  it('stops at limit and says so only when more matches exist', async () => {
    const many: GrepCorpus = [
      { id: 'm', text: Array.from({ length: 10 }, (_, i) => `line ${i} x`).join('\n') },
    ];
    const r = runner(many);
    for (const literal of [true, false]) {
      const cut = await r.grep('x', { limit: 3, literal });
      expect(cut.matches.map((m) => m.text)).toEqual(['line 0 x', 'line 1 x', 'line 2 x']);
      expect(cut.truncated).toBe(true);
      const exact = await r.grep('x', { limit: 10, literal });
      expect(exact.matches).toHaveLength(10);
      expect(exact.truncated).toBe(false);
    }
    const dflt = await r.grep('line');
    expect(dflt.matches).toHaveLength(10);
  });

  it('defaults to 100 matches', async () => {
    const big: GrepCorpus = [{ id: 'b', text: 'hit\n'.repeat(150) }];
    const res = await runner(big).grep('h.t');
    expect(res.matches).toHaveLength(100);
    expect(res.truncated).toBe(true);
  });

  it('filters by document', async () => {
    const r = runner();
    expect((await r.grep('foo', { document: 'd2' })).matches.map((m) => m.id)).toEqual(['c3']);
    expect(
      (await r.grep('delta', { document: ['d1'], ignoreCase: true, literal: true })).matches.map((m) => m.id),
    ).toEqual(['c1', 'c2']);
    expect((await r.grep('foo', { document: 'nope' })).matches).toEqual([]);
    // Unlabelled chunks are the caller's own selection and are always searched.
    const mixed = await grepTexts([{ id: 'u', text: 'foo' }, ...CORPUS], 'foo', { document: 'd2' });
    expect(mixed.matches.map((m) => m.id)).toEqual(['u', 'c3']);
  });

  it('supports regex features: anchors per line, alternation, unicode classes, multi-line matches', async () => {
    const r = runner();
    expect((await r.grep('^foo')).matches.map((m) => m.offset)).toEqual([23, 12]);
    expect((await r.grep('beta$|^end')).matches.map((m) => m.text)).toEqual(['alpha beta', 'end']);
    expect((await r.grep('\\p{Lu}{5}')).matches.map((m) => m.text)).toEqual(['DELTA force']);
    const multi = await r.grep('beta\\ngamma');
    expect(multi.matches).toEqual([
      { id: 'c1', offset: 6, text: 'alpha beta', before: '', after: '', document: 'd1', documentOffset: 6 },
    ]);
  });

  it('handles empty matches without looping', async () => {
    const res = await runner().grep('^', { limit: 50 });
    // c1 has 3 lines (the final newline does not start a 4th), c2 3, c3 2.
    expect(res.matches).toHaveLength(8);
    expect(res.truncated).toBe(false);
  });

  it('cuts long lines to a window around the match', async () => {
    const line = `${'a'.repeat(5000)}NEEDLE${'b'.repeat(5000)}`;
    const res = await grepTexts([{ id: 'L', text: `short\n${line}\nafter` }], 'NEEDLE', {
      literal: true,
      context: 3,
    });
    const m = res.matches[0];
    expect(m?.offset).toBe(6 + 5000);
    expect(m?.text).toContain('NEEDLE');
    expect(m?.text.startsWith('…')).toBe(true);
    expect(m?.text.endsWith('…')).toBe(true);
    expect(m?.text.length).toBe(MAX_LINE_CHARS + 2);
    expect(m?.before).toBe('aaa');
    expect(m?.after).toBe('bbb');
    const tail = await grepTexts([{ id: 'T', text: `${'a'.repeat(2000)}END` }], 'END');
    expect(tail.matches[0]?.text).toBe(`…${'a'.repeat(MAX_LINE_CHARS - 3)}END`);
  });

  it('rejects an invalid regex with the engine message, and bad options', async () => {
    const err = await caught(grepTexts(CORPUS, 'foo(('));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toMatch(/invalid regex \/foo\(\(\/: .*(unterminated|Unterminated)/);
    expect((await caught(grepTexts(CORPUS, ''))).code).toBe('BAD_INPUT');
    expect((await caught(grepTexts(CORPUS, 'x', { limit: 0 }))).code).toBe('BAD_INPUT');
    expect((await caught(grepTexts(CORPUS, 'x', { context: -1 }))).code).toBe('BAD_INPUT');
    // A literal is never parsed as a regex.
    expect(
      (await grepTexts([{ id: 'p', text: 'call foo(( now' }], 'foo((', { literal: true })).matches,
    ).toHaveLength(1);
  });
});

describe('GrepRunner', () => {
  it('sends the corpus to the worker once per version', async () => {
    const r = runner();
    await r.grep('foo');
    await r.grep('bar');
    await r.grep('delta', { ignoreCase: true });
    expect(r.stats).toEqual({ workerStarts: 1, corpusLoads: 1 });
    r.setCorpus([{ id: 'n', text: 'new foo' }]);
    expect((await r.grep('fo+')).matches.map((m) => m.id)).toEqual(['n']);
    expect(r.stats).toEqual({ workerStarts: 1, corpusLoads: 2 });
    // Literal searches never need the worker's copy.
    r.setCorpus(CORPUS);
    await r.grep('foo', { literal: true });
    expect(r.stats.corpusLoads).toBe(2);
  });

  it('reuses the worker copy of a versioned corpus until its version changes', async () => {
    const r = runner([]);
    const v1 = { version: 7, chunks: CORPUS };
    expect((await r.grep(v1, 'fo{2}')).matches).toHaveLength(2);
    expect((await r.grep({ version: 7, chunks: CORPUS }, 'alpha')).matches).toHaveLength(1);
    expect(r.stats.corpusLoads).toBe(1);
    const v2 = { version: 8, chunks: [{ id: 'z', text: 'only foo' }] };
    expect((await r.grep(v2, 'fo+')).matches.map((m) => m.id)).toEqual(['z']);
    expect((await r.grep(v2, 'foo', { literal: true })).matches.map((m) => m.id)).toEqual(['z']);
    expect(r.stats.corpusLoads).toBe(2);
    // A negative version is never cached.
    await r.grep({ version: -1, chunks: CORPUS }, 'x');
    await r.grep({ version: -1, chunks: CORPUS }, 'x');
    expect(r.stats).toEqual({ workerStarts: 1, corpusLoads: 4 });
    // The plain form keeps using the last corpus given.
    expect((await r.grep('gamma')).matches.map((m) => m.id)).toEqual(['c1']);
    expect(r.stats.corpusLoads).toBe(4);
  });

  it('stops a catastrophic regex, keeps partial matches, and recovers', async () => {
    const evil: GrepCorpus = [
      { id: 'ok', text: 'aaa\n' },
      { id: 'bad', text: `${'a'.repeat(40)}!` },
      { id: 'later', text: 'aaaa' },
    ];
    const r = runner(evil);
    const err = await caught(r.grep('(a+)+$', { timeoutMs: 300 }));
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toBe(
      'grep stopped: one step of the pattern ran for more than 800 ms, over its budget of 300 ms plus 50 ms ' +
        'per million characters scanned — simplify the regex (avoid nested quantifiers)',
    );
    expect(err.details.partial).toEqual([{ id: 'ok', offset: 0, text: 'aaa', before: '', after: '' }]);
    // The stuck thread was replaced: the next search works on a fresh worker with the corpus re-sent.
    const after = await r.grep('a{4}$');
    expect(after.matches.map((m) => m.id)).toEqual(['later']);
    expect(r.stats).toEqual({ workerStarts: 2, corpusLoads: 2 });
  });

  it('times out a slow but linear search from inside the worker', async () => {
    // Many chunks, each cheap: the worker notices the deadline between finds and stays alive.
    // `x*z` is quadratic per chunk (about 2M steps here), never exponential, so each find returns.
    const chunks = Array.from({ length: 4000 }, (_, i) => ({ id: `c${i}`, text: `${'x'.repeat(2000)}y` }));
    const r = runner(chunks);
    const err = await caught(r.grep('x*z', { timeoutMs: 50 }));
    expect(err.code).toBe('TIMEOUT');
    expect(r.stats.workerStarts).toBe(1);
    await r.grep('y$');
    expect(r.stats).toEqual({ workerStarts: 1, corpusLoads: 1 });
  });

  it('runs queued greps in order', async () => {
    const r = runner();
    const results = await Promise.all([
      r.grep('alpha'),
      r.grep('gamma'),
      r.grep('foo', { literal: true }),
      r.grep('end'),
    ]);
    expect(results.map((x) => x.matches[0]?.id)).toEqual(['c1', 'c1', 'c1', 'c2']);
  });

  it('fails greps after close, including one in flight', async () => {
    const r = runner([{ id: 'bad', text: `${'a'.repeat(40)}!` }]);
    // caught() attaches the handler now, before close() rejects the grep.
    const inflight = caught(r.grep('(a+)+$', { timeoutMs: 600_000 }));
    // Once the worker holds the corpus, the search (seconds of backtracking) has gone to it.
    while (r.stats.corpusLoads === 0) await new Promise((res) => setTimeout(res, 10));
    await r.close();
    expect((await inflight).code).toBe('ABORTED');
    expect((await caught(r.grep('a'))).code).toBe('ABORTED');
  });

  /** Runs `script` (an ES module importing memory/grep/grep.ts as '@grep') in a fresh Node; its stdout, once it exits by itself. */
  function runAlone(script: string): string {
    const grepModule = JSON.stringify(
      fileURLToPath(new URL('../../../memory/grep/grep.ts', import.meta.url)),
    );
    const out = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', script.replaceAll("'@grep'", grepModule)],
      {
        encoding: 'utf8',
        // Only a hang reaches this: the script ends in a second or two, a few on a loaded machine.
        timeout: 100_000,
      },
    );
    expect(out.stderr).not.toContain('Error');
    expect(out.signal).toBeNull();
    expect(out.status).toBe(0);
    return out.stdout.trim();
  }

  it('never keeps the process alive', () => {
    const out = runAlone(`
      import { GrepRunner } from '@grep';
      const r = new GrepRunner([{ id: 'a', text: 'hello world' }]);
      const res = await r.grep('w.rld');
      console.log(JSON.stringify(res.matches.map((m) => m.offset)));
      // No close(): the idle worker must not hold the event loop open.
    `);
    expect(out).toBe('[6]');
  });

  it('takes a prestarted worker of its kind, and a spare never keeps the process alive', () => {
    const out = runAlone(`
      import { FILE_GREP_YOUNG_MB, GrepRunner, prestartGrepWorker } from '@grep';
      prestartGrepWorker();
      prestartGrepWorker();
      // A runner that keeps a corpus wants V8's default young generation: not the spare of a file grep.
      const keeper = new GrepRunner([{ id: 'a', text: 'hello world' }]);
      const first = await keeper.grep('w.rld');
      const files = new GrepRunner([{ id: 'b', text: 'hello there' }], { workerYoungMb: FILE_GREP_YOUNG_MB });
      const second = await files.grep('th.re');
      // That spare was taken: this one is new, and nobody takes it.
      prestartGrepWorker();
      console.log(JSON.stringify([first.matches[0].offset, keeper.stats.workerStarts, second.matches[0].offset, files.stats.workerStarts]));
    `);
    expect(out).toBe('[6,1,6,0]');
  });
});
