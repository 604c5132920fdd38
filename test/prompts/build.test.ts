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
    expect(tokens).toBeLessThan(1400);
    expect(tokens).toBeGreaterThan(400);
  });

  it('root prompt teaches the API, the strategies, the sizes and how to finish', () => {
    const p = buildSystemPrompt('root', text, limits);
    for (const needle of [
      'The context is one text of 4,200,000 characters (~1,050,000 tokens).',
      '```repl',
      'llm_query(prompt, context?, {model, schema})',
      'rlm_query(prompt, context?, {model, schema})',
      '`llm_query_batched(items)`, `rlm_query_batched(items)`',
      '8 in parallel',
      'at most 200,000 characters together (~50,000 tokens)',
      'up to ~160,000 characters per llm_query',
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
    expect(p).toContain("schema: { type: 'array', items: { type: 'boolean' } }");
    expect(p).not.toMatch(/\{\{\w+\}\}/);
  });

  it('says which tool fits which question, and that grep is exhaustive where search is not (issue 30)', () => {
    const p = buildSystemPrompt('root', text, limits);
    expect(p).toContain('Exact questions (count, list, find every, compare fields, dates, versions)');
    expect(p).toContain('are answered by code over the text');
    expect(p).toContain(
      'Questions of meaning over more items than you can read (classify, judge, summarise) need sub-calls',
    );
    // Per-item judgement in small batches, large pieces only for summarising.
    expect(p).toContain('send small batches (20-50 records per call)');
    expect(p).toContain('to summarise or extract, send large pieces');
    expect(p).toContain('every match of a regex (or literal) in the whole text (it misses nothing)');
    expect(p).toContain(
      '`grep(pattern, {count: true})` → `{matches, lines, documents: [{id, path, matches, lines}]}`',
    );
    expect(p).toContain('with no cap');
    const s = buildSystemPrompt('root', store, limits);
    expect(s).toContain(
      'every match of a regex (or literal) in every chunk of every document (it misses nothing)',
    );
    expect(s).toContain('Ranked, not exhaustive: it shows where to look; grep finds every occurrence.');
    expect(s).toContain('search_chunks only shows where to look');
    expect(s).not.toMatch(/Narrow down with grep and search_chunks/);
  });

  it('says how grep offsets, chunk offsets, document reads and peek(start, end) relate', () => {
    const s = buildSystemPrompt('root', store, limits);
    expect(s).toContain(
      '`id` is the chunk the match starts in, `offset` its position there and `documentOffset` its position in ' +
        '`document`, the whole file even where the chunk id names a later part of a big one (`DOC.p2:N`): ' +
        '`peek(document, documentOffset - 500, documentOffset + 500)` reads around it.',
    );
    expect(s).toContain(
      '`get_chunk(id)` → `{id, document, ordinal, start, end, text, tokens, tags}`, `start`/`end` being its place in the document',
    );
    expect(s).toContain(
      "`peek(DOC_ID)` → a whole document's text; `peek(DOC_ID, start, end)` → characters start..end of it",
    );
    expect(s).toContain('`before`/`after` the `context` characters around it, across chunk edges');
    const docs = buildSystemPrompt('root', { ...text, kind: 'documents', documents: 3 }, limits);
    expect(docs).toContain(
      'characters start..end (two numbers) of the context (the documents joined by a newline)',
    );
    expect(docs).toContain(
      '`id` (= `document`) is the document `doc:N` and `offset` (= `documentOffset`) the position in it',
    );
    // --context files: listing them counts no chunks until the index is built; a store has its counts.
    const files = buildSystemPrompt(
      'root',
      { ...text, kind: 'documents', documents: 3, searchable: true },
      limits,
    );
    const nullChunks =
      '`chunks` is null until search_chunks (or get_chunk, neighbors) builds the chunk index';
    expect(files).toContain(nullChunks);
    expect(s).toContain('`list_documents()`');
    expect(s).not.toContain(nullChunks);
  });

  it('states one error convention, the answer language, what FINAL hides and what a bare FINAL name means', () => {
    for (const p of [
      buildSystemPrompt('root', text, limits),
      buildSystemPrompt('sub', text, { ...limits, depth: 1 }),
    ]) {
      expect(p).toContain('A function used wrongly throws an Error saying what to do.');
      expect(p).toContain('A sub-call whose model fails returns a string starting "Error:" instead');
      expect(p).toContain('in the language of the question');
      expect(p).toContain('The run ends there: what that block prints is not shown to you.');
      expect(p).toContain('an unknown bare name is taken for a typo, so quote literal text: FINAL("Paris")');
      expect(p).toContain(
        'A single call that still fails throws; in a batch its answer is null (and listed in `.errors`).',
      );
      expect(p).toContain('answers in order, `.errors` listing `{index, error}` of those that failed');
    }
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
    expect(p).toContain('`list_documents()` → `[{id, path, chars, chunks, modified, hash, duplicateOf?}]`');
    expect(p).toContain("`chars` is the text's `.length`");
    expect(p).toContain('`context`: not loaded; use the functions below.');
    expect(p).toContain("grep('launch date'");
    // `context` is undefined over a store: nothing tells the model to print it.
    expect(p).not.toContain("print the context's size");
    expect(p).toContain('See the documents with list_documents() (keep the result in a variable)');
    expect(countTokens(p)).toBeLessThan(2100);
  });

  it('offers peek(start, end) only where `context` exists: not for a store without loaded text', () => {
    const storeOnly = buildSystemPrompt('root', store, limits);
    expect(storeOnly).not.toContain('peek(start, end)');
    expect(storeOnly).toContain("`peek(CHUNK_ID, start?, end?)` → a chunk's text");
    // Paths ingested for one run: a store, and the text loaded in the isolate as well.
    const ingested = buildSystemPrompt('root', { ...store, chars: 50_000, inIsolate: true }, limits);
    expect(ingested).toContain('peek(start, end)');
    expect(ingested).toContain("`peek(CHUNK_ID, start?, end?)` → a chunk's text");
    // A text too large for the isolate is still read through the host.
    const large = buildSystemPrompt('root', { ...text, inIsolate: false }, limits);
    expect(large).toContain('peek(start, end)');
    expect(large).not.toContain('peek(CHUNK_ID');
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
      '`rlm_query(prompt, context?, {model, schema})` → string: at this depth the same as llm_query',
    );
    expect(p).toContain('You have 8 turns');
    // The garbled grep line of issue 30 ("the text (`doc:0`) the match is in ... in that text (`doc:0`)").
    expect(p).not.toContain('that text (`doc:0`)');
    expect(p).toContain('`id` is `doc:0` and `offset` (= `documentOffset`) the position in `context`.');
    // The caller's format wins over "say so in one line".
    expect(p).toContain('Answer in the form the request asks for (JSON, a list, a number): it wins');
    expect(countTokens(p)).toBeLessThan(1150);
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
    // A caller that asked for JSON only ("[] if none") gets JSON, not a line saying nothing was found.
    expect(buildLeafPrompt()).toContain('in exactly the form the request asks for');
    expect(buildLeafPrompt()).toContain(
      'give that form\'s empty answer (`[]`, 0, "none"), or say so in one line',
    );
    expect(countTokens(buildLeafPrompt())).toBeLessThan(100);
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

  it("describes the text's shape, what was left out and the duplicates (issue 30)", () => {
    const described = describeContext({
      ...store,
      inIsolate: false,
      duplicates: 2,
      leftOut: {
        binary: 12,
        binaryExamples: ['logo.png', 'data.bin', 'x.gz'],
        unreadable: 0,
        unreadableExamples: [],
        hidden: 4,
        ignored: 0,
        excluded: 0,
      },
      sample: {
        lines: ['Package: adduser', 'Status: install ok installed', '```not a fence'],
        window: 262_144,
        blankRuns: 2431,
        starts: [{ start: 'Package:', lines: 2432 }],
      },
    });
    expect(described).toContain(
      '2 documents have the same text as an earlier one (`duplicateOf` in list_documents()).',
    );
    expect(described).toContain(
      'Left out of the context: 12 binary files (logo.png, data.bin, x.gz, ...), 4 hidden paths.',
    );
    expect(described).toContain(
      'The first document begins:\n````\nPackage: adduser\nStatus: install ok installed\n``` not a fence\n````\n' +
        'In its first 262,144 characters: 2,431 blank-line breaks, 2,432 lines starting `Package:`.',
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
