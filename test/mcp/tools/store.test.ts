import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heapTuned } from '../../../core/batch-heap.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { parseTrace } from '../../../src/runtime/trace.ts';
import { childrenRunning } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/temp.ts';
import { type Connected, connect, textOf } from '../helpers/connect.ts';
import { scripted } from '../helpers/rules.ts';

const dir = tempDir('rlm-mcp-store-');
const docs = join(dir, 'docs');
let s: Connected;

beforeAll(async () => {
  mkdirSync(docs);
  writeFileSync(join(docs, 'launch.md'), '# Launch\n\nThe rocket launch is planned for Tuesday at dawn.\n');
  writeFileSync(join(docs, 'budget.txt'), 'The budget for the mission is forty units.\n');
  writeFileSync(join(docs, 'crew.txt'), 'The crew has three members: Ada, Grace and Linus.\n');
  s = await connect({ cwd: dir, env: { RLM_STORE: 'store' } });
});
afterAll(async () => {
  await s.close();
});

describe('rlm_ingest', () => {
  it('ingests into the default store with progress per file', async () => {
    const seen: Progress[] = [];
    const r = await s.client.callTool({ name: 'rlm_ingest', arguments: { paths: ['docs'] } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ documents: 3, added: 3, updated: 0, skipped: 0, notes: [] });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    // In bytes: the files' sizes together.
    const bytes = readdirSync(join(dir, 'docs')).reduce((n, f) => n + statSync(join(dir, 'docs', f)).size, 0);
    expect(seen.every((p) => p.total === bytes)).toBe(true);
    const progress = seen.map((p) => p.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(new Set(progress).size).toBe(progress.length);
    expect(progress.at(-1)).toBe(bytes);
    expect(seen.some((p) => p.message?.includes('budget.txt'))).toBe(true);
    expect(seen.at(-1)?.message).toContain('(3/3 files)');
  });

  it('runs each ingest in a child process in a server that owns its process, and in process otherwise', async () => {
    const ingestChildren = () => childrenRunning(process.pid, 'ingest-child');
    const during: { children: number; tuned: boolean }[] = [];
    const owned = await connect({ cwd: dir, env: {}, boundIngestHeap: true });
    try {
      const r = await owned.client.callTool(
        { name: 'rlm_ingest', arguments: { paths: ['docs'], store: 'child-store', tags: ['kid'] } },
        undefined,
        { onprogress: () => during.push({ children: ingestChildren().length, tuned: heapTuned() }) },
      );
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ documents: 3, added: 3, notes: [] });
      // Progress came from the child while it ran; this process's heap flags were never touched.
      expect(during.length).toBeGreaterThan(0);
      expect(during.every((d) => d.children === 1 && !d.tuned)).toBe(true);
      expect(ingestChildren()).toEqual([]);
      // What the child committed is what the server reads, its options (tags) included.
      const hits = await owned.call('rlm_search', { query: 'rocket launch', store: 'child-store' });
      expect(hits.structuredContent).toMatchObject({
        results: [expect.objectContaining({ tags: expect.arrayContaining(['kid']) })],
      });
      // The child's errors keep their code and message.
      const bad = await owned.call('rlm_ingest', {
        paths: ['docs'],
        store: 'child-bad',
        chunk_tokens: 16,
        overlap_tokens: 16,
      });
      expect(textOf(bad)).toBe(
        'rlm_ingest: overlapTokens must be an integer in [0, chunkTokens): 16 [VALIDATION]',
      );
      expect(existsSync(join(dir, 'child-bad'))).toBe(false);
      // Cancelled: the child stops, nothing is left running, and a first ingest leaves no store behind.
      const big = join(dir, 'big');
      mkdirSync(big);
      for (let i = 0; i < 40; i++)
        writeFileSync(
          join(big, `f${i}.txt`),
          `File ${i}: lanterns drift over the harbour at dusk.\n`.repeat(4000),
        );
      const controller = new AbortController();
      const cancelled = owned.client
        .callTool(
          { name: 'rlm_ingest', arguments: { paths: ['big'], store: 'child-cancelled' } },
          undefined,
          {
            signal: controller.signal,
            onprogress: () => controller.abort(),
          },
        )
        .catch((e: unknown) => e);
      expect(String(await cancelled)).toMatch(/abort/i);
      await expect.poll(() => ingestChildren(), { timeout: 15_000 }).toEqual([]);
      await expect.poll(() => existsSync(join(dir, 'child-cancelled')), { timeout: 15_000 }).toBe(false);
    } finally {
      await owned.close();
    }
    // The default (a server embedded in someone else's program) ingests in its own process.
    const inProcess: number[] = [];
    await s.client.callTool(
      { name: 'rlm_ingest', arguments: { paths: ['docs'], store: 'plain-store' } },
      undefined,
      { onprogress: () => inProcess.push(ingestChildren().length) },
    );
    expect(inProcess.length).toBeGreaterThan(0);
    expect(inProcess.every((n) => n === 0)).toBe(true);
  });

  it('skips unchanged files on a second run', async () => {
    const r = await s.call('rlm_ingest', { paths: ['docs'] });
    expect(r.structuredContent).toMatchObject({ documents: 3, added: 0, skipped: 3 });
  });

  it('checks that the paths exist before creating the store', async () => {
    const r = await s.call('rlm_ingest', { paths: ['does-not-exist'], store: 'x' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      `rlm_ingest: no such file or directory: does-not-exist (${join(dir, 'does-not-exist')}) [BAD_INPUT]`,
    );
    expect(existsSync(join(dir, 'x'))).toBe(false);
    // One missing path among good ones fails the whole call, before anything is written.
    const mixed = await s.call('rlm_ingest', { paths: ['docs', join(dir, 'gone.txt')], store: 'y' });
    expect(textOf(mixed)).toBe(`rlm_ingest: no such file or directory: ${join(dir, 'gone.txt')} [BAD_INPUT]`);
    expect(existsSync(join(dir, 'y'))).toBe(false);
    // Nothing was left open either: the store is still missing for readers, and a good call creates it.
    const search = await s.call('rlm_search', { query: 'rocket', store: 'x' });
    expect(textOf(search)).toMatch(/\[STORE_MISSING\]$/);
    const ok = await s.call('rlm_ingest', { paths: ['docs/crew.txt'], store: 'x' });
    expect(ok.structuredContent).toMatchObject({ documents: 1, added: 1 });
    expect(existsSync(join(dir, 'x'))).toBe(true);
  });

  it('names the field of a bad argument', async () => {
    const r = await s.call('rlm_ingest', { paths: [], chunker: 'words' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/paths must not be empty at paths/);
    expect(textOf(r)).toMatch(/at chunker/);
  });

  it('refuses a tag that is empty or only spaces, to ingest or to search by', async () => {
    for (const [tool, args] of [
      ['rlm_ingest', { paths: ['docs'], store: 'tags-store', tags: ['ok', ''] }],
      ['rlm_ingest', { paths: ['docs'], store: 'tags-store', tags: [' '] }],
      ['rlm_search', { query: 'rocket', tags: ['\t'] }],
    ] as const) {
      const r = await s.call(tool, args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(r)).toMatch(/a tag must not be empty or only spaces at tags\[\d\]/);
    }
    expect(existsSync(join(dir, 'tags-store'))).toBe(false);
  });
});

describe('store reads', () => {
  it('rlm_search ranks chunks', async () => {
    const r = await s.call('rlm_search', { query: 'rocket launch', k: 2 });
    const results = (r.structuredContent as { results: { id: string; document: string; score: number }[] })
      .results;
    expect(results.length).toBeGreaterThan(0);
    expect(results[0]?.document).toMatch(/launch/);
    expect(results[0]).toMatchObject({ path: join(docs, 'launch.md') });
    expect(results.length).toBeLessThanOrEqual(2);
  });

  it('rlm_search takes documents by id or path, and refuses one that names nothing', async () => {
    const unfiltered = await s.call('rlm_search', { query: 'rocket budget' });
    expect((unfiltered.structuredContent as { results: unknown[] }).results.length).toBe(2);
    const byPath = await s.call('rlm_search', { query: 'rocket budget', document: ['docs/launch.md'] });
    const results = (byPath.structuredContent as { results: { document: string }[] }).results;
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((r) => r.document === results[0]!.document && /^launch-md-/.test(r.document))).toBe(
      true,
    );
    const byId = await s.call('rlm_search', { query: 'rocket budget', document: [results[0]!.document] });
    expect(byId.structuredContent).toEqual(byPath.structuredContent);
    const typo = await s.call('rlm_search', {
      query: 'rocket budget',
      document: [results[0]!.document, 'launhc-md'],
    });
    expect(typo.isError).toBe(true);
    expect(textOf(typo)).toBe(
      'rlm_search: search: no document "launhc-md" in the store; give a document id or the path it was ingested from [BAD_INPUT]',
    );
  });

  it("rlm_grep takes documents by a path relative to the server's folder, as rlm_search does", async () => {
    const all = await s.call('rlm_grep', { pattern: 'rocket|budget|crew' });
    const paths = (r: typeof all) => [
      ...new Set((r.structuredContent as { matches: { path: string }[] }).matches.map((m) => m.path)),
    ];
    expect(paths(all).length).toBeGreaterThan(1);
    const byPath = await s.call('rlm_grep', { pattern: 'rocket|budget|crew', document: ['docs/launch.md'] });
    expect(byPath.isError, textOf(byPath)).toBeFalsy();
    expect(paths(byPath)).toEqual([join(docs, 'launch.md')]);
  });

  it('rlm_peek returns the chunk text, and NOT_FOUND for an unknown id', async () => {
    const hit = await s.call('rlm_search', { query: 'crew members' });
    const id = (hit.structuredContent as { results: { id: string }[] }).results[0]!.id;
    const r = await s.call('rlm_peek', { id });
    expect(r.structuredContent).toMatchObject({
      id,
      path: join(docs, 'crew.txt'),
      text: expect.stringContaining('Ada, Grace and Linus'),
    });
    expect(textOf(r)).toContain('Ada, Grace and Linus');
    const missing = await s.call('rlm_peek', { id: 'nope:0' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(
      /^rlm_peek: no chunk or document with id nope:0: give a chunk id \(DOCUMENT:N\), a document id, a memory id .*\[NOT_FOUND\]$/,
    );
  });

  it('rlm_peek reads several ids and character ranges, and records no access', async () => {
    const ids = (await s.call('rlm_grep', { pattern: 'budget|crew' })).structuredContent as {
      matches: { id: string }[];
    };
    const [a, b] = ids.matches.map((m) => m.id);
    const store = await s.ctx.stores.get('store');
    const before = (await store.accessStats(a!)).count;
    const both = await s.call('rlm_peek', { id: [a, b] });
    const value = both.structuredContent as {
      id: string;
      text: string;
      more: { id: string; text: string }[];
    };
    expect(value.id).toBe(a);
    expect(value.more.map((m) => m.id)).toEqual([b]);
    expect(textOf(both)).toBe(`--- ${a}\n${value.text}\n\n--- ${b}\n${value.more[0]!.text}`);
    const ranged = await s.call('rlm_peek', { id: a, start: 4, end: 10 });
    expect(ranged.structuredContent).toMatchObject({
      text: value.text.slice(4, 10),
      range: { start: 4, end: 10, chars: value.text.length },
    });
    expect(ranged.structuredContent).not.toHaveProperty('more');
    const past = await s.call('rlm_peek', { id: a, start: 1000, end: 5 });
    expect(past.structuredContent).toMatchObject({
      text: '',
      range: { start: value.text.length, end: value.text.length },
    });
    expect((await store.accessStats(a!)).count).toBe(before);
    const one = await s.call('rlm_peek', { id: [a, 'nope:1'] });
    expect(textOf(one)).toMatch(/^rlm_peek: no chunk or document with id nope:1: .*\[NOT_FOUND\]$/);
  });

  it('rlm_peek takes a document id and a memory id for the whole document, sliced by start/end', async () => {
    const store = await s.ctx.stores.get('store');
    const doc = (await store.documents()).find((d) => d.path === join(docs, 'launch.md'))!;
    const whole = await s.call('rlm_peek', { id: doc.id });
    expect(whole.isError, textOf(whole)).toBeFalsy();
    expect(whole.structuredContent).toMatchObject({
      id: doc.id,
      document: doc.id,
      path: join(docs, 'launch.md'),
      text: '# Launch\n\nThe rocket launch is planned for Tuesday at dawn.\n',
      tokens: doc.tokens,
    });
    const cut = await s.call('rlm_peek', { id: doc.id, start: 10, end: 20 });
    expect(cut.structuredContent).toMatchObject({
      text: 'The rocket',
      range: { start: 10, end: 20, chars: 60 },
    });
    const remembered = await s.call('rlm_remember', { text: 'Launches slip when it rains.', store: 'mem' });
    const memory = (remembered.structuredContent as { id: string }).id;
    const m = await s.call('rlm_peek', { id: [memory, `${memory}:0`], store: 'mem' });
    expect(m.structuredContent).toMatchObject({
      id: memory,
      text: 'Launches slip when it rains.',
      more: [{ id: `${memory}:0`, text: 'Launches slip when it rains.' }],
    });
  });

  it('rlm_grep returns context lines and stays within its character budget', async () => {
    const other = await ChunkStore.open(join(dir, 'lines-store'), { create: true });
    const lines = [
      'alpha',
      'beta',
      'gamma HIT one',
      'delta',
      'epsilon',
      `${'x'.repeat(2000)} HIT long ${'y'.repeat(2000)}`,
    ];
    await other.ingestText('lines', lines.join('\n'));
    await other.close();
    const r = await s.call('rlm_grep', { pattern: 'HIT', context_lines: 2, store: 'lines-store' });
    const m = (r.structuredContent as { matches: { text: string; before?: string; after?: string }[] })
      .matches;
    expect(m[0]).toMatchObject({ text: 'gamma HIT one', before: 'alpha\nbeta', after: `delta\nepsilon` });
    expect(m[1]!.text).toMatch(/^…x+ HIT long y+…$/);
    expect(m[1]!.text.length).toBeLessThanOrEqual(502);
    expect(m[1]).toMatchObject({ after: '', before: expect.stringMatching(/^delta\nepsilon$/) });
    const small = await s.call('rlm_grep', { pattern: 'HIT', store: 'lines-store', max_chars: 100 });
    expect(small.structuredContent).toMatchObject({ matches: [{ text: 'gamma HIT one' }], truncated: true });
    const plain = await s.call('rlm_grep', { pattern: 'gamma', store: 'lines-store' });
    expect((plain.structuredContent as { matches: object[] }).matches[0]).not.toHaveProperty('before');
  });

  it('rlm_grep finds lines by regex and literal', async () => {
    const r = await s.call('rlm_grep', { pattern: 'forty\\s+units' });
    expect(r.structuredContent).toMatchObject({
      matches: [{ text: 'The budget for the mission is forty units.', path: join(docs, 'budget.txt') }],
      truncated: false,
    });
    const literal = await s.call('rlm_grep', { pattern: 'ADA,', literal: true, ignore_case: true });
    expect((literal.structuredContent as { matches: unknown[] }).matches).toHaveLength(1);
  });

  it('sees documents another process committed after the store was opened', async () => {
    const other = await ChunkStore.open(join(dir, 'store'));
    await other.ingestText('late', 'A late memo about the zeppelin hangar.');
    await other.close();
    const r = await s.call('rlm_grep', { pattern: 'zeppelin' });
    expect((r.structuredContent as { matches: { id: string }[] }).matches[0]?.id).toMatch(/^late:/);
  });

  it('rlm_answer runs over the default store', async () => {
    const trace = join(dir, 'answer.jsonl');
    const model = scripted(dir, 'store.json', [{ depth: 0, reply: 'FINAL("Tuesday")' }]);
    const local = await connect({ cwd: dir, env: { RLM_STORE: 'store', RLM_MODEL: model }, run: { trace } });
    try {
      const r = await local.call('rlm_answer', { question: 'When is the launch?' });
      expect(r.structuredContent).toMatchObject({ answer: 'Tuesday', status: 'final' });
      const start = parseTrace(readFileSync(trace, 'utf8')).find((e) => e.type === 'run_start');
      expect(start?.type === 'run_start' && start.context).toMatchObject({ kind: 'store', documents: 4 });
    } finally {
      await local.close();
    }
  });

  it('a missing store or no store at all is a tool error', async () => {
    const missing = await s.call('rlm_search', { query: 'x', store: 'nowhere' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/no rlm store at .*nowhere.*\[STORE_MISSING\]/);
    const bare = await connect({ cwd: dir });
    try {
      const none = await bare.call('rlm_grep', { pattern: 'x' });
      expect(textOf(none)).toBe(
        'rlm_grep: store is required: pass `store` or start the server with RLM_STORE set [BAD_INPUT]',
      );
    } finally {
      await bare.close();
    }
  });
});

describe('rlm_ingest of paths that cannot be read', () => {
  it('answers notes, not an error, when every path named is skipped (a FIFO), and leaves no store', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const r = await s.call('rlm_ingest', { paths: ['pipe'], store: 'fifo-store' });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      documents: 0,
      added: 0,
      notes: [{ path: fifo, note: expect.stringContaining('FIFO') }],
    });
    expect(existsSync(join(dir, 'fifo-store'))).toBe(false);
  });

  it('notes a file that vanished between the listing and the ingest, and ingests the others', async () => {
    const folder = join(dir, 'vanishing');
    mkdirSync(folder);
    writeFileSync(join(folder, 'stays.md'), '# Stays\n\nThe lighthouse keeper stays.\n');
    writeFileSync(join(folder, 'goes.md'), '# Goes\n\nA temp file an editor removes.\n');
    // The folder is listed first; the file goes just before the store reads the list.
    const get = s.ctx.stores.get.bind(s.ctx.stores);
    s.ctx.stores.get = async (...a: Parameters<typeof get>) => {
      const store = await get(...a);
      const ingestPaths = store.ingestPaths.bind(store);
      store.ingestPaths = (paths, opts) => {
        rmSync(join(folder, 'goes.md'), { force: true });
        return ingestPaths(paths, opts);
      };
      return store;
    };
    try {
      const r = await s.call('rlm_ingest', { paths: ['vanishing'], store: 'vanish-store' });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        added: 1,
        notes: [{ path: join(folder, 'goes.md'), note: 'vanished before it was read' }],
      });
    } finally {
      s.ctx.stores.get = get;
    }
  });
});
