import { describe, expect, it } from 'vitest';
import {
  array,
  describeProblem,
  nullable,
  number,
  object,
  oneOf,
  optional,
  string,
} from '../../memory/shape.ts';

describe('shape checks', () => {
  const shape = object({
    name: string((s) => (s.includes('/') ? 'must not be a path' : null)),
    size: number({ int: 'must be an integer', min: [0, 'must be >= 0'] }),
    parent: nullable(string()),
    kind: optional(oneOf(['a', 'b'], 'must be a or b')),
    items: array(object({ id: string() })),
  });
  const good = { name: 'x', size: 2, parent: null, items: [{ id: 'i' }], extra: { kept: true } };
  const problem = (value: unknown) => {
    const p = shape(value);
    return p && describeProblem(p);
  };

  it('accepts a fitting value, fields it does not name included', () => {
    expect(shape(good)).toBeNull();
    expect(shape({ ...good, kind: 'b' })).toBeNull();
  });

  it('names the first wrong field by its path, array indexes included', () => {
    expect(problem({ ...good, name: 'a/b' })).toBe('name: must not be a path');
    expect(problem({ ...good, size: 1.5 })).toBe('size: must be an integer');
    expect(problem({ ...good, size: -1 })).toBe('size: must be >= 0');
    expect(problem({ ...good, size: Number.NaN })).toBe('size: expected number, received number');
    expect(problem({ ...good, parent: undefined })).toBe('parent: expected string, received undefined');
    expect(problem({ ...good, kind: 'c' })).toBe('kind: must be a or b');
    expect(problem({ ...good, items: [{ id: 'i' }, { id: 3 }] })).toBe(
      'items.1.id: expected string, received number',
    );
    expect(problem({ ...good, items: {} })).toBe('items: expected array, received object');
    expect(problem([good])).toBe('expected object, received array');
    expect(problem(null)).toBe('expected object, received null');
  });
});
