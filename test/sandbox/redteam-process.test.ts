/**
 * Red team, third round: blocks V8 cannot interrupt, and limits around the isolate (issues 16 and 17).
 * Each test is the reproduction of a finding. What "stopped" means is measured by state, not assumed and
 * not timed: the isolate's process is gone or no longer wants the CPU, and the host kept answering.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { SandboxHost } from '../../src/sandbox/host.ts';
import { createSandbox, type IsolateSandbox, type SandboxDeps } from '../../src/sandbox/session.ts';
import type { BlockResult, SandboxLimits } from '../../src/sandbox/types.ts';
import { busyShare, childrenOf, gone } from '../helpers/process.ts';
import { tempDir } from '../helpers/temp.ts';
import { ROOMY_LIMITS } from './roomy-limits.ts';

const open: IsolateSandbox[] = [];
async function sandbox(
  host: SandboxHost = {},
  limits: SandboxLimits = {},
  deps: SandboxDeps = {},
): Promise<IsolateSandbox> {
  const sb = (await createSandbox(host, { ...ROOMY_LIMITS, ...limits }, deps)) as IsolateSandbox;
  open.push(sb);
  return sb;
}
afterEach(() => {
  for (const sb of open.splice(0)) sb.dispose();
});

const dir = tempDir('rlm-redteam-');

/** One step V8 does not interrupt: JSON-encoding 60 million control characters (seconds of CPU). */
const STUCK = 'JSON.stringify("\\u0001".repeat(6e7)).length';
/**
 * No grace past the CPU limit: the process is killed once it has used `cpuMs` of CPU time on the block.
 * STUCK needs many times the 300 ms limit even on a fast machine, and the watchdog counts the process's
 * CPU time, not wall time, so the kill comes inside STUCK whatever the machine's speed or load. (With the
 * default grace of 2 s, STUCK ended first on a fast machine and isolated-vm reported a plain timeout.)
 */
const KILL_AT_LIMIT: SandboxDeps = { killGraceMs: 0 };
/** The CPU limit of the tests that reach it (their blocks never end otherwise); the others have room. */
const CPU: SandboxLimits = { cpuMs: 300 };

/** Resolves once the process `pid` spins (runs or waits to run most of the time). */
async function spinning(pid: number): Promise<void> {
  while ((await busyShare(pid, 100)) < 0.5) {
    // Not yet in the loop: measure again.
  }
}

