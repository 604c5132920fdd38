/**
 * Red team, second round: attacks on the host rather than on the isolate's object graph. Each test is
 * the minimal reproduction of a finding: model code that crashed `run`, ran outside the CPU limit,
 * left a thread spinning after its isolate was disposed, hung the session, or made the host allocate
 * without bound.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHost } from '../../src/sandbox/host.ts';
import { createSandbox, type IsolateSandbox } from '../../src/sandbox/session.ts';
import type { BlockResult, Sandbox, SandboxLimits } from '../../src/sandbox/types.ts';
import { wantedCpuMs } from '../helpers/process.ts';
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

/**
 * Runs a block and fails the test, saying so, if it never ends. The bound only tells a hang apart: it is
 * far above what any of these blocks takes on a loaded machine, and below the test's own timeout.
 */
async function within(sb: Sandbox, code: string): Promise<BlockResult> {
  const ms = 100_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the block did not end within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([sb.run(code), hung]);
  } finally {
    clearTimeout(timer);
  }
}

const NO_HOST_DETAILS = /node_modules|\/work\/|\.ts:\d|file:\/\/|at .*\(/;

describe('validation does not crash the host', () => {
  it('rejects a member chain too deep to walk, without throwing out of run', async () => {
    const sb = await sandbox();
    const r = await within(sb, `x = a${'.b'.repeat(20_000)}`);
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('VALIDATION');
    expect(r.error?.message).toMatch(/nested too deeply/);
    expect(JSON.stringify(r)).not.toMatch(NO_HOST_DETAILS);
    const calls = await within(sb, `f${'()'.repeat(20_000)}`);
    expect(calls.error?.code).toBe('VALIDATION');
    expect((await within(sb, '1 + 1')).stdout).toBe('2\n');
  });
});

describe('unhandled rejections run no model code outside the CPU limit', () => {
  it('ignores a rejection whose reason has a looping message getter', async () => {
    const sb = await sandbox();
    await sb.run('const kept = 1');
    // Had the getter run, the block would end by the CPU limit (TIMEOUT) or a kill (reset).
    const r = await within(sb, 'Promise.reject({ get message() { for (;;) {} } }); print("done")');
    expect(r).toMatchObject({ stdout: 'done\n', error: null, reset: false });
    expect((await within(sb, 'kept')).stdout).toBe('1\n');
  });

  it('does not leave a thread spinning after two chained looping getters', async () => {
    const sb = await sandbox();
    const r = await within(
      sb,
      'class E extends Error { get name() { for (;;) {} } }\nPromise.reject({ get message() { for (;;) {} }, get stack() { for (;;) {} } })\nPromise.reject(new E("x"))\n2',
    );
    expect(r).toMatchObject({ stdout: '2\n', error: null, reset: false });
  });

  it('does not hang when a block stopped by the CPU limit left such a rejection behind', async () => {
    const sb = await sandbox({}, { cpuMs: 1000 });
    const r = await within(
      sb,
      'print("before"); Promise.reject({ get message() { for (;;) {} } }); for (;;) {}',
    );
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r).toMatchObject({ stdout: 'before\n', reset: false });
    expect((await within(sb, '3')).stdout).toBe('3\n');
  });

  it('keeps readVariable bounded when the variable getter leaves such a rejection', async () => {
    const sb = await sandbox();
    await sb.run(
      'Object.defineProperty(globalThis, "answer", { get() { Promise.reject({ get message() { for (;;) {} } }); return "ok"; } })',
    );
    expect(await sb.readVariable('answer')).toBe('ok');
    expect((await within(sb, '4')).stdout).toBe('4\n');
  });

  it('tells at once that a block waits on a promise that never settles', async () => {
    const sb = await sandbox();
    // Reported when the block's call returns, not at the wall-clock limit (which says TIMEOUT).
    const r = await within(sb, 'print("waiting"); await new Promise(() => {})');
    expect(r.error?.code).toBe('RUNTIME');
    expect(r.error?.message).toMatch(/never settles/);
    expect(r.stdout).toContain('waiting');
  });
});

