import { describe, expect, it } from 'vitest';
import { type ValidationRule, validateBlock } from '../../src/sandbox/validate.ts';

/** Each rule: snippets that must be rejected by it, and look-alikes that must pass. */
const RULES: { rule: ValidationRule; rejected: string[]; accepted: string[] }[] = [
  {
    rule: 'import',
    rejected: ["import('fs')", "import fs from 'fs'", 'export const x = 1', 'const u = import.meta.url'],
    accepted: ['const s = \'import("fs")\'', 'const o = { import: 1 }; o.import'],
  },
  {
    rule: 'require',
    rejected: ["require('fs')", 'const r = require', "globalThis.require('x')"],
    accepted: ["print('require')", 'const o = { require: 1 }; o.require'],
  },
  {
    rule: 'eval',
    rejected: ['eval("1")', 'const e = eval', 'globalThis.eval("1")', "globalThis['eval']('1')"],
    accepted: ["const evaluation = 'eval'", 'const o = { eval: 1 }'],
  },
  {
    rule: 'function-constructor',
    rejected: ['Function("return 1")', 'new Function("x")', 'const A = AsyncFunction', 'x.GeneratorFunction'],
    accepted: ['const f = function () { return 1 }', "typeof f === 'function'", 'const o = { Function: 1 }'],
  },
  {
    rule: 'prototype-access',
    rejected: [
      'x.constructor',
      "x['constructor']",
      'x[`constructor`]',
      'x?.constructor',
      'const { constructor: C } = x',
      "const { ['constructor']: C } = x",
      'x.__proto__',
      'const o = { __proto__: null }',
      'Array.prototype.slice.call(a)',
      'x.__defineGetter__("a", f)',
      'x.__lookupSetter__("a")',
    ],
    accepted: [
      "const s = 'constructor'",
      'class A { constructor(x) { this.x = x } }',
      'const o = { constructor: 1, prototype: 2 }',
      'x[key]',
      "'prototype' in x",
    ],
  },
  { rule: 'with', rejected: ['with (Math) { max(1, 2) }'], accepted: ["const withA = 'with'"] },
  { rule: 'debugger', rejected: ['debugger'], accepted: ["print('debugger')"] },
  {
    rule: 'forbidden-global',
    rejected: [
      'WebAssembly.compile(b)',
      'new SharedArrayBuffer(8)',
      'Atomics.wait(a, 0, 0)',
      'new Proxy({}, {})',
      'Reflect.get(x, "a")',
      'globalThis.Proxy',
      'this.Reflect',
      'new WeakRef(x)',
      'new FinalizationRegistry(f)',
      'BigInt(2) ** 3n',
      'new BigUint64Array(2)',
    ],
    accepted: ["const proxy = 'Proxy'", 'const o = { Reflect: 1 }; o.Reflect'],
  },
  { rule: 'bigint', rejected: ['const big = 10n ** 30000000n', 'x + 0x1n'], accepted: ['const n = 10 ** 3'] },
  {
    rule: 'reserved-name',
    rejected: [
      'const print = 1',
      'let context = "x"',
      'function grep() {}',
      'class FINAL {}',
      'if (x) { var llm_query = 1 }',
      'const __rlm$g = 1',
    ],
    accepted: ['function f(print) { return print }', '{ let context = 1 }', 'const printer = 1'],
  },
];

describe('size and depth rules', () => {
  const ruleOf = (code: string) => {
    const r = validateBlock(code);
    return r.ok ? 'ok' : r.issue.rule;
  };
  it('bounds regex literals (V8 compiles them in one uninterruptible step)', () => {
    expect(ruleOf(`/${'a'.repeat(8193)}/.test(s)`)).toBe('regex-size');
    expect(ruleOf(`/${'a'.repeat(8192)}/.test(s)`)).toBe('ok');
    expect(ruleOf(`const s = '${'a'.repeat(9000)}'`)).toBe('ok');
  });
  it('rejects chains too deep to walk instead of overflowing the host stack', () => {
    expect(ruleOf(`x = a${'.b'.repeat(20_000)}`)).toBe('nesting');
    expect(ruleOf(`f${'()'.repeat(20_000)}`)).toBe('nesting');
    expect(ruleOf(`x = a${'.b'.repeat(200)}`)).toBe('ok');
  });
});

describe('validateBlock rules', () => {
  for (const { rule, rejected, accepted } of RULES) {
    for (const code of rejected) {
      it(`${rule}: rejects ${code}`, () => {
        const r = validateBlock(code);
        expect(r.ok).toBe(false);
        if (r.ok) return;
        expect(r.issue.rule).toBe(rule);
        expect(r.issue.code).toBe('VALIDATION');
        expect(r.issue.message.length).toBeGreaterThan(20);
      });
    }
    for (const code of accepted) {
      it(`${rule}: accepts ${code}`, () => {
        const r = validateBlock(code);
        expect(r.ok ? 'ok' : `${r.issue.rule}: ${r.issue.message}`).toBe('ok');
      });
    }
  }
});

describe('validateBlock positions and syntax', () => {
  it('reports a syntax error with block-relative line and column', () => {
    const r = validateBlock('const a = 1;\nconst b = 2;\n    a +* b;');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issue).toMatchObject({ code: 'SYNTAX', line: 3, column: 7 });
    expect(r.issue.message).toMatch(/^SyntaxError: Unexpected token$/);
  });

  it('reports the rule at the offending property', () => {
    const r = validateBlock('const a = 1;\nconst f = () => {\n  return a.constructor;\n};');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issue).toMatchObject({ rule: 'prototype-access', line: 3, column: 11 });
    expect(r.issue.message).toContain('typeof');
  });

  it('reports the earliest issue of several', () => {
    const r = validateBlock('debugger;\neval("x")');
    expect(!r.ok && r.issue.rule).toBe('debugger');
  });

  it('accepts top-level await and modern syntax', () => {
    const code =
      'const r = await Promise.resolve(1);\nconst o = { ...{ a: 1 } };\nconst y = o?.a ?? 2;\nclass A { #p = 1; static { } }';
    expect(validateBlock(code).ok).toBe(true);
  });

  it('rejects a top-level return as a syntax error', () => {
    const r = validateBlock('return 1');
    expect(!r.ok && r.issue.code).toBe('SYNTAX');
  });
});

describe('what to write instead', () => {
  it('rejects X.prototype.hasOwnProperty.call with a message naming Object.hasOwn', () => {
    for (const code of [
      'Object.prototype.hasOwnProperty.call(o, "k")',
      'const own = {}.x || Object.prototype.hasOwnProperty.call(o, k);',
    ]) {
      const r = validateBlock(code);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issue.message).toContain('write Object.hasOwn(o, k)');
    }
    expect(validateBlock('Object.hasOwn({a: 1}, "a")').ok).toBe(true);
  });
});
