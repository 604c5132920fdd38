import { describe, expect, it } from 'vitest';
import { quietConsole } from '../../src/cli/quiet-console.ts';

describe('quietConsole', () => {
  it('sends console output to the sink until the last holder lets go, then puts console back', () => {
    const original = { log: console.log, warn: console.warn };
    const lines: string[] = [];
    const first = quietConsole((line) => lines.push(line));
    const second = quietConsole(undefined);
    console.warn('deprecated %s', 'model');
    first();
    first();
    console.log({ a: 1 });
    expect(console.warn).not.toBe(original.warn);
    second();
    expect(lines).toEqual(['deprecated model', '{ a: 1 }']);
    expect(console.log).toBe(original.log);
    expect(console.warn).toBe(original.warn);
  });
});
