/**
 * Red team: model code trying to leave the sandbox. Every attempt must fail, no host secret may show
 * up in any output, and the host must keep answering afterwards. Several attempts go around the static
 * validation on purpose (computed property names) to check the isolate contains them anyway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/session.ts';
import type { BlockResult, Sandbox } from '../../src/sandbox/types.ts';
import { fakeStore } from './fake-store.ts';
import { ROOMY_LIMITS } from './roomy-limits.ts';

const SECRET = `rlm-secret-${Math.random().toString(36).slice(2)}`;
const received: unknown[] = [];
const outputs: string[] = [];
let sb: Sandbox;

async function run(code: string, box: Sandbox = sb): Promise<BlockResult> {
  const r = await box.run(code);
  outputs.push(JSON.stringify(r));
  return r;
}

const extra: Sandbox[] = [];
/** A separate session, for attacks that would poison the shared one. */
async function freshSandbox(): Promise<Sandbox> {
  const box = await createSandbox(
    {
      context: 'public context text',
      store: fakeStore(),
      llmQuery: async (prompt) => {
        received.push(prompt);
        return `answer:${typeof prompt}:${prompt.length}`;
      },
      llmQueryBatched: async (items) => items.map((p) => `batched:${typeof p.prompt}`),
    },
    ROOMY_LIMITS,
  );
  extra.push(box);
  return box;
}

/** Runs `code` that ends in FINAL(value) and returns the parsed value. */
async function finalOf<T = unknown>(code: string): Promise<T> {
  const r = await run(code);
  if (r.final === null) throw new Error(`no final: ${JSON.stringify(r.error)} ${r.stdout}`);
  return JSON.parse(r.final) as T;
}

beforeAll(async () => {
  process.env.RLM_TEST_SECRET = SECRET;
  sb = await createSandbox(
    {
      context: `public context text\nsecond line ${'x'.repeat(100)}`,
      store: fakeStore(),
      llmQuery: async (prompt, context) => {
        received.push(prompt, context);
        return `answer:${typeof prompt}:${prompt.length}`;
      },
      llmQueryBatched: async (items) => {
        received.push(...items.map((p) => p.prompt), ...items.map((p) => p.context));
        return items.map((p) => `batched:${typeof p.prompt}`);
      },
    },
    ROOMY_LIMITS,
  );
});

afterAll(() => {
  sb.dispose();
  for (const box of extra) box.dispose();
  delete process.env.RLM_TEST_SECRET;
  // Checked last, over every output of the suite.
  for (const out of outputs) expect(out).not.toContain(SECRET);
});

describe('no host globals', () => {
  it('has no process, require, timers, fetch, Buffer, gc or module scope', async () => {
    const kinds = await finalOf<string[]>(`
      // queueMicrotask is provided (prelude/web.ts): a microtask is a promise callback, no timer.
      const names = ['process', 'require', 'Buffer', 'setTimeout', 'setInterval', 'setImmediate',
        'fetch', 'module', 'exports', '__dirname', 'global', 'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'Proxy',
        'Reflect', 'FinalizationRegistry', 'WeakRef', 'eval', 'Function', 'XMLHttpRequest', 'Deno', 'Bun',
        // V8's, on every context of the isolate process: its async form would run code between blocks.
        'gc'];
      FINAL([typeof process, typeof setTimeout, typeof fetch, ...names.map((n) => typeof globalThis[n])])`);
    expect(new Set(kinds)).toEqual(new Set(['undefined']));
  });
});

