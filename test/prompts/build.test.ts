import { describe, expect, it } from 'vitest';
import { countTokens } from '../../memory/tokens.ts';
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
  it('root prompt over one large text (snapshot) stays short', () => {
    const p = buildSystemPrompt('root', text, limits);
    expect(p).toMatchSnapshot();
    const tokens = countTokens(p);
    // Reported in the lead's notes; the bound keeps the prompt from creeping.
    expect(tokens).toBeLessThan(1000);
    expect(tokens).toBeGreaterThan(400);
  });

  it('root prompt teaches the API, the strategies, the sizes and how to finish', () => {
    const p = buildSystemPrompt('root', text, limits);
    for (const needle of [
      'The context is one text of 4,200,000 characters (~1,050,000 tokens).',
      '```repl',
      'llm_query(prompt, context?)',
      'llm_query_batched(prompts)',
      '8 in parallel',
      'about 200,000 characters (~50,000 tokens)',
      'cut to 10,000 characters per block',
      'grep(pattern',
      'peek(start, end)',
      'FINAL(answer)',
      "FINAL_VAR('name')",
      'You have 20 turns',
      'Look before you plan',
      'Check before you finish',
    ]) {
      expect(p).toContain(needle);
    }
    expect(p).not.toContain('search_chunks(query');
    expect(p).not.toMatch(/\{\{\w+\}\}/);
  });

  it('root prompt over a store (snapshot) lists the chunk functions and a search example', () => {
    const p = buildSystemPrompt('root', store, limits);
    expect(p).toMatchSnapshot();
    expect(p).toContain('chunk store of 340 documents in 1,210 chunks');
    expect(p).toContain('`context`: not loaded; use the functions below.');
    expect(p).toContain("search_chunks('launch date'");
  });

  it('offers peek(start, end) only where `context` exists: not for a store without loaded text', () => {
    const storeOnly = buildSystemPrompt('root', store, limits);
    expect(storeOnly).not.toContain('peek(start, end)');
    expect(storeOnly).toContain("`peek(id)` → a chunk's text");
    // Paths ingested for one run: a store, and the text loaded in the isolate as well.
    const ingested = buildSystemPrompt('root', { ...store, chars: 50_000, inIsolate: true }, limits);
    expect(ingested).toContain('peek(start, end)');
    expect(ingested).toContain("`peek(id)` → a chunk's text");
    // A text too large for the isolate is still read through the host.
    const large = buildSystemPrompt('root', { ...text, inIsolate: false }, limits);
    expect(large).toContain('peek(start, end)');
    expect(large).not.toContain('peek(id)');
  });

  it('sub-RLM prompt (snapshot): plain answers for a program, leaf sub-calls at maxDepth', () => {
    const sub: ContextShape = {
      kind: 'string',
      chars: 50_000,
      tokens: 12_500,
      documents: 1,
      chunks: 0,
      inIsolate: true,
    };
    const p = buildSystemPrompt('sub', sub, { ...limits, depth: 1, maxIterations: 8 });
    expect(p).toMatchSnapshot();
    expect(p).toContain('(a plain completion: no code, no tools)');
    expect(p).toContain('You have 8 turns');
    expect(countTokens(p)).toBeLessThan(800);
  });

  it('says llm_query is unavailable when the next depth is beyond maxDepth', () => {
    const p = buildSystemPrompt('root', text, { ...limits, maxDepth: 0 });
    expect(p).toContain('`llm_query` is not available at this depth');
    expect(p).not.toContain('llm_query_batched');
    expect(p).toMatch(/^3\. Check before you finish/m);
  });

  it('leaf prompt is a short plain instruction', () => {
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
        'It is too large to load whole: read it through the functions below.',
    );
    expect(
      describeContext({ kind: 'none', chars: 0, tokens: 0, documents: 0, chunks: 0, inIsolate: false }),
    ).toMatch(/no context/);
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
