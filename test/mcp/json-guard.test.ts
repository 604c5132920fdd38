import { describe, expect, it } from 'vitest';
import { checkJsonShape } from '../../src/mcp/json-guard.ts';

const check = (text: string, maxDepth = 3, maxElements = 5) =>
  checkJsonShape(Buffer.from(text), { maxDepth, maxElements });

describe('checkJsonShape', () => {
  it('passes JSON within the bounds', () => {
    expect(check('{"a": [1, 2], "b": {"c": 3}}')).toBeUndefined();
    expect(check('"just a string"')).toBeUndefined();
    expect(check('[[[1]]]')).toBeUndefined();
  });

  it('refuses nesting past the depth bound', () => {
    expect(check('[[[[1]]]]')).toBe('JSON nested deeper than 3 levels');
  });

  it('refuses more values than the element bound', () => {
    expect(check('[1,2,3,4,5]')).toBeUndefined();
    expect(check('[1,2,3,4,5,6]')).toBe('JSON has more than 5 array elements and object members');
    expect(check('[{},{},{}]')).toBe('JSON has more than 5 array elements and object members');
  });

  it('ignores brackets, commas and escaped quotes inside strings', () => {
    expect(check('["[[[[,,,,,,{{{{", "a\\"[[[[,,,,,"]')).toBeUndefined();
    expect(check('{"k\\\\": "[[[["}')).toBeUndefined();
  });
});
