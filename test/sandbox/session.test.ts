import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHost } from '../../src/sandbox/host.ts';
import { createSandbox } from '../../src/sandbox/session.ts';
import type { Sandbox, SandboxLimits } from '../../src/sandbox/types.ts';
import { fakeStore } from './fake-store.ts';
import { ROOMY_LIMITS } from './roomy-limits.ts';

const open: Sandbox[] = [];
async function sandbox(host: SandboxHost = {}, limits: SandboxLimits = {}): Promise<Sandbox> {
  const sb = await createSandbox(host, { ...ROOMY_LIMITS, ...limits });
  open.push(sb);
  return sb;
}
afterEach(() => {
  for (const sb of open.splice(0)) sb.dispose();
});

describe('persistence', () => {
  it('keeps const, let, var, function and class across blocks', async () => {
    const sb = await sandbox();
    const first = await sb.run(
      'const a = 1\nlet b = 2\nvar c = 3\nfunction f(x) { return x * 10 }\nclass K { get v() { return 7 } }',
    );
    expect(first).toMatchObject({ ok: true, error: null, reset: false });
    const r = await sb.run('f(a + b + c) + new K().v');
    expect(r.stdout).toBe('67\n');
  });

  it('lets a later block declare the same name again', async () => {
    const sb = await sandbox();
    await sb.run('const x = 1');
    const r = await sb.run('const x = 2\nx');
    expect(r).toMatchObject({ ok: true, stdout: '2\n' });
    expect((await sb.run('x')).stdout).toBe('2\n');
  });

  it('keeps destructured names and vars from loops', async () => {
    const sb = await sandbox();
    await sb.run('const { p, q: [r] } = { p: "P", q: ["R"] }\nfor (var i = 0; i < 3; i++) {}');
    expect((await sb.run('p + r + i')).stdout).toBe('"PR3"\n');
  });

  it('supports top-level await', async () => {
    const sb = await sandbox();
    const r = await sb.run(
      'const v = await Promise.resolve(5)\nconst w = await new Promise((res) => res(v + 1))\nw',
    );
    expect(r.stdout).toBe('6\n');
    expect((await sb.run('v')).stdout).toBe('5\n');
  });

  it('shows the final expression like a REPL and nothing for undefined', async () => {
    const sb = await sandbox();
    expect((await sb.run('({ a: 1, b: [1, 2], s: "x" })')).stdout).toBe('{ a: 1, b: [ 1, 2 ], s: "x" }\n');
    expect((await sb.run('print("hi")')).stdout).toBe('hi\n');
    expect((await sb.run('new Map([[1, "a"]])')).stdout).toBe('Map(1) { 1 => "a" }\n');
    expect((await sb.run('const big = Array.from({ length: 150 }, (_, i) => i); big')).stdout).toContain(
      '... 50 more items',
    );
    expect((await sb.run('const o = {}; o.self = o; o')).stdout).toBe('{ self: [Circular] }\n');
    expect((await sb.run('x => x')).stdout).toBe('[Function: (anonymous)]\n');
  });

  it('prints with print and console.*', async () => {
    const sb = await sandbox();
    const r = await sb.run(
      'print("a", 1, [2]); console.log("b"); console.error({ c: 3 }); console.assert(1 > 2, "math", 3)',
    );
    expect(r.stdout).toBe('a 1 [ 2 ]\nb\n{ c: 3 }\nAssertion failed math 3\n');
  });
});

describe('FINAL and FINAL_VAR', () => {
  it('records FINAL and lets the block finish', async () => {
    const sb = await sandbox();
    const r = await sb.run('FINAL("the answer")\nprint("after")');
    expect(r).toMatchObject({ ok: true, final: 'the answer', stdout: 'after\n' });
  });

  it('stringifies non-string answers as JSON', async () => {
    const sb = await sandbox();
    expect((await sb.run('FINAL({ n: 1 })')).final).toBe('{"n":1}');
    expect((await sb.run('FINAL(42)')).final).toBe('42');
  });

  it('FINAL_VAR reads a variable and reports a missing one as an error', async () => {
    const sb = await sandbox();
    expect((await sb.run('const answer = "from var"\nFINAL_VAR("answer")')).final).toBe('from var');
    const r = await sb.run('FINAL_VAR("missing")');
    expect(r.final).toBeNull();
    expect(r.error).toMatchObject({ code: 'RUNTIME', line: 1 });
    expect(r.error?.message).toContain('FINAL_VAR: no variable named missing');
  });

  it('readVariable reads top-level variables as strings', async () => {
    const sb = await sandbox();
    await sb.run('const s = "text"; const o = { a: [1] }');
    expect(await sb.readVariable('s')).toBe('text');
    expect(await sb.readVariable('o')).toBe('{"a":[1]}');
    expect(await sb.readVariable('nope')).toBeUndefined();
  });

  it('does not carry a final into the next block', async () => {
    const sb = await sandbox();
    await sb.run('FINAL("x")');
    expect((await sb.run('1')).final).toBeNull();
  });
});

