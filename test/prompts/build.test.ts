import { describe, expect, it } from 'vitest';
import { countTokens } from '../../memory/ingest/tokens.ts';
import { buildLeafPrompt, buildSystemPrompt, describeContext, fill } from '../../src/prompts/build.ts';
import { firstMessage, turnFeedback } from '../../src/prompts/messages.ts';
import type { ContextShape, PromptLimits } from '../../src/prompts/shape.ts';

const limits: PromptLimits = {
  depth: 0,
  maxDepth: 2,
  maxIterations: 20,
  maxOutputCharsPerBlock: 10_000,
  maxSubCallChars: 200_000,
  subCallConcurrency: 8,
  maxAnswerChars: 200_000,
};
const text: ContextShape = {
  kind: 'string',
  chars: 4_200_000,
  tokens: 1_050_000,
  documents: 1,
  chunks: 0,
  inIsolate: true,
};
const store: ContextShape = {
  kind: 'store',
  chars: 9_000_000,
  tokens: 2_300_000,
  documents: 340,
  chunks: 1210,
  inIsolate: false,
};

describe('system prompts', () => {
  it('root prompt over one large text (snapshot) stays short', async () => {
    const p = buildSystemPrompt('root', text, limits);
    await expect(p).toMatchFileSnapshot('__snapshots__/root-text.md');
    const tokens = countTokens(p);
    // Reported in the lead's notes; the bound keeps the prompt from creeping.
    expect(tokens).toBeLessThan(1300);
    expect(tokens).toBeGreaterThan(400);
  });

  it('root prompt teaches the API, the strategies, the sizes and how to finish', () => {
    const p = buildSystemPrompt('root', text, limits);
    for (const needle of [
      'The context is one text of 4,200,000 characters (~1,050,000 tokens).',
      '```repl',
      'llm_query(prompt, context?, {model?})',
      'rlm_query(prompt, context?, {model?})',
      '`llm_query_batched(items)`, `rlm_query_batched(items)`',
      '8 in parallel',
      'at most 200,000 characters together (~50,000 tokens)',
      'pieces of about 160,000 characters',
      'Only its `prompt` counts against the 200,000-character limit',
      'Object.hasOwn(o, k)',
      "A block's last expression is shown",
      'two levels deep',
      'Answers are at most 200,000 characters',
      'FINAL mentioned mid-sentence or in backticks does not count',
      'cut to 10,000 characters per block',
      'grep(pattern',
      'peek(start, end)',
      'FINAL(answer)',
      'FINAL_VAR("name")',
      'You have 20 turns',
      'Look before you plan',
      'Check before you finish',
    ]) {
      expect(p).toContain(needle);
    }
    expect(p).not.toContain('search_chunks(query');
    expect(p).not.toContain("FINAL_VAR('");
    expect(p).not.toContain('list_documents');
    expect(p).toContain(
      "llm_query_batched(pieces.map((p) => ({ prompt: 'List every date in this text.', context: p })))",
    );
    expect(p).not.toMatch(/\{\{\w+\}\}/);
  });

  it('root prompt over a store (snapshot) lists documents, the chunk functions and how to explore', async () => {
    const listed: ContextShape = {
      ...store,
      documentList: Array.from({ length: 20 }, (_, i) => ({
        path: `docs/note-${i}.md`,
        chars: 1000 + i,
        chunks: 2,
      })),
    };
    const p = buildSystemPrompt('root', listed, limits);
    await expect(p).toMatchFileSnapshot('__snapshots__/root-store.md');
    expect(p).toContain('chunk store of 340 documents in 1,210 chunks');
    expect(p).toContain('- docs/note-0.md (1,000 chars, 2 chunks)');
    expect(p).toContain('... and 320 more: list_documents() returns them all.');
    expect(p).toContain('`list_documents()` → `[{id, path, title?, chars, chunks, modified}]`');
    expect(p).toContain('`id` is the chunk the match is in, `offset` its character position in that chunk');
    expect(p).toContain('`context`: not loaded; use the functions below.');
    expect(p).toContain("search_chunks('launch date'");
    // `context` is undefined over a store: nothing tells the model to print it.
    expect(p).not.toContain("print the context's size");
    expect(p).toContain('See the documents with list_documents()');
    expect(countTokens(p)).toBeLessThan(1700);
  });

  it('offers peek(start, end) only where `context` exists: not for a store without loaded text', () => {
    const storeOnly = buildSystemPrompt('root', store, limits);
    expect(storeOnly).not.toContain('peek(start, end)');
    expect(storeOnly).toContain("`peek(id, start?, end?)` (a string id) → a chunk's text");
    // Paths ingested for one run: a store, and the text loaded in the isolate as well.
    const ingested = buildSystemPrompt('root', { ...store, chars: 50_000, inIsolate: true }, limits);
    expect(ingested).toContain('peek(start, end)');
    expect(ingested).toContain("`peek(id, start?, end?)` (a string id) → a chunk's text");
    // A text too large for the isolate is still read through the host.
    const large = buildSystemPrompt('root', { ...text, inIsolate: false }, limits);
    expect(large).toContain('peek(start, end)');
    expect(large).not.toContain('peek(id, start?');
  });

  it('sub-RLM prompt (snapshot): plain answers for a program, leaf sub-calls at maxDepth', async () => {
    const sub: ContextShape = {
      kind: 'string',
      chars: 50_000,
      tokens: 12_500,
      documents: 1,
      chunks: 0,
      inIsolate: true,
    };
    const p = buildSystemPrompt('sub', sub, { ...limits, depth: 1, maxIterations: 8 });
    await expect(p).toMatchFileSnapshot('__snapshots__/sub.md');
    expect(p).toContain(
      '`rlm_query(prompt, context?, {model?})` → string: at this depth the same as llm_query',
    );
    expect(p).toContain('You have 8 turns');
    expect(countTokens(p)).toBeLessThan(1100);
  });

  it('says llm_query is unavailable when the next depth is beyond maxDepth', () => {
    const p = buildSystemPrompt('root', text, { ...limits, maxDepth: 0 });
    expect(p).toContain('`llm_query` and `rlm_query` are not available at this depth');
    expect(p).not.toContain('llm_query_batched');
    expect(p).toMatch(/^3\. Check before you finish/m);
  });

  it('leaf prompt is a short plain instruction (snapshot)', async () => {
    await expect(buildLeafPrompt()).toMatchFileSnapshot('__snapshots__/leaf.md');
    expect(buildLeafPrompt()).toMatch(/^You answer one focused request/);
    expect(countTokens(buildLeafPrompt())).toBeLessThan(80);
  });
});

