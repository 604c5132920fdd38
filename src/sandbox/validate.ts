/**
 * Static checks on a block before it runs. The isolate is the security boundary; these rules are
 * defence in depth and, above all, early and clear feedback: each rejection names the rule, the
 * position in the block and what to write instead.
 */
import { type AnyNode, type Program, parse } from 'acorn';
import { simple } from 'acorn-walk';
import { FORBIDDEN_ADVICE, prototypeAdvice, TOP_LEVEL_RETURN } from './advice.ts';
import { collectHoisted } from './hoist.ts';
import { FORBIDDEN_GLOBALS, HELPER_NAMES, INTERNAL_PREFIX } from './names.ts';

/** Why a block was rejected. */
export type ValidationRule =
  | 'syntax'
  | 'import'
  | 'require'
  | 'eval'
  | 'function-constructor'
  | 'prototype-access'
  | 'with'
  | 'debugger'
  | 'forbidden-global'
  | 'reserved-name'
  | 'nesting'
  | 'regex-size'
  | 'block-size'
  | 'bigint';

interface ValidationIssue {
  code: 'SYNTAX' | 'VALIDATION';
  rule: ValidationRule;
  message: string;
  /** 1-based line and 0-based column in the block. */
  line: number;
  column: number;
}

export type ValidationResult = { ok: true; program: Program } | { ok: false; issue: ValidationIssue };

/** Property names whose access reaches constructors or prototypes, the classic escape routes. */
const BLOCKED_PROPERTIES = new Map<string, string>([
  ['constructor', 'use typeof, Array.isArray or instanceof to check a type'],
  ['__proto__', 'plain objects and arrays need no prototype access; build new objects instead'],
  ['prototype', 'call methods on the values themselves (arr.slice(), Array.from(x), str.split())'],
  ['__defineGetter__', 'define plain properties or use a function'],
  ['__defineSetter__', 'define plain properties or use a function'],
  ['__lookupGetter__', 'read the property directly'],
  ['__lookupSetter__', 'read the property directly'],
]);

const FUNCTION_CONSTRUCTORS = new Set([
  'Function',
  'AsyncFunction',
  'GeneratorFunction',
  'AsyncGeneratorFunction',
]);
const FORBIDDEN = new Set<string>(FORBIDDEN_GLOBALS);
const RESERVED = new Set<string>(HELPER_NAMES);
/** Longest regex literal; the prelude bounds regexes built at run time the same way (prelude/regex-guards.ts). */
const MAX_REGEX_CHARS = 8192;
/** Property escapes (`\p{…}`, `\q{…}`) per regex: each costs V8 up to tens of ms to compile (prelude/regex-guards.ts). */
const MAX_REGEX_PROPERTY_ESCAPES = 32;
/**
 * All regex literals of one block together: V8 checks them while compiling the block, in one step
 * no limit interrupts (in the isolate process, which the watchdog kills past the CPU limit).
 */
const MAX_BLOCK_REGEX_CHARS = 16_384;
/** Longest block: parsing and walking it runs on the host's main thread. */
const MAX_BLOCK_CHARS = 1_000_000;
/** Objects through which a property access means a global. */
const GLOBAL_OBJECTS = new Set(['globalThis', 'self', 'window', 'global']);

interface Walk {
  issues: ValidationIssue[];
  /** Characters of regex literals seen so far. */
  regexChars: number;
}

function at(node: AnyNode): { line: number; column: number } {
  const loc = node.loc?.start;
  return { line: loc?.line ?? 1, column: loc?.column ?? 0 };
}

function report(state: Walk, node: AnyNode, rule: ValidationRule, message: string): void {
  state.issues.push({ code: 'VALIDATION', rule, message, ...at(node) });
}

/** The static name of a property key or member property, or null when it is computed at run time. */
function staticName(key: AnyNode, computed: boolean): string | null {
  if (!computed && key.type === 'Identifier') return key.name;
  if (key.type === 'Literal' && typeof key.value === 'string') return key.value;
  if (key.type === 'TemplateLiteral' && key.expressions.length === 0)
    return key.quasis[0]?.value.cooked ?? null;
  return null;
}