describe('errors and positions', () => {
  it('reports a syntax error on line 3 column 5 exactly', async () => {
    const sb = await sandbox();
    const r = await sb.run('const a = 1;\nconst b = 2;\n    )');
    expect(r.error).toMatchObject({ code: 'SYNTAX', line: 3, column: 4 });
    expect(r.ok).toBe(false);
  });

  it('reports runtime errors at the block-relative position', async () => {
    const sb = await sandbox();
    const r = await sb.run('const a = 1;\nlet b;\nconst c = 1 + undefinedThing;');
    expect(r.error).toMatchObject({ code: 'RUNTIME', line: 3, column: 14 });
    expect(r.error?.message).toBe('ReferenceError: undefinedThing is not defined');
  });

  it('reports errors thrown inside functions at the throw site', async () => {
    const sb = await sandbox();
    const r = await sb.run('function f() {\n  throw new TypeError("bad input")\n}\nf()');
    // V8 places an error where it was constructed: the `new`.
    expect(r.error).toMatchObject({ code: 'RUNTIME', message: 'TypeError: bad input', line: 2, column: 8 });
  });

  it('reports thrown non-errors', async () => {
    const sb = await sandbox();
    const r = await sb.run('throw "plain"');
    expect(r.error?.message).toBe('Uncaught "plain"');
  });

  it('ignores a promise rejection left unhandled (reading its reason could run model code unbounded)', async () => {
    const sb = await sandbox();
    const r = await sb.run('print("before")\nPromise.reject(new RangeError("late"))\nprint("after")');
    expect(r).toMatchObject({ ok: true, stdout: 'before\nafter\n', error: null, reset: false });
    const handled = await sb.run('const p = Promise.reject(new Error("x"))\nawait p.catch(() => "handled")');
    expect(handled).toMatchObject({ ok: true, stdout: '"handled"\n' });
  });

  it('keeps the session after an error', async () => {
    const sb = await sandbox();
    await sb.run('const kept = 1\nnull.x');
    expect((await sb.run('kept')).stdout).toBe('1\n');
  });

  it('returns validation errors without running anything', async () => {
    const sb = await sandbox();
    const r = await sb.run('print("ran")\nconst C = x.constructor');
    expect(r.stdout).toBe('');
    expect(r.error).toMatchObject({ code: 'VALIDATION', line: 2, rule: 'prototype-access' });
  });
});

describe('llm_query', () => {
  const host = (): SandboxHost => ({
    llmQuery: async (prompt, context) => {
      await new Promise((r) => setTimeout(r, 5));
      return `A(${prompt}${context ? `|${context.length}` : ''})`;
    },
  });

  it('returns the answer without await', async () => {
    const sb = await sandbox(host());
    const r = await sb.run("const r = llm_query('x'); print(r)");
    expect(r.stdout).toBe('A(x)\n');
    expect(r.stats.hostCalls).toBe(1);
  });

  it('returns the answer with await, and passes the context', async () => {
    const sb = await sandbox(host());
    const r = await sb.run("const r = await llm_query('q', 'abcdef'); r");
    expect(r.stdout).toBe('"A(q|6)"\n');
  });

  it('batches in order, falling back to llmQuery when no batched host is given', async () => {
    const sb = await sandbox(host());
    const r = await sb.run("llm_query_batched(['a', 'b', 'c'])");
    expect(r.stdout).toBe('[ "A(a)", "A(b)", "A(c)" ]\n');
    expect(r.stats.hostCalls).toBe(1);
  });

  it('uses llmQueryBatched when given', async () => {
    const sb = await sandbox({ llmQueryBatched: async (ps) => ps.map((p) => p.prompt.toUpperCase()) });
    expect((await sb.run("llm_query_batched(['a', 'b'])")).stdout).toBe('[ "A", "B" ]\n');
  });

  it('says clearly that no model is configured', async () => {
    const sb = await sandbox();
    const r = await sb.run("llm_query('x')");
    expect(r.error?.message).toBe('Error: llm_query is unavailable: no model configured (pass --model)');
  });

  it('passes host failures as a short message without stack or paths', async () => {
    const sb = await sandbox({
      llmQuery: async () => {
        throw new Error('provider failed at /home/user/.config/secret.json\n    at foo (/app/src/x.ts:1:1)');
      },
    });
    const r = await sb.run(
      "try { llm_query('x') } catch (e) { print(e.message); print(String(e.stack).includes('/app')) }",
    );
    expect(r.stdout).toBe('llm_query: provider failed at <path>\nfalse\n');
  });
});

