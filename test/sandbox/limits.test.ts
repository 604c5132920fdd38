import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { SandboxHost } from '../../src/sandbox/host.ts';
import {
  DEFAULT_CPU_MS,
  DEFAULT_MAX_CONTEXT_CHARS,
  DEFAULT_MAX_HOST_CALLS,
  DEFAULT_MAX_OUTPUT_CHARS,
  DEFAULT_WALL_MS,
  defaultMemoryMb,
  resolveLimits,
} from '../../src/sandbox/limits.ts';
import { truncateOutput } from '../../src/sandbox/output.ts';
import { createSandbox } from '../../src/sandbox/session.ts';
import type { Sandbox, SandboxLimits } from '../../src/sandbox/types.ts';
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

describe('resolveLimits', () => {
  it('fills in documented defaults', () => {
    expect(resolveLimits()).toEqual({
      cpuMs: DEFAULT_CPU_MS,
      wallMs: DEFAULT_WALL_MS,
      memoryMb: 128,
      maxOutputChars: DEFAULT_MAX_OUTPUT_CHARS,
      maxHostCalls: DEFAULT_MAX_HOST_CALLS,
      maxContextChars: DEFAULT_MAX_CONTEXT_CHARS,
    });
  });

  it('sizes memory to the context, capped', () => {
    expect(defaultMemoryMb(40 * 1024 * 1024)).toBe(128 + 160);
    expect(resolveLimits({}, 40 * 1024 * 1024).memoryMb).toBe(288);
    expect(defaultMemoryMb(10 * 1024 * 1024 * 1024)).toBe(4096);
    // A context too large to load does not inflate the heap.
    expect(resolveLimits({ maxContextChars: 10 }, 1024 * 1024 * 100).memoryMb).toBe(128);
    expect(resolveLimits({ memoryMb: 64 }).memoryMb).toBe(64);
  });

  it('rejects nonsense', () => {
    expect(() => resolveLimits({ wallMs: 0 })).toThrow(/wallMs/);
    expect(() => resolveLimits({ memoryMb: 4 })).toThrow(/memoryMb/);
    expect(() => resolveLimits({ cpuMs: Number.NaN })).toThrow(/cpuMs/);
  });
});

describe('truncateOutput', () => {
  it('keeps head and tail around a marker', () => {
    const text = `${'a'.repeat(100)}${'b'.repeat(100)}`;
    const out = truncateOutput(text, 20);
    expect(out).toBe(`${'a'.repeat(10)}\n… [180 characters of output omitted] …\n${'b'.repeat(10)}`);
    expect(truncateOutput('short', 20)).toBe('short');
  });
});

describe('CPU limit', () => {
  /** The CPU limit these tests reach: their blocks never end otherwise. */
  const cpu = { cpuMs: 1000 };

  it('stops an infinite loop, keeps the output so far and the session', async () => {
    const sb = await sandbox({}, cpu);
    await sb.run('const kept = "still here"');
    const r = await sb.run('print("before"); FINAL("partial"); while (true) {}');
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toContain('CPU time limit of 1000 ms');
    expect(r).toMatchObject({ ok: false, reset: false, stdout: 'before\n', final: 'partial' });
    expect(r.stats.cpuMs).toBeGreaterThan(0);
    expect((await sb.run('kept')).stdout).toBe('"still here"\n');
  });

  it('stops a loop that keeps awaiting', async () => {
    const sb = await sandbox({}, cpu);
    const r = await sb.run('for (;;) await null');
    expect(r.error?.code).toBe('TIMEOUT');
    expect((await sb.run('1 + 1')).stdout).toBe('2\n');
  });

  it('stops a catastrophic regex in grep and says where', async () => {
    const sb = await sandbox({ context: `${'a'.repeat(40)}b\nline two` }, cpu);
    const r = await sb.run("grep('(a+)+$')");
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toContain('inside grep');
    expect(r.reset).toBe(false);
    expect((await sb.run("grep('two').length")).stdout).toBe('1\n');
  });

  it('stops a catastrophic regex in model code', async () => {
    const sb = await sandbox({}, cpu);
    const r = await sb.run('/(x+x+)+y/.test("x".repeat(5000))');
    expect(r.error?.code).toBe('TIMEOUT');
  });
});

describe('wall-clock limit and abort', () => {
  it('reports at once a block that waits on a promise that never settles, keeping the session', async () => {
    // Not at the wall-clock limit, which would say TIMEOUT.
    const sb = await sandbox();
    await sb.run('const kept = 1');
    const r = await sb.run('print("waiting"); await new Promise(() => {})');
    expect(r.error?.code).toBe('RUNTIME');
    expect(r.error?.message).toContain('never settles');
    expect(r).toMatchObject({ stdout: 'waiting\n', reset: false });
    const next = await sb.run('typeof kept');
    expect(next).toMatchObject({ ok: true, stdout: '"number"\n', reset: false });
  });

  it('fails a slow host call at the wall-clock limit and aborts it', async () => {
    let aborted = false;
    let called!: () => void;
    const waiting = new Promise<void>((resolve) => {
      called = resolve;
    });
    const host: SandboxHost = {
      // Answers only if nothing stops it first, long after the limit.
      llmQuery: (_p, _c, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
          });
          called();
          setTimeout(() => resolve('late'), 600_000);
        }),
    };
    const sb = await sandbox(host, { wallMs: 300 });
    await sb.run('const kept = 2');
    // The wall clock is the test's: it reaches the limit while the host call waits, however slow the machine.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const running = sb.run('llm_query("slow")');
    await waiting;
    vi.advanceTimersByTime(300);
    const r = await running;
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toContain('wall-clock limit');
    expect(r.reset).toBe(false);
    expect(aborted).toBe(true);
    expect((await sb.run('kept')).stdout).toBe('2\n');
  });

  it('does not count host waits as CPU time', async () => {
    // The host waits three times the CPU limit; the block's own work is a small part of the limit even
    // on a loaded machine.
    const host: SandboxHost = {
      llmQuery: () => new Promise((resolve) => setTimeout(() => resolve('ok'), 3000)),
    };
    const sb = await sandbox(host, { cpuMs: 1000 });
    const r = await sb.run('llm_query("a")');
    expect(r).toMatchObject({ ok: true, stdout: '"ok"\n' });
  });

  it("stops on the caller's abort signal", async () => {
    const controller = new AbortController();
    // Aborted while the block waits on this call, which never answers.
    const host: SandboxHost = {
      llmQuery: () => {
        queueMicrotask(() => controller.abort());
        return new Promise(() => {});
      },
    };
    const sb = await sandbox(host);
    const r = await sb.run('llm_query("forever")', controller.signal);
    expect(r.error?.code).toBe('ABORTED');
  });
});

