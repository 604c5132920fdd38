import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { LIMIT_VARIABLES } from '../../core/env.ts';
import { DEFAULT_LIMITS } from '../../src/mcp/limits.ts';
import { answerInput } from '../../src/mcp/tools/answer.ts';
import { boundedLimit, limitSchemas, runLimitsSchema } from '../../src/runtime/limit-schemas.ts';
import { checkLimit, DEFAULTS, isOutputTokens, LIMIT_NAMES } from '../../src/runtime/option-schema.ts';
import { resolveOptions } from '../../src/runtime/options.ts';
import { cli } from '../cli/helpers.ts';
import { thrown } from '../helpers/errors.ts';

const RULES = path.resolve(import.meta.dirname, '../../examples/sections.json');

describe('run limit schemas', () => {
  it('accept every default', () => {
    for (const name of LIMIT_NAMES)
      expect(limitSchemas[name].safeParse(DEFAULTS[name]).success, name).toBe(true);
    expect(runLimitsSchema.safeParse(DEFAULTS).success).toBe(true);
  });

  it('give the same verdict as the checks the library and the CLI make without zod', () => {
    const values = [0, 1, -1, 0.5, 1.5, 100, 99, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, null, true];
    const accepts = (name: (typeof LIMIT_NAMES)[number], value: unknown): boolean => {
      try {
        return checkLimit(name, value, name) === value;
      } catch {
        return false;
      }
    };
    for (const name of LIMIT_NAMES) {
      for (const value of values)
        expect(accepts(name, value), `${name} ${String(value)}`).toBe(
          limitSchemas[name].safeParse(value).success,
        );
    }
    for (const value of values)
      expect(isOutputTokens(value), String(value)).toBe(z.number().int().min(1).safeParse(value).success);
  });

  it('give the library, env variables and CLI flags the same verdict and the same message', () => {
    const cases: [keyof typeof DEFAULTS, unknown, boolean][] = [
      ['maxDepth', 0, true],
      ['maxDepth', -1, false],
      ['maxDepth', 1.5, false],
      ['maxIterations', 0, false],
      ['maxCostUsd', 0, true],
      ['maxCostUsd', 0.25, true],
      ['maxTokens', Number.POSITIVE_INFINITY, true],
      ['maxIterations', Number.POSITIVE_INFINITY, false],
      ['subCallConcurrency', 'lots', false],
    ];
    for (const [name, value, ok] of cases) {
      const env = (LIMIT_VARIABLES as Partial<Record<string, string>>)[name];
      if (ok) {
        expect(resolveOptions({ model: 'm', [name]: value }, {})[name]).toBe(value);
        if (env) expect(resolveOptions({ model: 'm' }, { [env]: String(value) })[name]).toBe(value);
        expect(checkLimit(name, String(value), '--flag', 'BAD_INPUT')).toBe(value);
        continue;
      }
      const library = thrown(() => resolveOptions({ model: 'm', [name]: value }, {}));
      expect(library.code, `${name}=${String(value)}`).toBe('VALIDATION');
      // "maxDepth must be an integer >= 0, got -1": the same sentence whatever the source.
      const rule = library.message.replace(/, got .*$/, '').replace(name, '');
      if (env) {
        const fromEnv = thrown(() => resolveOptions({ model: 'm' }, { [env]: String(value) }));
        expect(fromEnv.message).toBe(`${env}${rule}, got ${JSON.stringify(String(value))}`);
      }
      const flag = thrown(() => checkLimit(name, String(value), '--flag', 'BAD_INPUT'));
      expect(flag.code).toBe('BAD_INPUT');
      expect(flag.message).toBe(`--flag${rule}, got ${JSON.stringify(String(value))}`);
    }
  });

  it('read from text (a flag, a variable) only as plain decimals', () => {
    for (const [name, text] of [
      ['maxDepth', '0x10'],
      ['maxDepth', '1e1'],
      ['maxIterations', '0b11'],
      ['maxCostUsd', '1e1'],
      ['maxCostUsd', '0x1'],
    ] as const) {
      const flag = thrown(() => checkLimit(name, text, '--flag', 'BAD_INPUT'));
      expect(flag.message, `${name} ${text}`).toMatch(new RegExp(`^--flag must be .*, got "${text}"$`));
    }
    expect(checkLimit('maxDepth', ' 3 ', '--flag')).toBe(3);
    expect(checkLimit('maxCostUsd', '.25', '--flag')).toBe(0.25);
    expect(thrown(() => resolveOptions({ model: 'm' }, { RLM_MAX_OUTPUT_TOKENS: '0x10' })).message).toBe(
      'RLM_MAX_OUTPUT_TOKENS must be a positive integer, got "0x10"',
    );
  });

  it('are what the MCP rlm_answer tool publishes for max_depth and max_iterations, capped by the server', () => {
    const json = z.toJSONSchema(answerInput(DEFAULT_LIMITS)) as {
      properties: Record<string, { type: string; minimum: number; maximum: number }>;
    };
    expect(json.properties.max_depth).toMatchObject({
      type: 'integer',
      minimum: 0,
      maximum: DEFAULT_LIMITS.maxDepth,
    });
    expect(json.properties.max_iterations).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: DEFAULT_LIMITS.maxIterations,
    });
    expect(boundedLimit('maxCostUsd', 5).safeParse(0.5).success).toBe(true);
    expect(boundedLimit('maxDepth', 3).safeParse(4).success).toBe(false);
  });

  it('let `rlm answer` accept --max-cost 0 as the library does, and reject a fractional --max-depth', async () => {
    const bad = await cli([
      'answer',
      'q',
      '--context',
      '.',
      '--model',
      `scripted:${RULES}`,
      '--max-depth',
      '1.5',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-depth must be an integer >= 0, got "1.5"');
    const cost = await cli([
      'answer',
      'q',
      '--context',
      '.',
      '--model',
      `scripted:${RULES}`,
      '--max-cost=-1',
    ]);
    expect(cost.code).toBe(2);
    expect(cost.stderr).toContain('--max-cost must be a number >= 0');
    // 0 used to be refused by the CLI alone; now it is a budget like any other (a free model stays within it).
    const zero = await cli([
      'answer',
      'List the sections',
      '--context',
      path.resolve(import.meta.dirname, '../../memory/SCHEMA.md'),
      '--model',
      `scripted:${RULES}`,
      '--max-cost',
      '0',
      '--json',
    ]);
    expect(zero.code).toBe(0);
    expect(zero.json()).toMatchObject({ status: 'final' });
  });
});
