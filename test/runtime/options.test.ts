import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { DEFAULTS, resolveOptions } from '../../src/runtime/options.ts';

const catchErr = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
};

describe('resolveOptions', () => {
  it('applies the documented defaults', () => {
    const o = resolveOptions({ model: 'anthropic:claude-sonnet-4-5' }, {});
    expect(o).toMatchObject({
      model: 'anthropic:claude-sonnet-4-5',
      subModel: 'anthropic:claude-sonnet-4-5',
      maxDepth: 2,
      maxIterations: 20,
      maxConsecutiveErrors: 5,
      subCallConcurrency: 8,
      cache: true,
      trace: undefined,
    });
    expect(o.maxTokens).toBe(Number.POSITIVE_INFINITY);
    expect(o.maxCostUsd).toBe(Number.POSITIVE_INFINITY);
    expect(DEFAULTS.maxDepth).toBe(2);
  });

  it('reads env fallbacks, and explicit options win over them', () => {
    const env = {
      RLM_MODEL: 'openai:gpt-5-mini',
      RLM_SUB_MODEL: 'openai:gpt-5-nano',
      RLM_MAX_DEPTH: '1',
      RLM_MAX_ITERATIONS: '7',
      RLM_MAX_SUB_CALLS: '9',
      RLM_MAX_TOKENS: '1000',
      RLM_MAX_COST_USD: '0.25',
      RLM_MAX_WALL_MS: '5000',
      RLM_SUB_CALL_CONCURRENCY: '2',
      RLM_TRACE: '/tmp/t.jsonl',
    };
    const fromEnv = resolveOptions({}, env);
    expect(fromEnv).toMatchObject({
      model: 'openai:gpt-5-mini',
      subModel: 'openai:gpt-5-nano',
      maxDepth: 1,
      maxIterations: 7,
      maxSubCalls: 9,
      maxTokens: 1000,
      maxCostUsd: 0.25,
      maxWallMs: 5000,
      subCallConcurrency: 2,
      trace: '/tmp/t.jsonl',
    });
    const explicit = resolveOptions({ model: 'anthropic:x', maxDepth: 3, maxIterations: 2 }, env);
    expect(explicit).toMatchObject({
      model: 'anthropic:x',
      subModel: 'openai:gpt-5-nano',
      maxDepth: 3,
      maxIterations: 2,
    });
  });

  it('reads env from options.env when no env argument is given', () => {
    expect(
      resolveOptions({ env: { RLM_MODEL: 'scripted:x.json', RLM_MAX_ITERATIONS: '4' } }).maxIterations,
    ).toBe(4);
  });

  it('rejects bad values with VALIDATION, naming the source', () => {
    const bad = [
      () => resolveOptions({ model: 'm', maxIterations: 0 }, {}),
      () => resolveOptions({ model: 'm', maxDepth: -1 }, {}),
      () => resolveOptions({ model: 'm', maxDepth: 1.5 }, {}),
      () => resolveOptions({ model: 'm', maxIterations: Number.POSITIVE_INFINITY }, {}),
      () => resolveOptions({ model: 'm' }, { RLM_MAX_ITERATIONS: 'lots' }),
    ];
    for (const fn of bad) expect(isRlmError(catchErr(fn), 'VALIDATION')).toBe(true);
    expect(String(catchErr(() => resolveOptions({ model: 'm' }, { RLM_MAX_DEPTH: 'x' })))).toMatch(
      /RLM_MAX_DEPTH/,
    );
  });

  it('requires a model one way or the other', () => {
    const err = catchErr(() => resolveOptions({}, {}));
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect(String(err)).toMatch(/RLM_MODEL/);
  });
});