describe('a block V8 cannot interrupt is stopped by killing its process', () => {
  it('reports TIMEOUT with reset, keeps the output, frees the CPU and starts afresh', async () => {
    const sb = await sandbox({}, CPU, KILL_AT_LIMIT);
    await sb.run('const kept = 1');
    const pid = sb.pid!;
    const r = await sb.run(`print("before the stop"); ${STUCK}`);
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toMatch(
      /(did not stop|could not be stopped).*variables and functions from earlier blocks are gone/s,
    );
    expect(r.reset).toBe(true);
    expect(r.stdout).toBe('before the stop\n');
    await gone(pid);
    const next = await sb.run('typeof kept');
    expect(next.stdout).toBe('"undefined"\n');
    expect(sb.pid).not.toBe(pid);
  });

  it('keeps serving other sessions, the host answering, while one isolate is stuck', async () => {
    // Room the test never reaches: the stuck block ends only when the test stops it.
    const stuck = await sandbox();
    const other = await sandbox();
    const pid = stuck.pid!;
    const stop = new AbortController();
    let settled = false;
    const blocked = stuck.run(`for (;;) ${STUCK}`, stop.signal).finally(() => {
      settled = true;
    });
    await spinning(pid);
    const answers: string[] = [];
    for (let i = 0; i < 5; i++) answers.push((await other.run(`${i} * 2`)).stdout);
    expect(answers).toEqual(['0\n', '2\n', '4\n', '6\n', '8\n']);
    // Every answer came while the stuck block still ran: the host's event loop was never held by it.
    expect(settled).toBe(false);
    stop.abort();
    expect(await blocked).toMatchObject({ error: { code: 'ABORTED' }, reset: true });
    await gone(pid);
  });

  it('stops a stuck getter that readVariable reads (FINAL_VAR in a reply)', async () => {
    const sb = await sandbox({}, CPU, KILL_AT_LIMIT);
    await sb.run(`Object.defineProperty(globalThis, 'answer', { get() { return ${STUCK}; } })`);
    const pid = sb.pid!;
    expect(await sb.readVariable('answer')).toBeUndefined();
    await gone(pid);
    const r = await sb.run('1 + 1');
    expect(r).toMatchObject({ stdout: expect.stringContaining('2\n'), reset: true });
  });

  it('stops a looping getter that readVariable reads, by the CPU limit, and keeps the session', async () => {
    const sb = await sandbox({}, CPU);
    await sb.run(
      `const kept = 3; Object.defineProperty(globalThis, 'answer', { get() { while (true) {} } })`,
    );
    const pid = sb.pid!;
    expect(await sb.readVariable('answer')).toBeUndefined();
    expect(sb.pid).toBe(pid);
    expect(await busyShare(pid)).toBeLessThan(0.5);
    expect((await sb.run('kept')).stdout).toBe('3\n');
  });

  it('stops a looping getter in options the prelude reads for a host call', async () => {
    const sb = await sandbox({ context: 'a\nb\n' }, CPU);
    const pid = sb.pid!;
    const r = await sb.run("grep('a', { get limit() { while (true) {} } })");
    expect(r.error?.code).toBe('TIMEOUT');
    expect(await busyShare(pid)).toBeLessThan(0.5);
  });

  it('stops a long synchronous sort with a hostile comparator', async () => {
    const sb = await sandbox({}, CPU);
    const pid = sb.pid!;
    const r = await sb.run(
      'const a = Array.from({ length: 2e5 }, (_, i) => i); a.sort(() => { while (true) {} })',
    );
    expect(r.error?.code).toBe('TIMEOUT');
    // Stopped either way: the CPU limit interrupted it (the process idles) or the process was killed.
    expect(await busyShare(pid)).toBeLessThan(0.5);
    expect((await sb.run('"still here"')).stdout).toBe('"still here"\n');
  });

  it('keeps what a block printed when the wall-clock limit stops it', async () => {
    // The wall clock is the test's: it moves once the block prints and spins, however slow the machine.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const sb = await sandbox({}, { wallMs: 600 });
    const pid = sb.pid!;
    const result = sb.run('print("first"); for (let i = 0; i < 3; i++) print("line " + i); while (true) {}');
    await spinning(pid);
    // The limit, then the moment a stopped block gets to end on its own before its process is killed.
    vi.advanceTimersByTime(600 + 100);
    const r = await result;
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toMatch(/wall-clock limit/);
    expect(r.reset).toBe(true);
    expect(r.stdout).toBe('first\nline 0\nline 1\nline 2\n');
    await gone(pid);
  });

  it('keeps the head and tail of a flood printed before a kill', async () => {
    const stop = new AbortController();
    // The block tells the host when it is done printing; it then spins in STUCK until its process is
    // killed, so the kill comes after the last print whatever the machine's speed.
    const host: SandboxHost = {
      llmQuery: () => {
        stop.abort();
        return new Promise(() => {});
      },
    };
    const sb = await sandbox(host, { maxOutputChars: 200 });
    const r = await sb.run(
      `for (let i = 0; i < 5000; i++) print("row " + i); const t = Date.now(); while (Date.now() - t < 20) {} print("last"); try { llm_query("done") } catch {} for (;;) ${STUCK}`,
      stop.signal,
    );
    expect(r.reset).toBe(true);
    expect(r.stdout.startsWith('row 0\nrow 1\n')).toBe(true);
    expect(r.stdout).toMatch(/characters of output omitted/);
    expect(r.stdout.endsWith('last\n')).toBe(true);
  });
});