function checkName(state: Walk, node: AnyNode, name: string): void {
  if (name === 'require') {
    report(
      state,
      node,
      'require',
      'require is not available: there are no modules here; use the sandbox globals (context, grep, search_chunks, llm_query, ...)',
    );
  } else if (name === 'eval') {
    report(state, node, 'eval', 'eval is not available: write the code directly in the block');
  } else if (FUNCTION_CONSTRUCTORS.has(name)) {
    report(
      state,
      node,
      'function-constructor',
      `${name} is not available: write a function or arrow function instead`,
    );
  } else if (FORBIDDEN.has(name)) {
    report(
      state,
      node,
      'forbidden-global',
      `${name} is not available in the sandbox; ${FORBIDDEN_ADVICE[name] ?? 'plain objects, arrays and functions cover what you need'}`,
    );
  } else if (name.startsWith(INTERNAL_PREFIX)) {
    report(
      state,
      node,
      'reserved-name',
      `identifiers starting with ${INTERNAL_PREFIX} are reserved by the sandbox; rename it`,
    );
  }
}

/** `X.prototype` (static name). */
function isPrototypeMember(node: AnyNode): boolean {
  return node.type === 'MemberExpression' && staticName(node.property, node.computed) === 'prototype';
}

function checkProperty(state: Walk, node: AnyNode, name: string, owner: AnyNode | null = null): void {
  const specific = name === 'prototype' && owner?.type === 'Identifier' ? prototypeAdvice(owner.name) : null;
  const advice = specific ?? BLOCKED_PROPERTIES.get(name);
  if (advice !== undefined)
    report(state, node, 'prototype-access', `access to '${name}' is blocked: ${advice}`);
}

