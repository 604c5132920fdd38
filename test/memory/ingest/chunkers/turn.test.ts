import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../../memory/ingest/chunkers/index.ts';
import { expectCovers, expectWellFormed } from './invariants.ts';

const session = readFileSync(
  new URL('../../../fixtures/memory/claude-session.jsonl', import.meta.url),
  'utf8',
);

function lineAt(doc: string, offset: number): number {
  return doc.slice(0, offset).split('\n').length;
}

describe('turn chunker on Claude Code sessions', () => {
  const notes: string[] = [];
  const drafts = chunkText(session, 'turn', { onNote: (n) => notes.push(n) });

  it('makes one chunk per user → assistant exchange', () => {
    expect(drafts).toHaveLength(2);
    expectWellFormed(session, drafts, { sliced: false });
  });

  it('renders text, reduces tools to markers, drops thinking, meta and noise lines', () => {
    expect(drafts[0]!.text).toBe(
      [
        'User: The login test fails one run in five. Can you find out why?',
        '',
        'Assistant: I will run the test a few times.',
        '[tool: Bash npm test -- login --repeat 5]',
        '[tool result]',
        'The session token expires during the test: the clock is not mocked.',
      ].join('\n'),
    );
    expect(drafts[1]!.text).toBe(
      'User: Mock the clock then.\n\nAssistant: [tool: Edit test/login.test.ts]\nDone: the test now uses fake timers.',
    );
    expect(drafts.map((d) => d.text).join('')).not.toMatch(
      /private reasoning|local-command-caveat|hook_progress/,
    );
  });

  it('keeps time, session, branch and the summary as the section', () => {
    expect(drafts[0]!.time).toBe('2025-03-01T10:00:00.000Z');
    expect(drafts[1]!.time).toBe('2025-03-01T10:01:00.000Z');
    expect(drafts[0]!.tags).toEqual(['role:exchange', 'session:5f0c-session', 'branch:fix/login']);
    expect(drafts[0]!.section).toBe('Fix flaky login test > turn 1');
    expect(drafts[1]!.section).toBe('Fix flaky login test > turn 2');
  });

  it('bounds each exchange by its source lines', () => {
    expect(lineAt(session, drafts[0]!.start)).toBe(3);
    expect(lineAt(session, drafts[0]!.end)).toBe(8);
    expect(lineAt(session, drafts[1]!.start)).toBe(10);
    expect(drafts[1]!.end).toBe(session.length - 1);
  });

  it('skips invalid JSON lines with a note instead of failing', () => {
    expect(notes).toEqual(['skipped 1 invalid JSON line (first at line 7)']);
  });
});

describe('turn chunker on generic JSONL', () => {
  it('reads {role, content} lines, with string or block content', () => {
    const doc = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is RLM?', timestamp: '2025-01-02T00:00:00Z' },
      { role: 'assistant', content: [{ type: 'text', text: 'A recursive language model.' }] },
      { role: 'user', content: 'Thanks' },
      { role: 'assistant', content: 'You are welcome.', tool_calls: [{ function: { name: 'lookup' } }] },
    ]
      .map((l) => JSON.stringify(l))
      .join('\r\n');
    const drafts = chunkText(doc, 'turn');
    expectWellFormed(doc, drafts, { sliced: false });
    expect(drafts.map((d) => d.text)).toEqual([
      'System: Be brief.',
      'User: What is RLM?\n\nAssistant: A recursive language model.',
      'User: Thanks\n\nAssistant: You are welcome.\n[tool: lookup]',
    ]);
    expect(drafts[1]!.time).toBe('2025-01-02T00:00:00Z');
    expect(drafts[1]!.tags).toEqual(['role:exchange']);
  });

  it('splits an exchange longer than chunkTokens, mapping parts to their lines', () => {
    const lines = [JSON.stringify({ role: 'user', content: 'Tell me everything.' })];
    for (let i = 0; i < 30; i++) {
      lines.push(
        JSON.stringify({ role: 'assistant', content: `Part ${i}: ${'detail after detail. '.repeat(20)}` }),
      );
    }
    const doc = lines.join('\n');
    const drafts = chunkText(doc, 'turn', { chunkTokens: 300 });
    expectWellFormed(doc, drafts, { sliced: false });
    expect(drafts.length).toBeGreaterThan(5);
    for (const d of drafts) {
      expect(d.tokens).toBeLessThanOrEqual(300);
      const firstPart = /Part (\d+)/.exec(d.text);
      if (firstPart) expect(doc.slice(d.start, d.end)).toContain(`Part ${firstPart[1]}:`);
    }
    expect(drafts[0]!.start).toBe(0);
    expect(drafts.at(-1)!.end).toBe(doc.length);
  });

  it('falls back to lines for JSONL that is not chat, with a note', () => {
    const notes: string[] = [];
    const doc = '{"id":1}\n{"id":2}\n';
    const drafts = chunkText(doc, 'turn', { onNote: (n) => notes.push(n) });
    expect(drafts.map((d) => d.text)).toEqual([doc]);
    expect(notes).toEqual(['no chat messages found in JSONL; chunked by lines']);
  });
});

describe('turn chunker on plain text transcripts', () => {
  const doc = [
    'Transcript exported 2025-01-01.',
    '',
    'User: How do I reset my password?',
    'Assistant: Open settings, then Security.',
    'It takes a minute.',
    '',
    '**Human:** And my username?',
    'AI: You cannot change it.',
    'user: ok',
  ].join('\n');
  const drafts = chunkText(doc, 'turn');

  it('cuts at each user line, keeping exact slices', () => {
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    expect(drafts.map((d) => d.text.trim())).toEqual([
      'Transcript exported 2025-01-01.',
      'User: How do I reset my password?\nAssistant: Open settings, then Security.\nIt takes a minute.',
      '**Human:** And my username?\nAI: You cannot change it.',
      'user: ok',
    ]);
    expect(drafts.map((d) => d.tags)).toEqual([
      ['role:preamble'],
      ['role:exchange'],
      ['role:exchange'],
      ['role:exchange'],
    ]);
    expect(drafts[1]!.section).toBe('turn 1');
  });

  it('splits long exchanges with the size logic', () => {
    const long = `User: go on\nAssistant: ${'More and more text here. '.repeat(400)}\nUser: stop\n`;
    const parts = chunkText(long, 'turn', { chunkTokens: 250 });
    expectWellFormed(long, parts);
    expectCovers(long, parts);
    expect(parts.length).toBeGreaterThan(4);
    for (const d of parts) expect(d.tokens).toBeLessThanOrEqual(250);
  });

  it('falls back to paragraphs when there is no user line', () => {
    const notes: string[] = [];
    const text = 'Just an essay.\n\nWith paragraphs.';
    const drafts = chunkText(text, 'turn', { onNote: (n) => notes.push(n) });
    expectWellFormed(text, drafts);
    expect(notes).toHaveLength(1);
  });
});