describe('constructor and prototype escapes', () => {
  it('cannot build a host Function from any global, its constructor or its prototype', async () => {
    const results = await finalOf<string[]>(`
      const C = 'constr' + 'uctor';
      const out = [];
      for (const name of Object.getOwnPropertyNames(globalThis)) {
        let v;
        try { v = globalThis[name]; } catch (e) { continue; }
        if (v === null || v === undefined) continue;
        const targets = [v];
        try { targets.push(v[C]); } catch (e) {}
        try { targets.push(Object.getPrototypeOf(v)); } catch (e) {}
        for (const t of targets) {
          try {
            const F = t[C][C];
            const r = F('return typeof process')();
            out.push(name + ' ESCAPED ' + r);
          } catch (e) {
            out.push(name + ' ' + e.name);
          }
        }
      }
      FINAL(out)`);
    expect(results.length).toBeGreaterThan(100);
    expect(results.filter((r) => r.includes('ESCAPED'))).toEqual([]);
    expect(results.some((r) => r.endsWith('EvalError'))).toBe(true);
  });

  it('cannot reach code generation through async and generator function constructors', async () => {
    const results = await finalOf<string[]>(`
      const C = 'constr' + 'uctor';
      const out = [];
      for (const f of [async function () {}, function* () {}, async function* () {}, () => {}, class {}]) {
        try { f[C]('return import("fs")')(); out.push('ESCAPED'); } catch (e) { out.push(e.name); }
      }
      FINAL(out)`);
    expect(results).toEqual(['EvalError', 'EvalError', 'EvalError', 'EvalError', 'EvalError']);
    // The model can still write the functions themselves.
    expect((await run('const af = async (x) => x * 2; await af(21)')).stdout).toBe('42\n');
  });

  it('cannot reach the host through any helper or any value the host returns', async () => {
    const results = await finalOf<string[]>(`
      const C = 'constr' + 'uctor';
      const values = {
        print, peek, grep, search_chunks, get_chunk, neighbors, llm_query, llm_query_batched, FINAL, FINAL_VAR,
        consoleLog: console.log,
        answer: llm_query('hello'),
        batch: llm_query_batched(['a', 'b']),
        hits: search_chunks('harbour'),
        chunk: get_chunk('a:0'),
        links: neighbors('a:1'),
        storeGrep: grep('harbour'),
        peeked: peek('a:0', 0, 5),
      };
      const out = [];
      const OP = Object['proto' + 'type'];
      // Values made in this isolate have this isolate's Object.prototype at the root of their chain.
      const native = (x) => { let p = Object(x), last = null; while (p !== null) { last = p; p = Object.getPrototypeOf(p); } return last === OP; };
      for (const [name, v] of Object.entries(values)) {
        for (const t of [v, Object(v)[C], Object.getPrototypeOf(Object(v)), Array.isArray(v) ? v[0] : undefined]) {
          if (t === undefined || t === null) continue;
          try { t[C][C]('return process')(); out.push(name + ' ESCAPED'); } catch (e) { out.push(name + ' ' + e.name); }
          out.push(name + ' proto ' + native(t));
        }
        if (typeof v === 'function') {
          try { out.push(name + ' caller ' + typeof v.caller); } catch (e) { out.push(name + ' caller ' + e.name); }
          try { out.push(name + ' arguments ' + typeof v.arguments); } catch (e) { out.push(name + ' arguments ' + e.name); }
        }
      }
      FINAL(out)`);
    expect(results.filter((r) => r.includes('ESCAPED'))).toEqual([]);
    expect(
      results.filter((r) => r.includes('caller') && !r.endsWith('TypeError') && !r.endsWith('undefined')),
    ).toEqual([]);
    expect(results.filter((r) => r.includes(' proto ') && !r.endsWith('true'))).toEqual([]);
    // Host results are plain data.
    expect(received.every((x) => typeof x === 'string' || x === undefined)).toBe(true);
  });

  it('cannot climb from a getter or toString called by a helper to its caller', async () => {
    const results = await finalOf<string[]>(`
      const out = [];
      const spy = { toJSON: function () { out.push(String(arguments.callee.caller)); return 'x'; } };
      try { FINAL(spy); } catch (e) { out.push(e.name); }
      const opts = {};
      Object.defineProperty(opts, 'limit', { enumerable: true, get: function () { out.push(String(arguments.callee.caller)); return 5; } });
      try { grep('context', opts); } catch (e) { out.push(e.name); }
      const prompt = { toString() { out.push('toString called'); return 'p'; } };
      try { llm_query(prompt); } catch (e) { out.push(e.message); }
      FINAL(out)`);
    // An object is read as a {prompt, context, model} request: its toString is never called.
    expect(results.at(-1)).toBe('llm_query: the request.prompt must be a string');
    expect(results).not.toContain('toString called');
    expect(results.length).toBeGreaterThanOrEqual(2);
    expect(new Set(results.slice(0, -1))).toEqual(new Set(['null']));
  });
});

