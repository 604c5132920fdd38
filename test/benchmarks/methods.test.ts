import { describe, expect, it } from 'vitest';
import { bm25Prompt, directPrompt, headTokens, retrieve, runMethod } from '../../benchmarks/methods.ts';
import { generateTask } from '../../benchmarks/tasks/index.ts';
import { countTokens } from '../../memory/ingest/tokens.ts';
import type { Model, ModelRequest, ModelResponse } from '../../src/runtime/model.ts';

/** Records the prompt and answers with a fixed text. */
class EchoModel implements Model {
  readonly spec = 'openai:gpt-4o-mini';
  requests: ModelRequest[] = [];
  async complete(req: ModelRequest): Promise<ModelResponse> {
    this.requests.push(req);
    return { text: '  42\n', usage: { inputTokens: 1000, outputTokens: 10 }, model: 'gpt-4o-mini' };
  }
}

describe('baseline prompts', () => {
  it('headTokens keeps the first N tokens exactly at piece boundaries', () => {
    const text = 'alpha beta gamma delta '.repeat(500);
    const head = headTokens(text, 100);
    expect(head.truncated).toBe(true);
    expect(text.startsWith(head.text)).toBe(true);
    expect(countTokens(head.text)).toBeLessThanOrEqual(100);
    expect(countTokens(head.text)).toBeGreaterThanOrEqual(99);
    expect(headTokens('short text', 100)).toEqual({ text: 'short text', truncated: false });
  });

  it('direct puts the (cut) context before the question and says when it was cut', () => {
    const task = generateTask('sniah', { size: 8192, seed: 1, index: 0 });
    const full = directPrompt(task, 100_000);
    expect(full.startsWith('Context:\n')).toBe(true);
    expect(full).toContain(task.context as string);
    expect(full.endsWith(`Question: ${task.question}\nAnswer:`)).toBe(true);
    const cut = directPrompt(task, 500);
    expect(cut).toContain('only its first 500 tokens fit the window');
    expect(countTokens(cut)).toBeLessThan(700);
  });

  it('bm25 retrieves the needle chunk for sniah and multi-document contexts', async () => {
    const sniah = generateTask('sniah', { size: 32768, seed: 2, index: 0 });
    // Only the needle's chunk shares a non-stopword with the question, so it is the only hit.
    const passages = await retrieve(sniah, 3, 300);
    expect(passages).toHaveLength(1);
    expect(passages[0]).toContain(`The magic number is ${sniah.gold.answer}`);
    const prompt = bm25Prompt(sniah, passages);
    expect(prompt).toMatch(/^Context \(the 1 passages/);
    expect(prompt).toContain('[1]\n');
    const hop = generateTask('multihop', { size: 8192, seed: 2, index: 0 });
    const hits = await retrieve(hop, 4, 300);
    const start = /of ([A-Z][a-z]+ [A-Z][a-z]+)\?/.exec(hop.question)![1]!;
    expect(hits.some((p) => p.includes(start))).toBe(true);
  });
});

describe('runMethod', () => {
  it('runs direct with one model call, trims the answer and prices usage', async () => {
    const model = new EchoModel();
    const task = generateTask('oolong', { size: 8192, seed: 1, index: 0 });
    const out = await runMethod('direct', task, {
      model: model.spec,
      modelFactory: async () => model,
      env: {},
    });
    expect(out).toMatchObject({
      answer: '42',
      status: 'final',
      iterations: 1,
      subCalls: 0,
      inputTokens: 1000,
      outputTokens: 10,
    });
    // gpt-4o-mini: $0.15 / M input, $0.60 / M output.
    expect(out.costUsd).toBeCloseTo((1000 * 0.15 + 10 * 0.6) / 1e6, 12);
    expect(model.requests[0]!.depth).toBe(0);
    expect(model.requests[0]!.system).toMatch(/final answer only/);
  });

  it('gives bm25 only k passages', async () => {
    const model = new EchoModel();
    const task = generateTask('oolong', { size: 32768, seed: 1, index: 0 });
    await runMethod('bm25', task, {
      model: model.spec,
      modelFactory: async () => model,
      env: {},
      bm25K: 2,
      bm25ChunkTokens: 200,
    });
    const prompt = model.requests[0]!.messages[0]!.content;
    expect(prompt).toContain('[2]\n');
    expect(prompt).not.toContain('[3]\n');
    expect(countTokens(prompt)).toBeLessThan(1200);
  });
});
