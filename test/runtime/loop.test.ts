import { describe, expect, it } from 'vitest';
import { lastUser, repl, sequence } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

describe('RLM loop', () => {
  it('accepts an answer given at once, without creating a sandbox', async () => {
    const { rlm, model, sandboxes } = setup(sequence('The capital is known.\nFINAL(Paris)'));
    const r = await rlm.answer({ question: 'Capital of France?', context: 'France: capital Paris.' });
    expect(r).toMatchObject({
      answer: 'Paris',
      status: 'final',
      iterations: 1,
      subCalls: 0,
      maxDepthReached: 0,
    });
    expect(model.requests).toHaveLength(1);
    expect(sandboxes.created).toHaveLength(0);
    expect(r.usage.inputTokens).toBeGreaterThan(0);
    expect(r.usage.outputTokens).toBeGreaterThan(0);
  });

  it('runs blocks over several turns in one persistent session and feeds outputs back', async () => {
    const { rlm, model, sandboxes } = setup(
      sequence(
        repl('total = context.length\nprint("len", total)'),
        `Now the double.\n${repl('doubled = total * 2\nprint(doubled)')}`,
        'FINAL(22)',
      ),
    );
    const r = await rlm.answer({ question: 'q', context: 'hello world' });
    expect(r).toMatchObject({ answer: '22', status: 'final', iterations: 3 });
    expect(sandboxes.created).toHaveLength(1);
    expect(sandboxes.created[0]?.runs).toBe(2);
    expect(sandboxes.created[0]?.disposed).toBe(true);
    expect(lastUser(model.requests[1]!)).toContain('[block 1]\nlen 11');
    expect(lastUser(model.requests[2]!)).toContain('[block 1]\n22');
    expect(lastUser(model.requests[2]!)).toContain('[turn 2 of 20]');
    // The conversation alternates and keeps the model's own replies.
    expect(model.requests[2]!.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
  });

  it('runs every repl block of a reply in order but never other fences', async () => {
    const { rlm, model, sandboxes } = setup(
      sequence(
        ['```js\nprint("illustration")\n```', repl('print("a")'), repl('print("b")')].join('\n'),
        'FINAL("done")',
      ),
    );
    await rlm.answer({ question: 'q', context: 'c' });
    expect(sandboxes.created[0]?.runs).toBe(2);
    const fed = lastUser(model.requests[1]!);
    expect(fed).toContain('[block 1]\na');
    expect(fed).toContain('[block 2]\nb');
    expect(fed).not.toContain('illustration');
  });

  it('finishes on FINAL called in code and skips the blocks after it', async () => {
    const { rlm, sandboxes } = setup(sequence(`${repl('FINAL("from code")')}\n${repl('print("not run")')}`));
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ answer: 'from code', status: 'final', iterations: 1 });
    expect(sandboxes.created[0]?.runs).toBe(1);
  });

  it('tells the model when FINAL_VAR names a missing variable, then accepts it once defined', async () => {
    const { rlm, model } = setup(
      sequence('FINAL_VAR(result)', `${repl('result = "forty-two"')}\nFINAL_VAR(result)`),
    );
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ answer: 'forty-two', status: 'final', iterations: 2 });
    expect(lastUser(model.requests[1]!)).toContain('no variable named `result`');
  });

  it('nudges a reply with neither code nor FINAL', async () => {
    const { rlm, model } = setup(sequence('Let me think about it.', 'FINAL("ok")'));
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r.status).toBe('final');
    expect(lastUser(model.requests[1]!)).toContain('no ```repl block and no FINAL');
  });

  it('after maxIterations asks once more for a final answer and reports max_iterations', async () => {
    const { rlm, model } = setup(
      (req) =>
        lastUser(req).includes('used all your turns')
          ? 'My best guess:\nFINAL(probably 7)'
          : repl('print(1)'),
      { maxIterations: 3 },
    );
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ answer: 'probably 7', status: 'max_iterations', iterations: 3 });
    expect(model.requests).toHaveLength(4);
  });

  it('uses the last reply prose when the last call gives no FINAL', async () => {
    const { rlm } = setup(
      (req) => (lastUser(req).includes('used all your turns') ? 'It is blue.' : repl('print(1)')),
      {
        maxIterations: 1,
      },
    );
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ answer: 'It is blue.', status: 'max_iterations', iterations: 1 });
  });

  it('ends with status error after maxConsecutiveErrors failing blocks in a row', async () => {
    const { rlm, model } = setup(sequence(`I think it is 5.\n${repl('throw new Error("boom")')}`), {
      maxConsecutiveErrors: 3,
    });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r.status).toBe('error');
    expect(r.iterations).toBe(3);
    expect(model.requests).toHaveLength(3);
    expect(r.error?.message).toMatch(/3 code blocks failed in a row; last: boom/);
    expect(r.answer).toBe('I think it is 5.');
  });

  it('resets the error count after a block succeeds', async () => {
    const bad = repl('throw new Error("boom")');
    const { rlm } = setup(sequence(bad, bad, repl('print(1)'), bad, bad, 'FINAL("ok")'), {
      maxConsecutiveErrors: 3,
    });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ status: 'final', answer: 'ok', iterations: 6 });
  });

  it('reports a provider failure at the root as status error', async () => {
    const { rlm } = setup(() => {
      throw new Error('503 overloaded');
    });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r.status).toBe('error');
    expect(r.error).toEqual({ code: 'PROVIDER', message: 'fake:model: 503 overloaded' });
  });

  it('shows syntax errors to the model with their code', async () => {
    const { rlm, model } = setup(sequence(repl('let = ;'), 'FINAL("fixed")'));
    await rlm.answer({ question: 'q', context: 'c' });
    expect(lastUser(model.requests[1]!)).toMatch(/Error \(SYNTAX\)/);
  });
});
