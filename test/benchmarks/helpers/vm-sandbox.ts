/**
 * A minimal Sandbox on node:vm for harness tests while (or where) the isolated-vm session is not
 * available: persistent globals, print, FINAL, and llm_query through the host. Not a security boundary.
 */
import { existsSync } from 'node:fs';
import vm from 'node:vm';
import type { SandboxFactory } from '../../../src/runtime/options.ts';
import type { SandboxHost, SubCallItem } from '../../../src/sandbox/host.ts';

const toItem = (x: string | SubCallItem): SubCallItem => (typeof x === 'string' ? { prompt: x } : x);

import type { BlockResult, Sandbox } from '../../../src/sandbox/types.ts';

class VmSandbox implements Sandbox {
  readonly #ctx: vm.Context;
  #out: string[] = [];
  #final: string | null = null;
  #signal: AbortSignal = new AbortController().signal;

  constructor(host: SandboxHost) {
    const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
    const print = (...a: unknown[]) => {
      this.#out.push(a.map(show).join(' '));
    };
    this.#ctx = vm.createContext({
      context: host.context ?? '',
      print,
      console: { log: print },
      FINAL: (v: unknown) => {
        this.#final = show(v);
      },
      llm_query: (prompt: string, context?: string, opts?: { model?: string }) =>
        host.llmQuery
          ? host.llmQuery(prompt, context, this.#signal, opts)
          : Promise.resolve('Error: no model'),
      llm_query_batched: (items: (string | SubCallItem)[]) =>
        host.llmQueryBatched ? host.llmQueryBatched(items.map(toItem), this.#signal) : Promise.resolve([]),
      rlm_query: (prompt: string, context?: string, opts?: { model?: string }) =>
        host.llmQuery
          ? host.llmQuery(prompt, context, this.#signal, { kind: 'rlm', ...opts })
          : Promise.resolve('Error: no model'),
      rlm_query_batched: (items: (string | SubCallItem)[]) =>
        host.llmQueryBatched
          ? host.llmQueryBatched(items.map(toItem), this.#signal, { kind: 'rlm' })
          : Promise.resolve([]),
    });
  }

  async run(code: string, signal?: AbortSignal): Promise<BlockResult> {
    this.#out = [];
    this.#final = null;
    if (signal) this.#signal = signal;
    const stats = { cpuMs: 0, wallMs: 0, hostCalls: 0 };
    try {
      await vm.runInContext(`(async () => {\n${code}\n})()`, this.#ctx);
      return { ok: true, stdout: this.#out.join('\n'), final: this.#final, error: null, stats, reset: false };
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      return {
        ok: false,
        stdout: this.#out.join('\n'),
        final: this.#final,
        error: { code: 'RUNTIME', message },
        stats,
        reset: false,
      };
    }
  }

  async readVariable(): Promise<string | undefined> {
    return undefined;
  }

  dispose(): void {}
}

/** Sandboxes on node:vm. */
const vmSandboxFactory: SandboxFactory = async (host) => new VmSandbox(host);

const SESSION = new URL('../../../src/sandbox/session.ts', import.meta.url);

/**
 * The real isolated-vm sandbox once src/sandbox/session.ts exists (undefined = the runtime's default),
 * the node:vm stand-in before that, so the suite runs the real stack as soon as it can.
 */
export function testSandboxFactory(): SandboxFactory | undefined {
  return existsSync(SESSION) ? undefined : vmSandboxFactory;
}
