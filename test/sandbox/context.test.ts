import { describe, expect, it } from 'vitest';
import { ContextCache, contextDocuments } from '../../src/sandbox/context-registry.ts';
import { createSandbox } from '../../src/sandbox/session.ts';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { ROOMY_LIMITS } from './roomy-limits.ts';

describe('ContextCache', () => {
  it('copies a document once and frees it with its last holder', () => {
    const cache = new ContextCache();
    const doc = 'd'.repeat(10_000);
    const a = cache.acquire([doc]);
    const b = cache.acquire([doc, 'other']);
    expect(cache.size).toBe(2);
    expect(a.chars).toBe(10_000);
    expect(b.ids).toHaveLength(2);
    a.release();
    a.release();
    expect(cache.size).toBe(2);
    b.release();
    expect(cache.size).toBe(0);
  });

  it('reads a context as documents', () => {
    expect(contextDocuments(undefined)).toEqual([]);
    expect(contextDocuments('x')).toEqual(['x']);
    expect(contextDocuments(['a', 'b'])).toEqual(['a', 'b']);
  });
});

describe('sessions sharing a context', () => {
  it('shares one copy between a root session and nested sub-sessions', async () => {
    const cache = new ContextCache();
    const context = `${'filler line\n'.repeat(1000)}the secret number is 42\n`;
    const subs: Sandbox[] = [];
    const root = await createSandbox(
      {
        context,
        // A sub-call runs its own sandbox on the same context, like a sub-RLM.
        llmQuery: async (prompt) => {
          const sub = await createSandbox({ context }, ROOMY_LIMITS, { contexts: cache });
          subs.push(sub);
          expect(cache.size).toBe(1);
          const r = await sub.run(`const hit = grep(${JSON.stringify(prompt)})[0]; hit ? hit.text : 'none'`);
          sub.dispose();
          return r.stdout.trim();
        },
      },
      ROOMY_LIMITS,
      { contexts: cache },
    );
    const r = await root.run("llm_query_batched(['secret number', 'missing thing'])");
    expect(r.stdout).toBe('[ "\\"the secret number is 42\\"", "\\"none\\"" ]\n');
    expect(subs).toHaveLength(2);
    expect(cache.size).toBe(1);
    root.dispose();
    expect(cache.size).toBe(0);
  });
});

describe('context documents sent to the isolate process', () => {
  it("arrive exactly: pairs, accents and lone surrogates, across the pipe's write pieces", async () => {
    const hash = (t: string) => {
      let h = 0;
      for (let i = 0; i < t.length; i++) h = (Math.imul(h, 31) + t.charCodeAt(i)) | 0;
      return h;
    };
    const documents = ['é😀x'.repeat(700_001), 'lone \uD800 and \uDC00', ''];
    const sandbox = await createSandbox({ context: documents }, ROOMY_LIMITS);
    try {
      const r = await sandbox.run(
        'const hash = (t) => { let h = 0; for (let i = 0; i < t.length; i++) h = (Math.imul(h, 31) + t.charCodeAt(i)) | 0; return h; };\nprint(JSON.stringify(context.map((d) => [d.length, hash(d)])))',
      );
      expect(r.error).toBeNull();
      expect(JSON.parse(r.stdout)).toEqual(documents.map((d) => [d.length, hash(d)]));
    } finally {
      sandbox.dispose();
    }
  });
});

describe('a context longer than 64 MiB', () => {
  it('is one string that match and split take whole; a longer string built from it is still refused', async () => {
    const line = 'ERR-0042 at the harbour\n';
    const context = line.repeat(Math.ceil((65 * 1024 * 1024) / line.length));
    const sandbox = await createSandbox({ context }, { cpuMs: 20_000, wallMs: 60_000 });
    try {
      const r = await sandbox.run(
        'print(typeof context, context.match(/ERR-\\d{4}/g).length, context.split("\\n").length - 1)',
      );
      const n = context.length / line.length;
      expect(r.error).toBeNull();
      expect(r.stdout).toBe(`string ${n} ${n}\n`);
      const over = await sandbox.run('(context + "x").split("\\n").length');
      expect(over.error?.message).toMatch(/over the sandbox limit/);
    } finally {
      sandbox.dispose();
    }
  }, 120_000);
});