describe('every path that compiles a regex from model input is bounded', () => {
  /** A pattern that took V8 seconds to compile in one step: one class of 300 Unicode-set classes. */
  const HUGE_SET = "'[' + '[\\\\p{RGI_Emoji}--\\\\q{x}]'.repeat(300) + ']'";

  it('refuses the regex protocol methods on a plain object posing as a regex', async () => {
    const sb = await sandbox();
    await sb.run('const kept = 1');
    for (const symbol of ['split', 'matchAll']) {
      const r = await sb.run(
        `const fake = { constructor: undefined, flags: 'v', toString() { return ${HUGE_SET}; } };\n/a/[Symbol.${symbol}].call(fake, 'x')`,
      );
      expect(r.error?.message, symbol).toMatch(/works on regular expressions only/);
      expect(r.reset, symbol).toBe(false);
    }
    // The same through String.prototype.split, which calls the protocol method it finds.
    const viaString = await sb.run(
      `'x'.split({ [Symbol.split]: /a/[Symbol.split], constructor: undefined, flags: 'v', toString() { return ${HUGE_SET}; } })`,
    );
    expect(viaString.error?.message).toMatch(/works on regular expressions only/);
    for (const symbol of ['match', 'replace', 'search']) {
      // These never compile: on a plain object they need a callable exec.
      const r = await sb.run(`/a/[Symbol.${symbol}].call({ toString() { return ${HUGE_SET}; } }, 'x')`);
      expect(r.error?.code, symbol).toBe('RUNTIME');
    }
    expect((await sb.run('kept')).stdout).toBe('1\n');
  });

  it('refuses huge Unicode-set classes however the regex is built', async () => {
    const sb = await sandbox();
    for (const code of [
      `new RegExp(${HUGE_SET}, 'v')`,
      `RegExp(${HUGE_SET}, 'v')`,
      `/a/.compile(${HUGE_SET}, 'v')`,
      `'x'.match(new RegExp('[' + '\\\\p{L}'.repeat(40) + ']', 'u'))`,
      `'x'.search({ [Symbol.match]: true, source: ${HUGE_SET}, flags: 'v' }.source)`,
    ]) {
      const r = await sb.run(code);
      expect(r.error?.message, code).toMatch(/over the sandbox limit/);
      expect(r.reset, code).toBe(false);
    }
    const literal = await sb.run(`/[${'\\p{L}'.repeat(40)}]/u.test('a')`);
    expect(literal.error).toMatchObject({ code: 'VALIDATION', rule: 'regex-size' });
  });

  it('stops catastrophic backtracking through each protocol method and frees the CPU', async () => {
    const sb = await sandbox({}, CPU);
    const input = "('a'.repeat(40) + 'b')";
    for (const call of [
      `${input}.match(/^(a+)+$/)`,
      `${input}.replace(/^(a+)+$/, '')`,
      `${input}.search(/^(a+)+$/)`,
      `${input}.split(/^(a+)+$/)`,
      `[...${input}.matchAll(/^(a+)+$/g)]`,
      `/^(a+)+$/.test(${input})`,
    ]) {
      const pid = sb.pid!;
      const r = await sb.run(call);
      expect(r.error?.code, call).toBe('TIMEOUT');
      expect(await busyShare(pid, 200), call).toBeLessThan(0.5);
    }
  });

  it('survives deeply nested groups', async () => {
    const sb = await sandbox();
    const r = await sb.run("new RegExp('('.repeat(4000) + 'a' + ')'.repeat(4000)).test('a')");
    // Whatever V8 makes of it (a result or an error), the session and the host go on.
    expect(['RUNTIME', 'TIMEOUT', undefined]).toContain(r.error?.code);
    expect((await sb.run('2')).stdout).toBe('2\n');
  });

  it('bounds the regex literals of one block together, 16384 characters in all', async () => {
    const sb = await sandbox();
    const literal = `/[${'\\p{L}'.repeat(30)}]+/u`;
    const code = Array.from(
      { length: 12 },
      (_, i) => `const r${i} = ${literal}.source + 'x'.repeat(800);`,
    ).join('\n');
    const big = Array.from({ length: 3 }, (_, i) => `const q${i} = /${'a'.repeat(8000)}/;`).join('\n');
    const refused = await sb.run(big);
    expect(refused.error).toMatchObject({ code: 'VALIDATION', rule: 'regex-size' });
    expect(refused.error?.message).toMatch(/total more than 16384/);
    const ok = await sb.run(code);
    expect(ok.error).toBeNull();
  });

  it('refuses a block too large to parse on the host', async () => {
    const sb = await sandbox();
    const r = await sb.run(`const s = "${'x'.repeat(1_000_001)}"`);
    expect(r.error).toMatchObject({ code: 'VALIDATION', rule: 'block-size' });
  });
});