const visitors = {
  ImportExpression(node: AnyNode, state: Walk) {
    report(
      state,
      node,
      'import',
      'import() is not available: everything you can use is already a global (context, grep, search_chunks, llm_query, ...)',
    );
  },
  MetaProperty(node: AnyNode, state: Walk) {
    if (node.type === 'MetaProperty' && node.meta.name === 'import') {
      report(state, node, 'import', 'import.meta is not available: there are no modules here');
    }
  },
  Identifier(node: AnyNode, state: Walk) {
    if (node.type === 'Identifier') checkName(state, node, node.name);
  },
  VariablePattern(node: AnyNode, state: Walk) {
    if (node.type === 'Identifier') checkName(state, node, node.name);
  },
  MemberExpression(node: AnyNode, state: Walk) {
    if (node.type !== 'MemberExpression') return;
    const name = staticName(node.property, node.computed);
    if (name === null) return;
    if (name === 'hasOwnProperty' && isPrototypeMember(node.object)) {
      // The everyday idiom behind most prototype rejections: say what works instead, ahead of the rest.
      state.issues.unshift({
        code: 'VALIDATION',
        rule: 'prototype-access',
        message:
          'X.prototype.hasOwnProperty.call(o, k) is blocked (no prototype access): write Object.hasOwn(o, k)',
        ...at(node),
      });
      return;
    }
    checkProperty(state, node.property, name, node.object);
    if (name === 'eval' || FUNCTION_CONSTRUCTORS.has(name)) checkName(state, node.property, name);
    const obj = node.object;
    const onGlobal =
      obj.type === 'ThisExpression' || (obj.type === 'Identifier' && GLOBAL_OBJECTS.has(obj.name));
    if (onGlobal && (FORBIDDEN.has(name) || name === 'require')) checkName(state, node.property, name);
  },
  ObjectPattern(node: AnyNode, state: Walk) {
    if (node.type !== 'ObjectPattern') return;
    for (const prop of node.properties) {
      if (prop.type !== 'Property') continue;
      const name = staticName(prop.key, prop.computed);
      if (name !== null) checkProperty(state, prop.key, name);
    }
  },
  ObjectExpression(node: AnyNode, state: Walk) {
    if (node.type !== 'ObjectExpression') return;
    for (const prop of node.properties) {
      if (prop.type !== 'Property' || prop.computed || prop.method || prop.shorthand) continue;
      // Only `__proto__: x` sets the prototype; `constructor: 1` in a literal is an ordinary property.
      if (staticName(prop.key, false) === '__proto__') checkProperty(state, prop.key, '__proto__');
    }
  },
  Literal(node: AnyNode, state: Walk) {
    if (node.type === 'Literal' && typeof node.bigint === 'string') {
      report(
        state,
        node,
        'bigint',
        'BigInt is not available in the sandbox (V8 cannot interrupt arithmetic on huge BigInts); use Number',
      );
    }
    if (node.type === 'Literal' && node.regex) {
      const pattern = node.regex.pattern;
      state.regexChars += pattern.length;
      if (pattern.length > MAX_REGEX_CHARS) {
        report(
          state,
          node,
          'regex-size',
          `this regex is ${pattern.length} characters; at most ${MAX_REGEX_CHARS} (V8 compiles a regex in one step the time limit cannot interrupt): split it`,
        );
      } else if ((pattern.match(/\\[pPq]\{/g)?.length ?? 0) > MAX_REGEX_PROPERTY_ESCAPES) {
        report(
          state,
          node,
          'regex-size',
          `this regex has more than ${MAX_REGEX_PROPERTY_ESCAPES} property escapes (\\p{...}, \\q{...}), each slow for V8 to compile in one step: split it`,
        );
      } else if (state.regexChars > MAX_BLOCK_REGEX_CHARS) {
        report(
          state,
          node,
          'regex-size',
          `the regex literals of this block total more than ${MAX_BLOCK_REGEX_CHARS} characters (V8 compiles them all before the block runs): build some with new RegExp in a later block, or split the block`,
        );
      }
    }
  },
  WithStatement(node: AnyNode, state: Walk) {
    report(state, node, 'with', 'with statements are not allowed: use a local variable for the object');
  },
  DebuggerStatement(node: AnyNode, state: Walk) {
    report(state, node, 'debugger', 'debugger statements are not allowed: remove it');
  },
};

/** Persistent declarations of a helper's name: they would become assignments to a read-only global. */
function checkTopLevel(program: Program, state: Walk): void {
  for (const id of collectHoisted(program).identifiers) {
    if (RESERVED.has(id.name)) {
      report(
        state,
        id,
        'reserved-name',
        `${id.name} is a sandbox global and cannot be redeclared; pick another name`,
      );
    }
  }
}

interface AcornSyntaxError extends SyntaxError {
  loc?: { line: number; column: number };
}

function syntaxIssue(err: AcornSyntaxError): ValidationIssue {
  const line = err.loc?.line ?? 1;
  const column = err.loc?.column ?? 0;
  const message = err.message.replace(/ \(\d+:\d+\)$/, '');
  if (/'import' and 'export' may appear only|import\.meta/.test(message)) {
    return {
      code: 'VALIDATION',
      rule: 'import',
      message:
        'import/export are not available: there are no modules here; everything you can use is already a global',
      line,
      column,
    };
  }
  if (/'return' outside of function/.test(message)) {
    return { code: 'SYNTAX', rule: 'syntax', message: `SyntaxError: ${TOP_LEVEL_RETURN}`, line, column };
  }
  return { code: 'SYNTAX', rule: 'syntax', message: `SyntaxError: ${message}`, line, column };
}

function tooDeep(program: Program): ValidationIssue {
  return {
    code: 'VALIDATION',
    rule: 'nesting',
    message:
      'the block is nested too deeply to check (a very long chain of property accesses or calls); split it into several statements',
    ...at(program),
  };
}

/** Parses `code` as a script with top-level await and applies the rules; the earliest issue wins. */
export function validateBlock(code: string): ValidationResult {
  if (code.length > MAX_BLOCK_CHARS) {
    return {
      ok: false,
      issue: {
        code: 'VALIDATION',
        rule: 'block-size',
        message: `the block is ${code.length} characters; at most ${MAX_BLOCK_CHARS}: split it, and keep data in the context or variables rather than in code`,
        line: 1,
        column: 0,
      },
    };
  }
  let program: Program;
  try {
    program = parse(code, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowAwaitOutsideFunction: true,
      allowReturnOutsideFunction: false,
      allowHashBang: false,
      locations: true,
    });
  } catch (err) {
    if (err instanceof SyntaxError) return { ok: false, issue: syntaxIssue(err) };
    throw err;
  }
  const state: Walk = { issues: [], regexChars: 0 };
  try {
    simple(program, visitors, undefined, state);
    checkTopLevel(program, state);
  } catch (err) {
    // acorn parses member and call chains (`a.b.b.b…`, `f()()()…`) in a loop, but the walk recurses
    // once per link: a long enough chain overflows the host's stack here, never inside the parser.
    if (err instanceof RangeError) return { ok: false, issue: tooDeep(program) };
    throw err;
  }
  if (state.issues.length === 0) return { ok: true, program };
  let first = state.issues[0]!;
  for (const issue of state.issues) {
    if (issue.line < first.line || (issue.line === first.line && issue.column < first.column)) first = issue;
  }
  return { ok: false, issue: first };
}