describe('no model code runs on the host thread', () => {
  it('does not copy an error built under poisoned prototypes while compiling a block', async () => {
    const sb = (await sandbox({}, { cpuMs: 3000 })) as IsolateSandbox;
    // Before: the next block's script-level var failed on the host thread, and isolated-vm built the
    // error's stack there, calling this getter (a real attacker's loops forever, freezing the host).
    await sb.run(
      `Object.defineProperty(TypeError['proto' + 'type'], 'name', { get() { const t = Date.now(); while (Date.now() - t < 3000) {} return 'T'; }, configurable: true });
      Object.preventExtensions(globalThis)`,
    );
    // The getter spins where model code runs, the isolate's process, until the CPU limit stops it; the
    // host's thread wants the CPU for a small share of that time only. (Time spent running or waiting
    // to run: a loaded machine slows both alike.)
    const pid = sb.pid!;
    const [isolate, host, started] = [
      wantedCpuMs(pid),
      wantedCpuMs(process.pid, process.pid),
      performance.now(),
    ];
    const r = await within(sb, 'var brandNew = 1');
    const elapsed = performance.now() - started;
    expect((wantedCpuMs(pid) - isolate) / elapsed).toBeGreaterThan(0.5);
    expect((wantedCpuMs(process.pid, process.pid) - host) / elapsed).toBeLessThan(0.5);
    expect(r.ok).toBe(false);
    expect(r.reset).toBe(false);
    expect((await within(sb, '6')).stdout).toBe('6\n');
  });
});

describe('poisoned Promise machinery does not brick the session', () => {
  it('keeps running later blocks after Promise.prototype.constructor and then are poisoned', async () => {
    const sb = await sandbox();
    const r = await within(
      sb,
      `const P = Promise['proto' + 'type'];
      Object.defineProperty(P, 'constr' + 'uctor', { get() { for (;;) {} }, configurable: true });
      P.then = function () { for (;;) {} };
      'poisoned'`,
    );
    expect(r).toMatchObject({ ok: true, stdout: '"poisoned"\n' });
    const next = await within(sb, '1 + 1');
    expect(next).toMatchObject({ ok: true, stdout: '2\n' });
  });
});

describe('host-side grep is bounded whatever the model asks', () => {
  it('does not pass a model-chosen timeout to the host grep', async () => {
    const store = fakeStore();
    const sb = await sandbox({ store });
    const r = await within(sb, "grep('harbour', { timeoutMs: 600000, limit: 5 }).length");
    expect(r.ok).toBe(true);
    expect(store.greps.at(-1)?.opts?.timeoutMs).toBeUndefined();
  });

  it('refuses a search query long enough to stall the host while it is analysed', async () => {
    const store = fakeStore();
    const sb = await sandbox({ store });
    const r = await within(sb, "search_chunks('harbour '.repeat(300000))");
    expect(r.error?.message).toMatch(/search_chunks: the query is 2400000 characters; at most 10000/);
    // Short words, many of them, cost as much: at most 200.
    const words = await within(
      sb,
      "search_chunks(Array.from({ length: 1200 }, (_, i) => 'w' + i).join(' '))",
    );
    expect(words.error?.message).toMatch(/search_chunks: the query has 1200 words; at most 200/);
    // Words are cut where the analyser cuts them, not only at spaces.
    const commas = await within(
      sb,
      "search_chunks(Array.from({ length: 1200 }, (_, i) => 'w' + i).join(','))",
    );
    expect(commas.error?.message).toMatch(/search_chunks: the query has 1200 words; at most 200/);
    expect(store.searches).toEqual([]);
  });

  it('caps how much text one grep can make the host build', async () => {
    const store = fakeStore();
    const sb = await sandbox({ store });
    await within(sb, "grep('harbour', { limit: 100000, context: 10000 })");
    const opts = store.greps.at(-1)?.opts;
    expect((opts?.limit ?? 0) * (2 * (opts?.context ?? 0) + 500)).toBeLessThanOrEqual(64 * 1024 * 1024);
    // A limit changed after validation (a getter read twice) is still capped.
    await within(
      sb,
      "let n = 0; const o = { get limit() { return n++ === 0 ? 5 : 1e9 }, context: 10000 }; grep('harbour', o)",
    );
    const later = store.greps.at(-1)?.opts;
    expect((later?.limit ?? 0) * (2 * (later?.context ?? 0) + 500)).toBeLessThanOrEqual(64 * 1024 * 1024);
  });
});