describe('describeContext', () => {
  it('states shape and size for each kind', () => {
    expect(describeContext({ ...text, chars: 12, tokens: 3 })).toBe(
      'The context is one text of 12 characters (~3 tokens).',
    );
    const docs: ContextShape = {
      kind: 'documents',
      chars: 3000,
      tokens: 750,
      documents: 30,
      chunks: 0,
      documentChars: [1000, 2000],
      inIsolate: false,
    };
    expect(describeContext(docs)).toBe(
      'The context is 30 documents, 3,000 characters in total (~750 tokens). Document lengths: 1,000, 2,000, .... ' +
        'It is longer than the sandbox can hold, so `context` is not loaded: read it with peek(start, end) and grep.',
    );
    expect(
      describeContext({ kind: 'none', chars: 0, tokens: 0, documents: 0, chunks: 0, inIsolate: false }),
    ).toMatch(/no context/);
    // Files read for a run, over the sandbox's limit: the limit and the functions to use instead.
    expect(
      describeContext({
        ...text,
        chars: 600_000_000,
        tokens: 150_000_000,
        inIsolate: false,
        isolateLimit: 536_870_888,
        searchable: true,
      }),
    ).toBe(
      'The context is one text of 600,000,000 characters (~150,000,000 tokens). It is longer than the sandbox ' +
        'can hold (536,870,888 characters), so `context` is not loaded: read it with peek(start, end), grep and search_chunks.',
    );
  });
});

describe('messages and fill', () => {
  it('fill refuses unknown placeholders', () => {
    expect(fill('a {{x}} b', { x: 1500 })).toBe('a 1,500 b');
    expect(() => fill('{{missing}}', {})).toThrow(/missing/);
  });

  it('turn feedback lists each block with errors, resets and the turn count', () => {
    const msg = turnFeedback(
      [
        { index: 1, stdout: 'out', error: null, reset: false },
        {
          index: 2,
          stdout: '',
          error: { code: 'RUNTIME', message: 'x is not defined', line: 3, column: 4 },
          reset: true,
        },
        { index: 3, stdout: '', error: null, reset: false },
      ],
      ['a note'],
      2,
      20,
    );
    expect(msg).toBe(
      '[block 1]\nout\n\n[block 2]\nError (RUNTIME at line 3:4): x is not defined\n' +
        'The session was reset by a fatal limit: variables from earlier blocks are gone.\n\n' +
        '[block 3]\n(no output)\n\na note\n\n[turn 2 of 20]',
    );
  });

  it('the first message carries the question and, for short sub-call contexts, the context itself', () => {
    expect(firstMessage(' Why? ', text)).toBe('Why?');
    expect(firstMessage('Why?', { ...text, chars: 5 }, 'hello')).toBe(
      'Why?\n\nThe context in full (5 characters, also in `context`):\nhello',
    );
  });
});
