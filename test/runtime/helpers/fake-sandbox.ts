/**
 * A small Sandbox double on node:vm for loop tests: persistent globals, print capture, FINAL / FINAL_VAR,
 * llm_query through the host, and `hang()` for a block that never ends by itself (the factory's
 * `hanging` resolves once one runs, so a test acts on a running block without guessing when it starts).
 * Not a security boundary; the real isolated-vm session is tested by its own suite.
 */
import vm from 'node:vm';
import type { SandboxHost, SubCallItem } from '../../../src/sandbox/host.ts';

const toItem = (x: string | SubCallItem): SubCallItem => (typeof x === 'string' ? { prompt: x } : x);

import type { BlockResult, Sandbox, SandboxLimits } from '../../../src/sandbox/types.ts';

export class FakeSandbox implements Sandbox {
  readonly host: SandboxHost;
  readonly limits: SandboxLimits | undefined;
  readonly ctx: vm.Context;
  disposed = false;
  runs = 0;
  #out: string[] = [];
  #final: string | null = null;
  #signal: AbortSignal | undefined;

  constructor(host: SandboxHost, limits?: SandboxLimits, onHang: () => void = () => {}) {
    this.host = host;
    this.limits = limits;
    const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
    const never = new AbortController().signal;
    this.ctx = vm.createContext({
      context: host.context,
      print: (...a: unknown[]) => this.#out.push(a.map(show).join(' ')),
      console: { log: (...a: unknown[]) => this.#out.push(a.map(show).join(' ')) },
      FINAL: (v: unknown) => {
        this.#final = show(v);
      },
      FINAL_VAR: (name: string) => {
        const v = vm.runInContext(
          `typeof ${name} === 'undefined' ? undefined : ${name}`,
          this.ctx,
        ) as unknown;
        if (v === undefined) throw new Error(`variable ${name} is not defined`);
        this.#final = show(v);
      },
      llm_query: (prompt: string, context?: string, opts?: { model?: string }) =>
        host.llmQuery
          ? host.llmQuery(prompt, context, this.#signal ?? never, opts)
          : Promise.resolve('Error: no model'),
      llm_query_batched: (items: (string | SubCallItem)[]) =>
        host.llmQueryBatched
          ? host.llmQueryBatched(items.map(toItem), this.#signal ?? never)
          : Promise.resolve([]),
      rlm_query: (prompt: string, context?: string, opts?: { model?: string }) =>
        host.llmQuery
          ? host.llmQuery(prompt, context, this.#signal ?? never, { kind: 'rlm', ...opts })
          : Promise.resolve('Error: no model'),
      rlm_query_batched: (items: (string | SubCallItem)[]) =>
        host.llmQueryBatched
          ? host.llmQueryBatched(items.map(toItem), this.#signal ?? never, { kind: 'rlm' })
          : Promise.resolve([]),
      hang: () => {
        onHang();
        return new Promise(() => {});
      },
    });
  }

  async run(code: string, signal?: AbortSignal): Promise<BlockResult> {
    this.runs++;
    this.#out = [];
    this.#final = null;
    this.#signal = signal;
    const started = performance.now();
    const stats = () => ({ cpuMs: 0, wallMs: performance.now() - started, hostCalls: 0 });
    try {
      // Code with await runs in an async wrapper (its declarations do not persist: tests assign globals).
      const src = /\bawait\b/.test(code) ? `(async () => {\n${code}\n})()` : code;
      const value = vm.runInContext(src, this.ctx, { filename: 'block.js' }) as unknown;
      if (value instanceof Promise || (value && typeof (value as Promise<unknown>).then === 'function')) {
        await value;
      }
      return {
        ok: true,
        stdout: this.#out.join('\n'),
        final: this.#final,
        error: null,
        stats: stats(),
        reset: false,
      };
    } catch (err) {
      const e = err as Error;
      const code = e?.name === 'SyntaxError' ? 'SYNTAX' : 'RUNTIME';
      return {
        ok: false,
        stdout: this.#out.join('\n'),
        final: this.#final,
        error: { code, message: e?.message ?? String(err) },
        stats: stats(),
        reset: false,
      };
    }
  }

  async readVariable(name: string): Promise<string | undefined> {
    if (!/^[A-Za-z_$][\w$]*$/.test(name)) return undefined;
    const v = vm.runInContext(`typeof ${name} === 'undefined' ? undefined : ${name}`, this.ctx) as unknown;
    return v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);
  }

  dispose(): void {
    this.disposed = true;
  }
}

/** A factory that records every sandbox it made; `hanging` resolves once a block of one calls `hang()`. */
export function fakeSandboxes(): {
  factory: (host: SandboxHost, limits?: SandboxLimits) => Promise<FakeSandbox>;
  created: FakeSandbox[];
  hanging: Promise<void>;
} {
  const created: FakeSandbox[] = [];
  let hung!: () => void;
  const hanging = new Promise<void>((resolve) => {
    hung = resolve;
  });
  return {
    created,
    hanging,
    factory: async (host, limits) => {
      const sb = new FakeSandbox(host, limits, hung);
      created.push(sb);
      return sb;
    },
  };
}