describe('context helpers', () => {
  const text = 'alpha line\nthe NEEDLE is here\nbeta\nanother needle line\n';

  it('exposes a string context with peek and grep', async () => {
    const sb = await sandbox({ context: text });
    expect((await sb.run('context.length')).stdout).toBe(`${text.length}\n`);
    expect((await sb.run('peek(0, 5)')).stdout).toBe('"alpha"\n');
    expect((await sb.run("peek('doc:0', 6, 10)")).stdout).toBe('"line"\n');
    const r = await sb.run("FINAL(grep('needle', { ignoreCase: true, context: 3 }))");
    expect(r.ok).toBe(true);
    expect(JSON.parse(r.final ?? 'null')).toEqual([
      {
        id: 'doc:0',
        document: 'doc:0',
        path: 'doc:0',
        offset: 15,
        documentOffset: 15,
        text: 'the NEEDLE is here',
        before: 'ne\n',
        after: '\nbe',
      },
      {
        id: 'doc:0',
        document: 'doc:0',
        path: 'doc:0',
        offset: 43,
        documentOffset: 43,
        text: 'another needle line',
        before: 'ta\n',
        after: '\n',
      },
    ]);
  });

  it('supports regex and literal grep, limits and bad patterns', async () => {
    const sb = await sandbox({ context: text });
    expect((await sb.run("grep('^b.ta$').length")).stdout).toBe('1\n');
    expect((await sb.run("grep('a.p', { literal: true }).length")).stdout).toBe('0\n');
    expect((await sb.run('grep(/NEEDLE/i).length')).stdout).toBe('2\n');
    // An explicit limit is the model's choice: flagged on the result, no notice.
    const limited = await sb.run("const g = grep('e', { limit: 1 }); [g.length, g.truncated]");
    expect(limited.stdout).toBe('[ 1, true ]\n');
    const bad = await sb.run("grep('(unclosed')");
    expect(bad.error?.message).toContain('invalid regex');
  });

  it('exposes several documents as a frozen array with doc ids', async () => {
    const sb = await sandbox({ context: ['first doc', 'second doc has NEEDLE'] });
    expect((await sb.run('[context.length, Object.isFrozen(context)]')).stdout).toBe('[ 2, true ]\n');
    expect((await sb.run("grep('NEEDLE')[0].id")).stdout).toBe('"doc:1"\n');
    expect((await sb.run("peek('doc:1', 0, 6)")).stdout).toBe('"second"\n');
    expect((await sb.run('peek(6, 13)')).stdout).toBe('"doc\\nsec"\n');
  });

  it('handles non-ASCII text and unicode regexes', async () => {
    const sb = await sandbox({ context: 'première ligne\nzweite Zeile mit Größe ✓\n' });
    expect((await sb.run("grep('Größe')[0].text")).stdout).toBe('"zweite Zeile mit Größe ✓"\n');
    expect((await sb.run("grep('\\\\p{Lu}\\\\p{Ll}+e\\\\b').map((m) => m.offset)")).stdout).toBe('[ 22 ]\n');
  });

  it('serves a context larger than maxContextChars from the host', async () => {
    const sb = await sandbox({ context: 'x'.repeat(50) + 'NEEDLE' }, { maxContextChars: 10 });
    // `context` is not there, and any use of it says what to use instead.
    expect((await sb.run('context.length')).error?.message).toBe(
      'Error: context is too large to load into the sandbox. Use peek(start, end), grep(pattern) and list_documents()',
    );
    expect((await sb.run('peek(48, 54)')).stdout).toBe('"xxNEED"\n');
    const r = await sb.run("grep('NEEDLE')");
    expect(r.stdout).toContain('offset: 50');
  });

  it('explains store helpers when there is no store', async () => {
    const sb = await sandbox({ context: text });
    const r = await sb.run("search_chunks('x')");
    expect(r.error?.message).toContain('search_chunks needs a chunk store');
  });
});