describe('memory outside the heap', () => {
  function rssMb(pid: number): number {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return Number(m?.[1] ?? 0) / 1024;
  }

  it('bounds what resizable ArrayBuffers reserve by the memory limit; the isolate process RSS stays bounded', async () => {
    const sb = await sandbox({}, { memoryMb: 64 });
    const huge = await sb.run('new ArrayBuffer(0, { maxByteLength: 2 ** 40 }).byteLength');
    expect(huge.error?.message).toMatch(/maxByteLength .* over what this session may still reserve/);
    const grow = await sb.run(
      `const kept = []; let refused = 0;
      for (let i = 0; i < 40; i++) {
        try { const b = new ArrayBuffer(0, { maxByteLength: 64e6 }); b.resize(64e6); new Uint8Array(b).fill(1, 0, 65536); kept.push(b); }
        catch (e) { refused++; }
      }
      print(kept.length, refused)`,
    );
    expect(grow.stdout).toBe('1 39\n');
    // Before: gigabytes resident in a 64 MB isolate.
    expect(rssMb(sb.pid!)).toBeLessThan(400);
    expect((await sb.run("typeof globalThis['Shared' + 'ArrayBuffer']")).stdout).toBe('"undefined"\n');
    const ok = await sb.run(
      'const r = new ArrayBuffer(4, { maxByteLength: 16 }); r.resize(16); r.byteLength',
    );
    expect(ok.stdout).toBe('16\n');
  });
});

/** Pids of the processes `parent` starts while `running` is pending, watched until it settles. */
async function watchChildren(parent: number, running: Promise<unknown>): Promise<Set<number>> {
  const seen = new Set<number>();
  let done = false;
  void running.finally(() => {
    done = true;
  });
  while (!done) {
    for (const pid of childrenOf(parent)) seen.add(pid);
    await new Promise((r) => setTimeout(r, 50));
  }
  return seen;
}

describe('the host process exits promptly', () => {
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));

  it('after rlm exec, even with a block V8 cannot interrupt, leaving no isolate process behind', async () => {
    const file = path.join(dir, 'stuck.js');
    // rlm exec has the default 5 s CPU limit, and one STUCK call may take less on a fast, quiet machine:
    // repeated, the block outlasts the limit wherever it runs, inside a call V8 cannot interrupt.
    writeFileSync(file, `print("started"); for (;;) ${STUCK}\n`);
    const main = path.join(ROOT, 'src/cli/main.ts');
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { run } = await import(${JSON.stringify(main)}); await run();`,
        // With -e, process.argv[1] is the first argument; the CLI reads from argv[2].
        'rlm',
        'exec',
        file,
        '--json',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const isolates = await watchChildren(child.pid!, exited);
    // It ends by itself (before: only once the uninterruptible step ended, minutes later).
    expect(await exited, err).toBe(1);
    const result = JSON.parse(out) as BlockResult;
    expect(result.error?.code).toBe('TIMEOUT');
    expect(result.stdout).toBe('started\n');
    // The process that ran the block, and any spare, went with it.
    expect(isolates.size).toBeGreaterThan(0);
    for (const pid of isolates) await gone(pid);
  });
});

describe('rlm serve with an isolate stuck', () => {
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));

  it('keeps answering other requests, and exits on SIGTERM leaving no isolate process behind', async () => {
    const rules = path.join(dir, 'stuck-rules.json');
    writeFileSync(
      rules,
      JSON.stringify({
        rules: [
          { depth: 0, match: 'warm', reply: 'FINAL(warm)' },
          // Repeated, as for rlm exec: one call may end within the default limits on a quiet machine.
          {
            depth: 0,
            match: 'stuck',
            reply: `\`\`\`repl\nprint("working")\nfor (;;) ${STUCK}\n\`\`\``,
            times: 1,
          },
          { depth: 0, reply: 'FINAL(done)' },
        ],
      }),
    );
    const runner = path.join(dir, 'serve.mjs');
    writeFileSync(
      runner,
      `const { run } = await import(${JSON.stringify(path.join(ROOT, 'src/cli/main.ts'))});\nawait run();\n`,
    );
    const child = spawn(process.execPath, [runner, 'serve'], {
      cwd: dir,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, RLM_MODEL: `scripted:${rules}` },
    });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let raw = '';
    const seen: number[] = [];
    const progress: string[] = [];
    let onMessage: (() => void) | null = null;
    child.stdout.on('data', (d: Buffer) => {
      raw += d.toString('utf8');
      const lines = raw.split('\n');
      raw = lines.pop() ?? '';
      for (const line of lines) {
        const m = JSON.parse(line) as { id?: number; method?: string; params?: { message?: string } };
        if (typeof m.id === 'number' && m.method === undefined) seen.push(m.id);
        if (m.method === 'notifications/progress') progress.push(m.params?.message ?? '');
      }
      onMessage?.();
    });
    const until = (done: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (done()) resolve();
        };
        onMessage = check;
        check();
      });
    const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    await until(() => seen.includes(1));
    send({ method: 'notifications/initialized' });
    const answer = (id: number, question: string) =>
      send({
        id,
        method: 'tools/call',
        params: { name: 'rlm_answer', arguments: { question, context: 'c' }, _meta: { progressToken: id } },
      });
    // A first answer loads the answer path and leaves an isolate process idle for the next one.
    answer(2, 'warm');
    await until(() => seen.includes(2));
    answer(3, 'stuck');
    // The model replied, and an isolate process spins: the block is stuck in STUCK (seconds of CPU
    // before the CPU limit and the kill grace end it).
    await until(() => progress.some((p) => p.startsWith('iteration 1 of') && p.endsWith('model replied')));
    const isolates = new Set(childrenOf(child.pid!));
    let stuck = false;
    while (!stuck) {
      for (const pid of childrenOf(child.pid!)) {
        isolates.add(pid);
        if ((await busyShare(pid, 200)) >= 0.5) stuck = true;
      }
    }
    // The server still answers, before that answer ends.
    send({ id: 4, method: 'tools/list' });
    await until(() => seen.includes(4));
    expect(seen).not.toContain(3);
    child.kill('SIGTERM');
    // It exits by itself (before: never, while the isolate's thread was busy), and its isolates go too.
    expect(await exited).toBe(0);
    for (const pid of isolates) await gone(pid);
  });
});

