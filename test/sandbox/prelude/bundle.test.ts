/**
 * The prelude bundle (build-prelude.ts → rlm-prelude.js) keeps the rules the in-isolate code depends
 * on, whatever the modules' authors or the bundler did: the script declares no global, and no code that
 * can run after model code goes through the array iterator (spread, for…of, array destructuring,
 * yield*) or `instanceof`, which model code can poison (Array.prototype[Symbol.iterator],
 * Symbol.hasInstance). Module top levels run when the script is evaluated, before any model code, and
 * may use them.
 */
import vm from 'node:vm';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';
import { describe, expect, it } from 'vitest';
import { PRELUDE_SOURCE } from '../../../src/sandbox/prelude/index.ts';

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
/** Function nests around module top levels: the bundle's wrapper and the bundler's own. */
const MODULE_DEPTH = 2;

/** What model code could hook, where it sits: "kind @ line:column". */
function iteratorAndHasInstanceUses(source: string): string[] {
  const ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'script', locations: true });
  const found: string[] = [];
  const flag = (kind: string, node: acorn.Node, ancestors: acorn.Node[]) => {
    const depth = ancestors.filter((a) => a !== node && FUNCTIONS.has(a.type)).length;
    if (depth > MODULE_DEPTH) found.push(`${kind} @ ${node.loc?.start.line}:${node.loc?.start.column}`);
  };
  walk.ancestor(ast, {
    ForOfStatement: (n, _s, a) => flag('for…of', n, a),
    ArrayPattern: (n, _s, a) => flag('array destructuring', n, a),
    SpreadElement: (n, _s, a) => {
      const parent = a[a.length - 2];
      if (parent?.type !== 'ObjectExpression') flag('spread', n, a);
    },
    YieldExpression: (n, _s, a) => {
      if ((n as acorn.YieldExpression).delegate) flag('yield*', n, a);
    },
    BinaryExpression: (n, _s, a) => {
      if ((n as acorn.BinaryExpression).operator === 'instanceof') flag('instanceof', n, a);
    },
  });
  return found;
}

describe('the prelude bundle', () => {
  it('evaluates to its first stage and declares no global', () => {
    const context = vm.createContext({});
    const before = vm.runInContext('Object.getOwnPropertyNames(globalThis).join()', context);
    const stage1 = new vm.Script(PRELUDE_SOURCE).runInContext(context);
    expect(typeof stage1).toBe('function');
    expect(vm.runInContext('Object.getOwnPropertyNames(globalThis).join()', context)).toBe(before);
  });

  it('has no iterator or instanceof use in code that runs after model code', () => {
    expect(iteratorAndHasInstanceUses(PRELUDE_SOURCE)).toEqual([]);
  });

  it('finds such uses where they are (the check above can fail)', () => {
    const wrap = (body: string) =>
      `(function(){'use strict'; var p = (function(){ ${body} })(); return p; })();`;
    const kinds = (body: string) => iteratorAndHasInstanceUses(wrap(body)).map((s) => s.split(' @')[0]);
    expect(kinds('const top = [...[1]]; function f(a) { return [...a]; }')).toEqual(['spread']);
    expect(
      kinds('function f(a, b) { for (const x of a) {} const [y] = a; return b instanceof a || {...b}; }'),
    ).toEqual(['for…of', 'array destructuring', 'instanceof']);
  });
});