describe('store helpers', () => {
  it('maps search_chunks, get_chunk, neighbors, peek(id) and grep onto the store', async () => {
    const store = fakeStore();
    const sb = await sandbox({ store });
    const hits = await sb.run("const hits = search_chunks('harbour', { k: 5 }); hits.map(h => h.id)");
    expect(hits.stdout).toBe('[ "a:1", "b:0" ]\n');
    expect(store.searches[0]).toEqual({ query: 'harbour', opts: { k: 5 } });
    expect((await sb.run("get_chunk('a:0').text.slice(0, 8)")).stdout).toBe('"The laun"\n');
    expect((await sb.run("get_chunk('zzz')")).stdout).toBe('null\n');
    expect((await sb.run("neighbors('a:1').map(n => n.id + ':' + n.type)")).stdout).toBe(
      '[ "a:0:follows", "b:0:related_to" ]\n',
    );
    expect((await sb.run("peek('a:0', 4, 10)")).stdout).toBe('"launch"\n');
    expect(store.touched).toEqual(['a:0', 'a:0']);
    expect((await sb.run("grep('harbour', { ignoreCase: true }).map(m => m.id)")).stdout).toBe(
      '[ "a:1", "b:0" ]\n',
    );
    expect(store.greps[0]?.opts).toMatchObject({ ignoreCase: true, literal: false });
  });

  it("search_chunks' document filter takes what grep's does, and names of nothing are the model's error", async () => {
    const store = fakeStore();
    const sb = await sandbox({ store });
    await sb.run("search_chunks('harbour', { document: ['a'] })");
    expect(store.searches.at(-1)?.opts).toEqual({ document: ['a'] });
    // A file stored in parts is one document: its first part's id brings the others along, only them.
    const docs = await store.documents();
    store.documents = () => [
      ...docs,
      ...['b.p2', 'b.p3', 'bb.p2', 'b.pdf'].map((id) => ({ ...docs[1]!, id })),
    ];
    const parted = await sandbox({ store });
    await parted.run("search_chunks('harbour', { document: ['b'] })");
    expect(store.searches.at(-1)?.opts).toEqual({ document: ['b', 'b.p2', 'b.p3'] });
    const r = await sb.run("search_chunks('harbour', { document: ['nope'] })");
    expect(r.error?.message).toBe(
      'Error: search_chunks: no document "nope"; list_documents() shows every id and path',
    );
  });

  it('reports store errors without paths or stacks', async () => {
    const sb = await sandbox({ store: fakeStore() });
    const r = await sb.run("grep('explode')");
    expect(r.error?.message).toBe('Error: grep: grep failed reading <path>');
    const missing = await sb.run("peek('nope:1')");
    expect(missing.error?.message).toBe(
      'Error: peek: no chunk or document with id nope:1 (a chunk id DOCUMENT:N from search_chunks or grep, or a document id from list_documents)',
    );
  });

  it('rejects a bad link type', async () => {
    const sb = await sandbox({ store: fakeStore() });
    const r = await sb.run("neighbors('a:1', 'bogus')");
    expect(r.error?.message).toContain('type must be one of');
  });
});

describe('session lifecycle', () => {
  it('runs blocks one at a time in call order', async () => {
    const sb = await sandbox({ llmQuery: async (p) => p });
    const results = await Promise.all([
      sb.run('var log = []; log.push(llm_query("1"))'),
      sb.run('log.push(2); log'),
    ]);
    expect(results[1]?.stdout).toBe('[ "1", 2 ]\n');
  });

  it('refuses to run after dispose', async () => {
    const sb = await sandbox();
    sb.dispose();
    const r = await sb.run('1');
    expect(r.error?.code).toBe('ABORTED');
  });

  it('rejects bad limits', async () => {
    await expect(createSandbox({}, { cpuMs: -1 })).rejects.toMatchObject({ code: 'VALIDATION' });
  });
});