describe('stack traces', () => {
  it('keeps Error.prepareStackTrace out of reach', async () => {
    const results = await finalOf<unknown[]>(`
      const out = [];
      let seen = 0;
      const hook = (err, frames) => { seen += frames.length; return frames.map((f) => String(f.getThis())).join(); };
      Error.prepareStackTrace = hook;
      out.push(Error.prepareStackTrace === hook);
      try { Object.defineProperty(Error, 'prepareStackTrace', { value: hook }); out.push('redefined'); } catch (e) { out.push(e.name); }
      function deep(n) { return n === 0 ? llm_query({}) : deep(n - 1); }
      try { deep(50); } catch (e) { out.push(typeof e.stack); }
      function overflow() { try { return overflow(); } catch (e) { return peek('a:0'); } }
      try { out.push(typeof overflow()); } catch (e) { out.push(e.name); }
      out.push(seen);
      FINAL(out)`);
    expect(results).toEqual([false, 'TypeError', 'string', 'string', 0]);
  });

  it('shows no host paths in the stacks of errors raised by host calls', async () => {
    const r = await run(`
      const stacks = [];
      for (const f of [() => llm_query(1), () => peek('missing:9'), () => grep('explode'), () => get_chunk(1), () => neighbors('a:0', 'nope')]) {
        try { f(); } catch (e) { stacks.push(e.stack); }
      }
      FINAL(stacks.join('\\n----\\n'))`);
    expect(r.final).toMatch(/peek: no chunk or document with id missing:9/);
    expect(r.final).not.toMatch(/node_modules|\/work\/|\.ts:|file:\/\/|secret/);
    expect(r.final).not.toContain('isolated-vm');
  });
});

describe('poisoned built-ins', () => {
  it('keeps host calls and results working after JSON, Array, String, Object and Promise are poisoned', async () => {
    const box = await freshSandbox();
    const r = await run(
      `
      const P = 'proto' + 'type';
      JSON.stringify = () => '"hacked"';
      JSON.parse = () => ({ ok: true, value: 'forged' });
      Array[P].push = function () { throw new Error('push poisoned'); };
      Array[P].map = function () { throw new Error('map poisoned'); };
      Array[P].join = function () { return 'joined'; };
      String[P].slice = function () { return 'sliced'; };
      String[P].indexOf = function () { return -1; };
      Object.defineProperty(Object[P], 'toJSON', { value: () => 'poisoned', configurable: true, writable: true });
      const trap = (k) => ({ get() { throw new Error('getter ' + k); }, configurable: true });
      for (const k of ['ok', 'error', 'copy', 'reference', 'result', 'arguments', 'promise', 'timeout', 'matches', 'truncated']) {
        Object.defineProperty(Object[P], k, trap(k));
      }
      // Descriptor fields in one go: once poisoned, any later descriptor literal would trip over them.
      Object.defineProperties(Object[P], { get: trap('get'), set: trap('set'), value: trap('value'), writable: trap('writable') });
      Promise[P].then = function () { throw new Error('then poisoned'); };
      Array[P][Symbol.iterator] = function () { throw new Error('iterator poisoned'); };
      const answer = llm_query('still works');
      const hits = search_chunks('harbour');
      const lines = grep('harbour');
      print(answer, hits.length, lines.length, peek(0, 6));
      FINAL(answer)`,
      box,
    );
    expect(r.error).toBeNull();
    expect(r.final).toBe('answer:string:11');
    expect(r.stdout).toBe('answer:string:11 2 2 public\n');
    expect(received).toContain('still works');
    const after = await run('print(llm_query("again"))', box);
    expect(after.stdout).toBe('answer:string:5\n');
  });

  it('survives poisoned Symbol.species and array subclasses', async () => {
    const box = await freshSandbox();
    const r = await run(
      `
      const C = 'constr' + 'uctor';
      Object.defineProperty(Array, Symbol.species, { get() { return function () { return { poisoned: true }; }; }, configurable: true });
      class Evil extends Array { static get [Symbol.species]() { return Object; } }
      const evil = Evil.from(['a', 'b']);
      const out = llm_query_batched(evil);
      const g = grep('harbour');
      print(out.length, typeof out[0], g.length, Array.isArray(g));
      try { g[C][C]('return process')(); print('ESCAPED'); } catch (e) { print(e.name); }`,
      box,
    );
    expect(r.stdout).toBe('2 string 2 true\nEvalError\n');
  });

  it('cannot redefine the helpers', async () => {
    const box = await freshSandbox();
    const r = await run(
      `
      const out = [];
      try { Object.defineProperty(globalThis, 'print', { value: () => {} }); } catch (e) { out.push(e.name); }
      try { globalThis['llm_' + 'query'] = () => 'fake'; } catch (e) { out.push(e.name); }
      out.push(llm_query('real'));
      try { console.log = () => {}; } catch (e) {}
      out.push(Object.isFrozen(console));
      print(out.join(' '))`,
      box,
    );
    expect(r.stdout).toBe('TypeError answer:string:4 true\n');
  });
});

