/**
 * What model code sees of documents and sub-calls in the real sandbox: list_documents(), grep hits that
 * name their document, one "more matches" notice per block with a `truncated` flag, and the sub-call
 * item shapes that reach the host.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { displayPaths } from '../../src/sandbox/documents.ts';
import type { SandboxHost, SubCallItem, SubCallOptions } from '../../src/sandbox/host.ts';
import { createSandbox } from '../../src/sandbox/session.ts';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { fakeStore } from './fake-store.ts';
import { ROOMY_LIMITS } from './roomy-limits.ts';

const open: Sandbox[] = [];
async function sandbox(host: SandboxHost): Promise<Sandbox> {
  const sb = await createSandbox(host, ROOMY_LIMITS);
  open.push(sb);
  return sb;
}
afterEach(() => {
  for (const sb of open.splice(0)) sb.dispose();
});

describe('documents', () => {
  it('list_documents() returns the host list, or doc:N entries for a plain document array', async () => {
    const documents = [
      { id: 'a', path: 'notes/a.md', chars: 40, chunks: 2, modified: '2025-01-01T00:00:00.000Z' },
      { id: 'b', path: 'notes/b.md', title: 'B', chars: 42, chunks: 1, modified: null },
    ];
    const sb = await sandbox({ store: fakeStore(), documents });
    const r = await sb.run('FINAL(list_documents())');
    expect(JSON.parse(r.final ?? 'null')).toEqual(documents);
    const plain = await sandbox({ context: ['one', 'three'] });
    const p = await plain.run('FINAL(list_documents())');
    expect(JSON.parse(p.final ?? 'null')).toEqual([
      { id: 'doc:0', path: 'doc:0', chars: 3, chunks: 1, modified: null, hash: '7692c3ad3540bb80' },
      { id: 'doc:1', path: 'doc:1', chars: 5, chunks: 1, modified: null, hash: '8b5b9db0c13db242' },
    ]);
  });

  it('grep and search hits carry the path of their document', async () => {
    const documents = [
      { id: 'a', path: 'notes/a.md', chars: 40, chunks: 2, modified: null },
      { id: 'b', path: 'notes/b.md', chars: 42, chunks: 1, modified: null },
    ];
    const sb = await sandbox({ store: fakeStore(), documents });
    const r = await sb.run(
      'FINAL({ g: grep("harbour").map((m) => m.id + "@" + m.path), s: search_chunks("harbour").map((h) => h.path) })',
    );
    expect(JSON.parse(r.final ?? 'null')).toEqual({
      g: ['a:1@notes/a.md', 'b:0@notes/b.md'],
      s: ['notes/a.md', 'notes/b.md'],
    });
  });

  it('shows paths below the parent of the common folder, never the host directories above', () => {
    expect(displayPaths(['/home/u/x/node/fs.d.ts', '/home/u/x/node/http/a.d.ts'])).toEqual([
      'node/fs.d.ts',
      'node/http/a.d.ts',
    ]);
    expect(displayPaths(['/srv/data/one.md'])).toEqual(['data/one.md']);
  });
});

describe('grep truncation', () => {
  it('flags a cut result and prints one notice per block, none when a limit was passed', async () => {
    const text = Array.from({ length: 500 }, (_, i) => `row ${i}`).join('\n');
    const sb = await sandbox({ context: text });
    const r = await sb.run(
      'const a = grep("row"); const b = grep("row"); const c = grep("row", {limit: 5});\n' +
        'print(a.length, a.truncated, c.length, c.truncated, grep("row 499").truncated)',
    );
    expect(r.stdout.match(/\[grep:/g)).toHaveLength(1);
    expect(r.stdout).toContain('100 true 5 true false');
    const again = await sb.run('grep("row", {limit: 10}).length');
    expect(again.stdout).not.toContain('[grep:');
  });
});

describe('sub-call items', () => {
  it('sends strings and {prompt, context, model} items, with the kind of call', async () => {
    const seen: { items: SubCallItem[]; kind: string | undefined }[] = [];
    const single: { prompt: string; context: string | undefined; opts: SubCallOptions | undefined }[] = [];
    const sb = await sandbox({
      llmQuery: async (prompt, context, _signal, opts) => {
        single.push({ prompt, context, opts });
        return `${opts?.kind}:${prompt}`;
      },
      llmQueryBatched: async (items, _signal, opts) => {
        seen.push({ items, kind: opts?.kind });
        return items.map((i) => `${opts?.kind}:${i.prompt}`);
      },
    });
    const r = await sb.run(
      'FINAL([llm_query("a", {n: 1}, {model: "m:x"}), rlm_query("b"), ' +
        'llm_query_batched(["c", {prompt: "d", context: "D", model: "m:y"}]), rlm_query_batched([{prompt: "e"}])])',
    );
    expect(JSON.parse(r.final ?? 'null')).toEqual(['llm:a', 'rlm:b', ['llm:c', 'llm:d'], ['rlm:e']]);
    expect(single).toEqual([
      { prompt: 'a', context: '{"n":1}', opts: { kind: 'llm', model: 'm:x' } },
      { prompt: 'b', context: undefined, opts: { kind: 'rlm' } },
    ]);
    expect(seen[0]?.items).toEqual([{ prompt: 'c' }, { prompt: 'd', context: 'D', model: 'm:y' }]);
    const bad = await sb.run('llm_query_batched([{text: "no prompt"}])');
    expect(bad.error?.message).toContain('llm_query_batched: item 0.prompt must be a string');
  });
});