describe('regexes are bounded before V8 parses them in one step', () => {
  it('refuses a huge grep pattern before the host parses it on its main thread', async () => {
    const store = fakeStore();
    const sb = await sandbox({ store });
    const r = await within(sb, "grep('\\\\p{L}'.repeat(200000))");
    expect(r.error?.message).toMatch(/at most 4096/);
    expect(store.greps).toEqual([]);
    const local = await sandbox({ context: 'some text' });
    expect((await within(local, "grep('\\\\p{L}'.repeat(2000))")).error?.message).toMatch(/at most 4096/);
  });

  it('refuses regexes of more than 8192 characters however they are built', async () => {
    const sb = await sandbox();
    const r = await within(
      sb,
      `const big = '\\\\p{L}'.repeat(2000), out = [];
      for (const f of [() => new RegExp(big, 'u'), () => RegExp(big), () => 'x'.match(big), () => 'x'.search({ toString: () => big }),
        () => /a/.compile(big), () => new RegExp({ [Symbol.match]: true, source: big, flags: 'u' }), () => [...'x'.matchAll(big)]]) {
        try { f(); out.push('built'); } catch (e) { out.push(e.name); }
      }
      class R extends RegExp {}
      out.push(/x/ instanceof RegExp, new R('a+').test('aa'), 'a-b'.split(/-/).length, new RegExp('\\\\d', 'g').flags);
      out.join(' ')`,
    );
    expect(r.stdout).toBe(
      '"RangeError RangeError RangeError RangeError RangeError RangeError RangeError true true 2 g"\n',
    );
    const literal = await within(sb, `/${'a'.repeat(9000)}/.test('a')`);
    expect(literal.error).toMatchObject({ code: 'VALIDATION', rule: 'regex-size' });
  });
});