describe('memory limit', () => {
  it('survives a heap bomb: the session is rebuilt and a fresh block runs', async () => {
    const sb = await sandbox({}, { memoryMb: 64 });
    await sb.run('const before = 1');
    const r = await sb.run(
      'const hoard = []; while (true) hoard.push({ n: hoard.length, s: "x" + hoard.length })',
    );
    expect(r.error?.code).toBe('MEMORY_LIMIT');
    expect(r.reset).toBe(true);
    const next = await sb.run('typeof before + " " + (1 + 1)');
    expect(next).toMatchObject({ ok: true, stdout: '"undefined 2"\n' });
  });

  it('says MEMORY_LIMIT when what earlier blocks keep passed the limit before a block could start', async () => {
    const sb = await sandbox({}, { memoryMb: 128 });
    expect((await sb.run('const m = new Map(); for (let i = 0; i < 1e6; i++) m.set(i, "v" + i);')).ok).toBe(
      true,
    );
    // It ends well, most often, leaving the heap over its limit: isolated-vm disposes of the isolate
    // afterwards, and the next block finds it gone. Either way the limit is named, and once.
    const results = [await sb.run('const a = new Array(16e6); 1'), await sb.run('print(3)')];
    expect(results.map((r) => r.error?.code ?? 'ok').sort()).toEqual(['MEMORY_LIMIT', 'ok']);
    const r = results.find((x) => x.error !== null)!;
    expect(r.error?.message).toMatch(/^memory limit of 128 MB reached/);
    expect(r.reset).toBe(true);
    expect(await sb.run('print(4)')).toMatchObject({ ok: true, stdout: '4\n' });
  });

  it('refuses huge sparse-array and giant-string operations that V8 cannot interrupt', async () => {
    const sb = await sandbox();
    for (const code of [
      'const a = []; a.length = 1e9; a.fill(0)',
      'const b = []; b[1e9] = 1; b.sort()',
      'Array.from({ length: 1e9 })',
      'new Array(1e9).reverse()',
    ]) {
      const r = await sb.run(code);
      expect(r.error?.code).toBe('RUNTIME');
      expect(r.error?.message).toMatch(/RangeError: .*over the sandbox limit/);
    }
    const s = await sb.run('"ab".repeat(1e8).replace(/a/g, "cc")');
    expect(s.error?.message).toMatch(/RangeError: String.prototype.repeat: .*over the sandbox limit/);
    // Ordinary arrays are untouched, and a large fill still works (as a loop).
    expect((await sb.run('new Array(200000).fill(3).reduce((s, x) => s + x, 0)')).stdout).toBe('600000\n');
  });
});

describe('output and stack limits', () => {
  it('keeps head and tail of an output flood', async () => {
    const sb = await sandbox({}, { maxOutputChars: 1000 });
    const r = await sb.run('for (let i = 0; i < 100000; i++) print("line " + i)');
    expect(r.ok).toBe(true);
    expect(r.stdout.length).toBeLessThan(1200);
    expect(r.stdout.startsWith('line 0\nline 1\n')).toBe(true);
    expect(r.stdout.endsWith('line 99999\n')).toBe(true);
    expect(r.stdout).toMatch(/characters of output omitted/);
  });

  it('keeps output bounded when a flood is stopped by the CPU limit', async () => {
    const sb = await sandbox({}, { maxOutputChars: 500, cpuMs: 1000 });
    const r = await sb.run('for (;;) print("spam")');
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.stdout.length).toBeLessThan(700);
    expect(r.stdout.startsWith('spam\n')).toBe(true);
  });

  it('reports a stack overflow as an error and keeps the session', async () => {
    const sb = await sandbox();
    await sb.run('const kept = 3');
    const r = await sb.run('function f() { return f() + 1 }\nf()');
    expect(r.error).toMatchObject({
      code: 'RUNTIME',
      message: 'RangeError: Maximum call stack size exceeded',
    });
    expect((await sb.run('kept')).stdout).toBe('3\n');
  });
});

describe('host call limit', () => {
  it('fails calls beyond maxHostCalls in the block', async () => {
    const sb = await sandbox({ llmQuery: async (p) => p }, { maxHostCalls: 3 });
    const r = await sb.run(
      'let n = 0; try { for (;;) { llm_query("x"); n++ } } catch (e) { print(n, e.message) }',
    );
    expect(r.stdout).toMatch(/^3 llm_query: host call limit reached \(3 per block\)/);
    expect(r.stats.hostCalls).toBe(4);
    // The budget is per block.
    expect((await sb.run('llm_query("again")')).ok).toBe(true);
  });
});