describe('leaked references', () => {
  it('reaches no isolated-vm object and no host function from anything reachable', async () => {
    const report = await finalOf<{ visited: number; suspicious: string[] }>(`
      const C = 'constr' + 'uctor';
      const BAD = /^(Reference|ExternalCopy|Callback|Isolate|Context|Script|Module|Dereference|Copy|NativeModule)$/;
      const METHODS = ['applySyncPromise', 'applySync', 'derefInto', 'copyInto', 'copySync', 'deref', 'release'];
      const seen = new Set();
      const queue = [globalThis, llm_query('x'), search_chunks('harbour'), get_chunk('a:0'), neighbors('a:1'), grep('harbour')];
      const suspicious = [];
      const toString = Object['proto' + 'type'].toString;
      for (let i = 0; i < queue.length && seen.size < 50000; i++) {
        const v = queue[i];
        if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v)) continue;
        seen.add(v);
        const tag = toString.call(v);
        if (/Reference|ExternalCopy|Callback/.test(tag)) suspicious.push(tag);
        try {
          const p = Object.getPrototypeOf(v);
          const ctor = p && Object.getOwnPropertyDescriptor(p, C);
          if (ctor && typeof ctor.value === 'function' && BAD.test(ctor.value.name)) suspicious.push('ctor ' + ctor.value.name);
          queue.push(p);
        } catch (e) {}
        for (const key of [...Object.getOwnPropertyNames(v), ...Object.getOwnPropertySymbols(v)]) {
          if (METHODS.includes(key)) suspicious.push('method ' + String(key));
          let d;
          try { d = Object.getOwnPropertyDescriptor(v, key); } catch (e) { continue; }
          if (!d) continue;
          queue.push(d.value, d.get, d.set);
        }
      }
      FINAL({ visited: seen.size, suspicious })`);
    expect(report.visited).toBeGreaterThan(500);
    expect(report.suspicious).toEqual([]);
  });
});

describe('validation bypasses are still contained', () => {
  it('computed names reach nothing dangerous', async () => {
    const results = await finalOf<string[]>(`
      const out = [];
      const attempts = {
        ctorOfGlobal: () => globalThis['constr' + 'uctor']['constr' + 'uctor']('return process')(),
        evalViaThis: () => this['ev' + 'al']('1'),
        functionViaJoin: () => globalThis[['Fun', 'ction'].join('')]('return 1')(),
        reflectViaConcat: () => globalThis['Ref' + 'lect'].get(globalThis, 'x'),
        proxy: () => new globalThis['Pro' + 'xy']({}, {}),
        wasm: () => globalThis['WebAss' + 'embly'].Module,
        sab: () => new globalThis['Shared' + 'ArrayBuffer'](8),
        protoSwap: () => { const o = {}; o['__pro' + 'to__'] = globalThis; return o.process.env; },
        defineGetter: () => ({})['__define' + 'Getter__']('x', () => 1) ?? 'noop',
        stackHook: () => { Error['prepare' + 'StackTrace'] = (e, f) => f[0].getFunction(); return typeof new Error().stack; },
      };
      for (const [name, f] of Object.entries(attempts)) {
        try { out.push(name + ' -> ' + String(f())); } catch (e) { out.push(name + ' x ' + e.name); }
      }
      FINAL(out)`);
    expect(results).toEqual([
      'ctorOfGlobal x EvalError',
      'evalViaThis x TypeError',
      'functionViaJoin x TypeError',
      'reflectViaConcat x TypeError',
      'proxy x TypeError',
      'wasm x TypeError',
      'sab x TypeError',
      'protoSwap x TypeError',
      'defineGetter -> noop',
      'stackHook -> string',
    ]);
  });
});

describe('bounded host work', () => {
  it('refuses a batch of more than 10,000 sub-calls in the block, before the host builds an answer for each', async () => {
    const r = await run(`llm_query_batched(new Array(1200000).fill('a'))`, await freshSandbox());
    expect(r.error?.message).toContain(
      'RangeError: llm_query_batched takes at most 10000 items at once (got 1200000); send fewer',
    );
  });
});

describe('the host keeps answering', () => {
  it('runs a normal block after all the above', async () => {
    const r = await run('const fine = llm_query("ok?")\nprint(fine, context.length)');
    expect(r).toMatchObject({ ok: true, reset: false });
    expect(r.stdout).toBe(`answer:string:3 ${'public context text\nsecond line '.length + 100}\n`);
  });
});
