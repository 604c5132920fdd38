import { describe, expect, it } from 'vitest';
import { checkSchema, parseStructured } from '../../src/runtime/structured.ts';
import { thrown } from '../helpers/errors.ts';

describe('structured sub-call output', () => {
  const labels = checkSchema({
    type: 'array',
    items: {
      type: 'object',
      properties: { id: { type: 'integer' }, label: { enum: ['a', 'b'] } },
      required: ['id', 'label'],
    },
  });

  it('accepts a matching reply, bare or in one code fence', () => {
    expect(parseStructured('[{"id": 1, "label": "a"}]', labels)).toEqual({
      ok: true,
      value: [{ id: 1, label: 'a' }],
    });
    expect(parseStructured('```json\n[]\n```', labels)).toEqual({ ok: true, value: [] });
  });

  it('says what is wrong, and where, on one line', () => {
    const r = parseStructured('[{"id": "x", "label": "c"}, {"id": 2}]', labels);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems).toBe(
      '$[0].id: Invalid input: expected number, received string; $[0].label: Invalid option: expected one of "a"|"b"; ' +
        '$[1].label: Invalid option: expected one of "a"|"b"',
    );
    const prose = parseStructured('There are no labels.', labels);
    expect(!prose.ok && prose.problems).toMatch(/^it is not JSON \(/);
  });

  it('refuses keywords it does not check, and a schema too deep or too large', () => {
    expect(thrown(() => checkSchema({ type: 'object', requried: ['a'] })).message).toMatch(
      /^schema: unknown keyword "requried" at \$; a JSON Schema uses type, properties/,
    );
    // A regex from model code must not run on the host.
    expect(thrown(() => checkSchema({ type: 'string', pattern: '(a+)+$' })).code).toBe('BAD_INPUT');
    expect(thrown(() => checkSchema({ $ref: '#/x' })).message).toContain('"$ref"');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20; i++) deep = { type: 'array', items: deep };
    expect(thrown(() => checkSchema(deep)).message).toMatch(/nested deeper than 16 levels/);
    expect(thrown(() => checkSchema({ enum: ['x'.repeat(20_000)] })).message).toMatch(/at most 16384/);
    expect(thrown(() => checkSchema('string')).message).toContain('must be a schema object');
    // Property names are names, not keywords.
    expect(checkSchema({ type: 'object', properties: { pattern: { type: 'string' } } }).json).toContain(
      'pattern',
    );
  });
});