describe('built-ins V8 cannot interrupt', () => {
  it('stops a default sort of millions of numbers by the CPU limit, not by a catastrophe', async () => {
    // A limit the array is built well within, even on a loaded machine, and that the sort (seconds of
    // CPU) exceeds.
    const sb = await sandbox({}, { cpuMs: 5000 });
    await sb.run('const kept = 5');
    const r = await within(
      sb,
      'const a = new Array(3e6); for (let i = 0; i < a.length; i++) a[i] = (i * 7919) % 1000003; print("built"); a.sort(); a.length',
    );
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.stdout).toBe('built\n');
    expect(r.reset).toBe(false);
    expect((await within(sb, 'kept')).stdout).toBe('5\n');
  });

  it('sorts like the native default sort on both paths', async () => {
    const sb = await sandbox();
    const r = await within(
      sb,
      `const n = 300000, a = new Array(n + 3);
      for (let i = 0; i < n; i++) a[i] = i % 7 === 0 ? undefined : i % 5 === 0 ? 'k' + (i % 97) : (i * 7919) % 100003 - 500;
      const check = (s) => {
        const undef = a.filter((x) => x === undefined).length, values = n - undef;
        for (let i = 1; i < values; i++) if (String(s[i - 1]) > String(s[i])) return 'unordered at ' + i;
        for (let i = values; i < n; i++) if (!(i in s) || s[i] !== undefined) return 'undefined missing at ' + i;
        return s.length + ' ' + (n in s);
      };
      print(check(a.slice().sort()), check(a.toSorted()));
      print(JSON.stringify([10, 9, 1, undefined, , 'b', 'a', -1].sort()));
      const t = new Float64Array([3, NaN, -0, 0, -1, 2]).sort();
      print(Array.from(t, (x) => Object.is(x, -0) ? '-0' : String(x)).join(' '));
      const f = new Float64Array(300000).map((_, i) => Math.sin(i) * 1000); f[5] = NaN; f[6] = -0; f[7] = 0;
      const fs = f.toSorted();
      let fo = true; for (let i = 1; i < fs.length - 1; i++) if (fs[i - 1] > fs[i]) fo = false;
      print(fo, Number.isNaN(fs[fs.length - 1]), Object.is(fs[fs.indexOf(0)], -0));`,
    );
    expect(r.error).toBeNull();
    expect(r.stdout).toBe(
      '300003 false 300003 true\n[-1,1,10,9,"a","b",null,null]\n-1 -0 0 2 3 NaN\ntrue true true\n',
    );
  });

  it('has no BigInt, whose arithmetic on huge values cannot be interrupted', async () => {
    const sb = await sandbox();
    const r = await within(
      sb,
      `const view = new DataView(new ArrayBuffer(8));
      [typeof globalThis['Big' + 'Int'], typeof globalThis['Big' + 'Int64Array'], typeof globalThis['BigUint' + '64Array'],
        typeof view['getBig' + 'Int64'], typeof view['getBigUint' + '64']].join(' ')`,
    );
    expect(r.stdout).toBe('"undefined undefined undefined undefined undefined"\n');
    expect((await within(sb, "const s = '' + 10n ** 30000000n")).error).toMatchObject({ rule: 'bigint' });
  });

  it('refuses a JSON text with millions of objects, keeps ordinary parsing', async () => {
    const sb = await sandbox();
    const r = await within(sb, "JSON.parse('[' + '{},'.repeat(3e6) + '{}]').length");
    expect(r.error?.message).toMatch(/JSON.parse: more than 2000000 objects and arrays/);
    const ok = await within(sb, "JSON.parse('[' + '1,'.repeat(2e6) + '{\"a\":[2]}]').at(-1).a[0]");
    expect(ok.stdout).toBe('2\n');
  });

  it('refuses toLocaleString, and bounds typed-array sort and join, on huge inputs', async () => {
    const sb = await sandbox({}, { cpuMs: 500, memoryMb: 512 });
    for (const code of [
      'new Array(2e7).fill(1).toLocaleString().length',
      'new Uint8Array(2e7).toLocaleString().length',
      'new Uint8Array(3e8).sort().length',
      'new Float64Array(3e7).toSorted().length',
      'new Uint8Array(3e8).join().length',
    ]) {
      const r = await within(sb, code);
      expect(r.reset, code).toBe(false);
      expect(r.error?.message, code).toMatch(/over the sandbox limit|CPU time limit/);
    }
    expect((await within(sb, 'new Uint8Array([3, 1, 2]).sort().join()')).stdout).toBe('"1,2,3"\n');
  });
});

describe('results are bounded', () => {
  it('returns an error, not an exception, for a FINAL answer too large to encode', async () => {
    const sb = await sandbox();
    const r = await within(sb, 'const a = "\\u0001".repeat(6e7); FINAL(a + a)');
    expect(r.error?.message).toMatch(/too large to return/);
    expect(r.reset).toBe(false);
    expect((await within(sb, '7')).stdout).toBe('7\n');
  });
});

describe('error messages are bounded', () => {
  it('clips a huge thrown message, name or value', async () => {
    const sb = await sandbox();
    for (const code of [
      'throw new Error("x".repeat(5e6))',
      'const e = new Error("m"); e.name = "N".repeat(5e6); throw e',
      'throw "y".repeat(5e6)',
    ]) {
      const r = await within(sb, code);
      expect(r.error?.code, code).toBe('RUNTIME');
      expect(r.error?.message.length, code).toBeLessThan(5000);
    }
  });
});
