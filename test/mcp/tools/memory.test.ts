import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp.ts';
import { type Connected, connect, textOf } from '../helpers/connect.ts';
import { repl, scripted } from '../helpers/rules.ts';

const dir = tempDir('rlm-mcp-memory-');
let s: Connected;

beforeAll(async () => {
  s = await connect({ cwd: dir, env: { RLM_STORE: 'store' }, allowScriptedModels: true });
});
afterAll(async () => {
  await s.close();
});

describe('memory tools', () => {
  let id = '';

  it('rlm_remember creates the store and saves a memory with source mcp', async () => {
    const r = await s.call('rlm_remember', {
      text: 'We picked PostgreSQL for billing because of its row-level locks.',
      topic: 'architecture',
      importance: 'high',
      tags: ['db'],
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ topic: 'architecture', importance: 'high' });
    id = (r.structuredContent as { id: string }).id;
    expect(id).toMatch(/^mem-/);
    await s.call('rlm_remember', { text: 'The user wants answers in French.', topic: 'preferences' });
  });

  it('rlm_recall finds it by meaning, with filters, and counts the access', async () => {
    const r = await s.call('rlm_recall', { query: 'which database for billing', k: 3 });
    expect(r.isError, textOf(r)).toBeFalsy();
    const results = (r.structuredContent as { results: { id: string; text: string; archived: boolean }[] })
      .results;
    expect(results[0]).toMatchObject({
      id,
      topic: 'architecture',
      importance: 'high',
      tags: ['db'],
      archived: false,
    });
    const none = await s.call('rlm_recall', { query: 'database', topic: 'preferences' });
    expect(none.structuredContent).toEqual({ results: [] });
    const since = await s.call('rlm_recall', { query: 'database', since: '2999-01-01' });
    expect(since.structuredContent).toEqual({ results: [] });
    const store = await s.ctx.stores.get('store');
    expect((await store.getMemory(id))?.accessCount).toBe(1);
    expect((await store.getMemory(id))?.source).toBe('mcp');
  });

  it('rlm_topics and rlm_status report memory totals', async () => {
    const t = await s.call('rlm_topics', {});
    expect(t.structuredContent).toEqual({
      topics: [
        { topic: 'architecture', memories: 1, archived: 0 },
        { topic: 'preferences', memories: 1, archived: 0 },
      ],
    });
    const st = await s.call('rlm_status', {});
    expect((st.structuredContent as { store: { memories: unknown } }).store.memories).toEqual({
      memories: 2,
      archived: 0,
      topics: 2,
      journaled: 2,
    });
  });

  it('takes a topic of 200 emoji: characters as a person counts them', async () => {
    const r = await s.call('rlm_remember', { text: 'kangaroo facts', topic: '🦘'.repeat(200) });
    expect(r.isError, textOf(r)).toBeFalsy();
    await s.call('rlm_forget', { ids: [(r.structuredContent as { id: string }).id] });
  });

  it('bad input is a tool error and writes nothing', async () => {
    const before = await s.call('rlm_topics', {});
    for (const [args, message] of [
      [{ text: 'x', importance: 'urgent' }, /importance/],
      [{ text: '' }, /text must not be empty/],
      [{ text: '   ' }, /text is empty/],
      [{ text: 'x', topic: 't'.repeat(201) }, /the topic is 201 characters; at most 200/],
      [{ text: 'x', topic: '🦘'.repeat(201) }, /the topic is 201 characters; at most 200/],
      [{ text: 'a'.repeat(1024 * 1024 + 1) }, /at most 1048576/],
      [{ text: 'x', tags: ['db', ''] }, /a tag must not be empty or only spaces/],
      [{ text: 'x', tags: ['  '] }, /a tag must not be empty or only spaces/],
    ] as const) {
      const r = await s.call('rlm_remember', args);
      expect(r.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      expect(textOf(r)).toMatch(message);
    }
    expect((await s.call('rlm_topics', {})).structuredContent).toEqual(before.structuredContent);
  });

  it('rlm_answer over the store sees memories through search_chunks with type and topic filters', async () => {
    const model = scripted(dir, 'memory-answer.json', [
      { depth: 0, match: 'row-level', reply: 'FINAL(PostgreSQL)' },
      {
        depth: 0,
        times: 1,
        reply: `Let me look at the memories.\n${repl("const hits = search_chunks('database billing', { type: 'memory', topic: 'architecture' });\nprint(hits.map((h) => get_chunk(h.id).text).join('\\n'));")}`,
      },
    ]);
    const r = await s.call('rlm_answer', { question: 'Which database did we pick?', store: 'store', model });
    expect(r.structuredContent, textOf(r)).toMatchObject({ answer: 'PostgreSQL', status: 'final' });
  });

  it('rlm_forget deletes for good; an unknown id fails and deletes nothing', async () => {
    const bad = await s.call('rlm_forget', { ids: [id, 'mem-nope'] });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/no memory with id mem-nope.*\[NOT_FOUND\]/);
    const r = await s.call('rlm_forget', { ids: [id] });
    expect(r.structuredContent).toEqual({ forgotten: 1, ids: [id], summaries: [], restored: [] });
    const after = await s.call('rlm_recall', { query: 'PostgreSQL billing', archived: true });
    expect(after.structuredContent).toEqual({ results: [] });
    expect(readdirSync(join(dir, 'store')).some((f) => f.startsWith('memories-'))).toBe(false);
  });
});

describe('rlm_remember with automatic consolidation that fails', () => {
  it('stores the memory once and says why consolidation failed, not an error a client would retry', async () => {
    const c = await connect({ cwd: tempDir('rlm-mcp-autofail-'), env: {}, allowScriptedModels: true });
    try {
      const store = await c.ctx.stores.get('store', { create: true });
      // A model that cannot be built where the server runs: no key in its environment.
      await store.configureMemory({ consolidateThreshold: 2, autoConsolidate: 'anthropic:some-model' });
      for (const text of ['cat one', 'cat two'])
        await c.call('rlm_remember', { text, topic: 'cats', store: 'store' });
      const r = await c.call('rlm_remember', { text: 'cat three', topic: 'cats', store: 'store' });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        topic: 'cats',
        consolidationError: {
          code: 'BAD_INPUT',
          message: expect.stringContaining('ANTHROPIC_API_KEY is not set'),
        },
      });
      expect((await store.topics()).find((t) => t.topic === 'cats')?.memories).toBe(3);
    } finally {
      await c.close();
    }
  });
});

describe("a store the MCP tools would make among the user's files", () => {
  it('is refused, as the CLI refuses it without --create: nothing is written there', async () => {
    const cwd = tempDir('rlm-mcp-foreign-');
    const docs = join(cwd, 'docs');
    mkdirSync(docs);
    writeFileSync(join(docs, 'mine.txt'), 'my own notes');
    const c = await connect({ cwd, env: {}, allowScriptedModels: true });
    try {
      const r = await c.call('rlm_remember', { text: 'x', store: 'docs' });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain(`${docs} is not an rlm store and is not empty`);
      expect(readdirSync(docs)).toEqual(['mine.txt']);
    } finally {
      await c.close();
    }
  });
});
