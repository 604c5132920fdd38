import { describe, expect, it } from 'vitest';
import { findFinal, MAX_REPLY_CHARS, parseReply } from '../../src/runtime/parse.ts';

describe('parseReply: blocks', () => {
  it('extracts repl blocks in order and leaves other fences alone', () => {
    const reply = [
      'First I look.',
      '```repl',
      'print(context.length)',
      '```',
      'For illustration only:',
      '```js',
      'print("never")',
      '```',
      '```python',
      'x = 1',
      '```',
      '```repl',
      'const a = 1;',
      'print(a)',
      '```',
    ].join('\n');
    const p = parseReply(reply);
    expect(p.blocks.map((b) => b.code)).toEqual(['print(context.length)', 'const a = 1;\nprint(a)']);
    expect(p.blocks.map((b) => b.line)).toEqual([2, 12]);
    expect(p.prose).toContain('For illustration only:');
    expect(p.prose).not.toContain('never');
  });

  it('accepts tildes, longer fences, indentation and an uppercase tag', () => {
    const p = parseReply('  ~~~REPL\nprint(1)\n  ~~~\n````repl\nconst s = "```";\n````');
    expect(p.blocks.map((b) => b.code)).toEqual(['print(1)', 'const s = "```";']);
  });

  it('runs an unclosed repl fence to the end of the reply', () => {
    expect(parseReply('```repl\nprint(1)\nprint(2)').blocks[0]?.code).toBe('print(1)\nprint(2)');
  });

  it('does not treat a bare ``` fence or ```javascript as runnable', () => {
    expect(parseReply('```\nprint(1)\n```\n```javascript\nprint(2)\n```').blocks).toEqual([]);
  });
});

describe('parseReply: FINAL', () => {
  it('takes a FINAL that starts a line and ends the reply', () => {
    expect(parseReply('The count is verified.\nFINAL(42)').final).toEqual({ kind: 'final', answer: '42' });
    expect(parseReply('  - FINAL(42)  \n\n').final).toEqual({ kind: 'final', answer: '42' });
  });

  it('ignores FINAL mentioned in prose: mid-line, in backticks, or followed by more text', () => {
    expect(parseReply('So the answer is FINAL(42) as computed.').final).toBeNull();
    expect(parseReply("I'll finish with FINAL(answer) once verified").final).toBeNull();
    expect(parseReply('I will call `FINAL(answer)` next.').final).toBeNull();
    expect(parseReply('`FINAL(answer)`').final).toBeNull();
    expect(parseReply('FINAL(answer)\nbut first let me check.').final).toBeNull();
  });

  it('ignores a FINAL before a repl block and takes one after it', () => {
    const before = 'FINAL(total)\n```repl\nconst total = 3;\n```';
    expect(parseReply(before).final).toBeNull();
    const after = '```repl\nconst total = 3;\n```\nFINAL(total)';
    expect(parseReply(after).final).toEqual({ kind: 'final', answer: 'total', identifier: 'total' });
  });

  it('marks a bare identifier argument so the loop can read the variable', () => {
    expect(parseReply('FINAL(answer)').final).toEqual({
      kind: 'final',
      answer: 'answer',
      identifier: 'answer',
    });
    expect(parseReply('FINAL(two words)').final).toEqual({ kind: 'final', answer: 'two words' });
    expect(parseReply('FINAL("answer")').final).toEqual({ kind: 'final', answer: 'answer' });
  });

  it('balances nested parentheses and spans lines', () => {
    const p = parseReply('Done.\nFINAL(The totals (after tax (15%)) are:\n- a (1)\n- b (2))\n');
    expect(p.final).toEqual({ kind: 'final', answer: 'The totals (after tax (15%)) are:\n- a (1)\n- b (2)' });
  });

  it('ignores parentheses inside a quoted argument and unquotes it', () => {
    expect(findFinal('FINAL("a ) tricky ( answer")')).toEqual({
      kind: 'final',
      answer: 'a ) tricky ( answer',
    });
    expect(findFinal("FINAL('it\\'s \\\"x\\\"\\n')")).toEqual({ kind: 'final', answer: 'it\'s "x"\n' });
  });

  it("survives apostrophes in prose (the user's (old) id)", () => {
    expect(findFinal("FINAL(the user's (old) id is 7)")).toEqual({
      kind: 'final',
      answer: "the user's (old) id is 7",
    });
  });

  it('ignores FINAL inside any fence, including non-repl ones', () => {
    expect(parseReply('```text\nFINAL(wrong)\n```\nstill working').final).toBeNull();
    expect(parseReply('```repl\nFINAL(x)\n```').final).toBeNull();
    expect(parseReply('```text\nFINAL(wrong)\n```').final).toBeNull();
  });

  it('reads FINAL_VAR with or without quotes', () => {
    expect(parseReply('Done:\nFINAL_VAR(result)').final).toEqual({ kind: 'final_var', name: 'result' });
    expect(parseReply("FINAL_VAR('summary')").final).toEqual({ kind: 'final_var', name: 'summary' });
  });

  it('skips unbalanced, empty or embedded names', () => {
    expect(findFinal('FINAL(never closed')).toBeNull();
    expect(findFinal('FINAL()')).toBeNull();
    expect(findFinal('MY_FINAL(3)')).toBeNull();
    expect(findFinal('obj.FINAL(4)')).toBeNull();
  });

  it('keeps a template literal with interpolation raw', () => {
    const raw = '`total $' + '{n}`';
    expect(findFinal(`FINAL(${raw})`)).toEqual({ kind: 'final', answer: raw });
  });
});

describe('parseReply: javascript fences and hostile replies', () => {
  it('reports ```js and ```javascript fences instead of silently skipping them', () => {
    const p = parseReply('Let me look.\n```javascript\nprint(1)\n```\n```js\nprint(2)\n```\n```text\nx\n```');
    expect(p.blocks).toEqual([]);
    expect(p.ignored).toEqual([
      { lang: 'javascript', line: 2 },
      { lang: 'js', line: 5 },
    ]);
  });

  // Work counters, not timings: each case would take seconds with a quadratic scan, so a regression shows
  // as a test timeout rather than a flaky threshold.
  it('parses a long backtick line in linear time (no fence backtracking)', () => {
    const line = `\`\`\`${'a'.repeat(200_000)}\``;
    const p = parseReply(`${line}\n${line}\n${line}`);
    expect(p.blocks).toEqual([]);
    expect(p.prose.length).toBeGreaterThan(600_000);
  });

  it('scans a reply full of FINAL( openings in linear time', () => {
    const p = parseReply(`${'FINAL(\n'.repeat(50_000)}FINAL(done)`);
    expect(p.final).toEqual({ kind: 'final', answer: 'done', identifier: 'done' });
    const q = parseReply('FINAL('.repeat(100_000) + ')');
    expect(q.final).toBeNull();
  });

  it('reads only the first MAX_REPLY_CHARS characters of a reply', () => {
    const p = parseReply(`${'x'.repeat(MAX_REPLY_CHARS)}\nFINAL(late)`);
    expect(p.truncated).toBe(true);
    expect(p.final).toBeNull();
  });
});