describe('ordinary snippets get a working API or the alternative, never a bare "X is not defined"', () => {
  it('provides structuredClone, TextEncoder/TextDecoder, btoa/atob, queueMicrotask and performance.now', async () => {
    const sb = await sandbox();
    const cases: [string, string][] = [
      [
        'const o = { a: [1, { d: new Date(0) }], m: new Map([[1, new Set([2])]]), r: /x/gi, t: new Uint8Array([1, 2]) }; o.self = o;\nconst c = structuredClone(o);\n[c.self === c, c !== o, c.a[1].d.getTime(), c.m.get(1).has(2), c.r.flags, c.t[1]]',
        '[ true, true, 0, true, "gi", 2 ]\n',
      ],
      ["new TextDecoder().decode(new TextEncoder().encode('héllo € 😀'))", '"héllo € 😀"\n'],
      ["Array.from(new TextEncoder().encode('é€😀')).length", '9\n'],
      ["btoa('hello world') + ' ' + atob('aGVsbG8gd29ybGQ=')", '"aGVsbG8gd29ybGQ= hello world"\n'],
      ['let x = 0; queueMicrotask(() => { x = 1 }); await null; x', '1\n'],
      ['const t0 = performance.now(); typeof t0 === "number" && performance.now() >= t0', 'true\n'],
    ];
    for (const [code, expected] of cases) {
      const r = await sb.run(code);
      expect(r.error, code).toBeNull();
      expect(r.stdout, code).toBe(expected);
    }
    expect((await sb.run('structuredClone(() => 1)')).error?.message).toMatch(
      /DataCloneError: .*function could not be cloned/,
    );
  });

  it('names what to use instead of a missing global', async () => {
    const sb = await sandbox();
    for (const [code, advice] of [
      [
        "new URL('https://example.com/a?b=1').hostname",
        /URL is not available in the sandbox: take the string apart with a regex/,
      ],
      ['setTimeout(() => print(1), 10)', /there are no timers/],
      ["Buffer.from('x').toString('base64')", /TextEncoder\/TextDecoder .* btoa\/atob/],
      ["await fetch('https://example.com')", /there is no network/],
    ] as const) {
      const r = await sb.run(code);
      expect(r.error?.message, code).toMatch(/ReferenceError: \w+ is not defined \(/);
      expect(r.error?.message, code).toMatch(advice);
    }
  });

  it('names the working alternative when validation refuses a snippet', async () => {
    const sb = await sandbox();
    const cases: [string, RegExp][] = [
      ['Object.prototype.toString.call([]) === "[object Array]"', /Array\.isArray\(x\)/],
      ['Object.getPrototypeOf(new Map()) === Map.prototype', /x instanceof Map/],
      ['Reflect.ownKeys({ a: 1 })', /Object\.getOwnPropertyNames\(o\)/],
    ];
    for (const [code, advice] of cases) {
      const r = await sb.run(code);
      expect(r.error?.code, code).toBe('VALIDATION');
      expect(r.error?.message, code).toMatch(advice);
    }
    const ret = await sb.run('const n = 2;\nreturn n * 2');
    expect(ret.error).toMatchObject({ code: 'SYNTAX', line: 2 });
    expect(ret.error?.message).toMatch(/end the block with an expression .* FINAL\(answer\)/);
  });
});
