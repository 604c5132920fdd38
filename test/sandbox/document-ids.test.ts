/**
 * Document ids in the sandbox: peek(DOC_ID) is the whole document and peek(DOC_ID, start, end) a slice of
 * it (in the document's own offsets), get_chunk(DOC_ID) the document as one chunk-shaped record and
 * neighbors(DOC_ID) the links that leave it; over a store and over a multi-document context from paths.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import { loadInput } from '../../src/runtime/input.ts';
import type { SandboxHost } from '../../src/sandbox/host.ts';
import { createSandbox } from '../../src/sandbox/session.ts';
import type { Sandbox } from '../../src/sandbox/types.ts';

const open: Sandbox[] = [];
async function sandbox(host: SandboxHost): Promise<Sandbox> {
  const sb = await createSandbox(host, { cpuMs: 5000, wallMs: 30_000 });
  open.push(sb);
  return sb;
}
afterEach(() => {
  for (const sb of open.splice(0)) sb.dispose();
});

function temp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rlm-docids-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function value(sb: Sandbox, code: string): Promise<unknown> {
  const r = await sb.run(`JSON.stringify(${code})`);
  expect(r.error, r.stdout).toBeNull();
  return JSON.parse(JSON.parse(r.stdout) as string);
}

/** Markdown of about `kb` KiB in many sections (many chunks). */
function bigMarkdown(kb: number): string {
  const out: string[] = [];
  for (let i = 0; out.join('').length < kb * 1024; i++)
    out.push(`## Section ${i}\n\n${'Lanterns drift over the harbour at dusk. '.repeat(20)}\n\n`);
  return out.join('').slice(0, kb * 1024);
}

describe('document ids over a store', () => {
  it('peek reads a 500 KB document whole in one call, or a slice in its own offsets', async () => {
    const store = new MemoryChunkStore();
    const text = bigMarkdown(500);
    await store.ingestText('big', text, { path: '/notes/big.md' });
    expect(store.documents()[0]!.chunks).toBeGreaterThan(50);
    const sb = await sandbox({ store });
    const r = await sb.run("const t = peek('big'); print(t.length)");
    expect(r.stdout).toBe(`${text.length}\n`);
    expect(r.stats.hostCalls).toBe(1);
    expect(await value(sb, 't === undefined ? null : t.slice(0, 40)')).toBe(text.slice(0, 40));
    expect(await value(sb, "peek('big') === t")).toBe(true);
    // Whole and exact: the chunks' overlap dropped, nothing between them lost.
    expect(await value(sb, "peek('big', 123456, 123556)")).toBe(text.slice(123456, 123556));
    const chunk = (await store.getChunk('big:7'))!;
    expect(await value(sb, `peek('big', ${chunk.start}, ${chunk.end})`)).toBe(chunk.text);
  });

  it('get_chunk and neighbors take a memory id (and a document id) as the whole document', async () => {
    const store = new MemoryChunkStore();
    const a = await store.remember({ text: 'The user wants answers in French.', tags: ['lang'] });
    const b = await store.remember({ text: 'Replies should be short.' });
    await store.link(a.id, b.id, 'supports');
    const sb = await sandbox({ store });
    expect(await value(sb, `peek('${a.id}')`)).toBe('The user wants answers in French.');
    expect(await value(sb, `get_chunk('${a.id}')`)).toMatchObject({
      id: a.id,
      document: a.id,
      text: 'The user wants answers in French.',
      start: 0,
      end: 33,
      tags: ['lang'],
      chunks: 1,
    });
    expect(await value(sb, `neighbors('${a.id}')`)).toEqual([
      { id: `${b.id}:0`, type: 'supports', strength: 1, from: `${a.id}:0`, to: `${b.id}:0` },
    ]);
    expect(await value(sb, `neighbors('${b.id}', 'supports').map(n => n.id)`)).toEqual([`${a.id}:0`]);
    const missing = await sb.run("get_chunk('nope')");
    expect(missing.stdout).toBe('null\n');
    const bad = await sb.run("neighbors('nope')");
    expect(bad.error?.message).toMatch(
      /no chunk or document with id nope \(a chunk id DOCUMENT:N .*list_documents\)/,
    );
  });

  it('shows a file stored in parts as one document: listed once, searched and named by its first id', async () => {
    const dir = temp();
    const file = path.join(dir, 'big.log');
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}: lanterns over the harbour\n`);
    lines[2500] = 'line 2500: the zebra crossed at dawn\n';
    const text = lines.join('');
    writeFileSync(file, text);
    writeFileSync(path.join(dir, 'small.md'), 'A small note about zebras.');
    const store = new MemoryChunkStore();
    await store.ingestPaths([dir], { partBytes: 30_000, segmentChars: 60_000 });
    const docs = await store.documents();
    const ids = docs.map((d) => d.id);
    const base = docs.find((d) => d.path === file && !/\.p\d+$/.test(d.id))!.id;
    expect(ids.filter((id) => id.startsWith(`${base}.p`)).length).toBeGreaterThan(2);
    const chunks = docs
      .filter((d) => d.id === base || d.id.startsWith(`${base}.p`))
      .reduce((n, d) => n + d.chunks, 0);
    const sb = await sandbox({ store });
    const listed = (await value(sb, 'list_documents()')) as Record<string, unknown>[];
    expect(listed.map((d) => d.id).sort()).toEqual(
      [base, docs.find((d) => d.path?.endsWith('small.md'))?.id].sort(),
    );
    const big = listed.find((d) => d.id === base)!;
    const shown = `${path.basename(dir)}/big.log`;
    expect(big).toMatchObject({ path: shown, chars: text.length, chunks });
    // A part's hash is not the file's, so a file in parts shows none.
    expect(big.hash).toBeUndefined();
    // A hit in a later part names the file, as grep's matches do; its chunk id stays the part's.
    const hit = (await value(
      sb,
      `search_chunks('zebra crossed dawn', { k: 1, document: ['${shown}'] })[0]`,
    )) as {
      id: string;
      document: string;
      path: string;
    };
    expect(hit).toMatchObject({ document: base, path: shown });
    expect(hit.id.startsWith(`${base}.p`)).toBe(true);
    // A part's own id, which chunk ids carry, still names that part alone.
    const part = hit.id.slice(0, hit.id.lastIndexOf(':'));
    expect(await value(sb, `search_chunks('zebra crossed dawn', { k: 1, document: '${part}' })[0].id`)).toBe(
      hit.id,
    );
    expect(
      await value(
        sb,
        `grep('zebra crossed', { document: '${base}' }).map(m => [m.document, m.documentOffset])`,
      ),
    ).toEqual([[base, text.indexOf('zebra crossed')]]);
    expect(await value(sb, `peek('${base}').length`)).toBe(text.length);
    // A name given many times is one; a filter of more names than any store needs is refused (the
    // host's work for one call is bounded).
    expect(
      await value(sb, `grep('zebra crossed', { document: new Array(50000).fill('${base}') }).length`),
    ).toBe(1);
    const tooMany = await sb.run(`search_chunks('zebra', { document: new Array(100001).fill('${base}') })`);
    expect(tooMany.error?.message).toContain('document names at most 100,000 documents (got 100,001)');
    // The prompt counts documents as list_documents() does.
    const loaded = await loadInput({ question: 'q', store }, 1_000_000);
    expect(loaded.shape).toMatchObject({ documents: 2, chunks: chunks + 1 });
    expect(loaded.shape.kind === 'store' && loaded.shape.documentList?.length).toBe(2);
  });
});

describe('document ids over a multi-document context', () => {
  it('peek(DOC_ID) and peek(DOC_ID, start, end) use the ids list_documents gives', async () => {
    const dir = temp();
    mkdirSync(path.join(dir, 'notes'));
    writeFileSync(path.join(dir, 'notes', 'a.md'), '# A\n\nAlpha text about rivers.\n');
    writeFileSync(path.join(dir, 'notes', 'b.txt'), 'Beta text about bridges.\n');
    const loaded = await loadInput({ question: 'q', paths: [path.join(dir, 'notes')] }, 1 << 20);
    onTestFinished(() => loaded.close());
    const sb = await sandbox({
      ...(loaded.context === undefined ? {} : { context: loaded.context }),
      ...(loaded.store === undefined ? {} : { store: loaded.store }),
      ...(loaded.documents === undefined ? {} : { documents: loaded.documents }),
    });
    const ids = (await value(sb, 'list_documents().map(d => d.id)')) as string[];
    expect(ids).toHaveLength(2);
    expect(await value(sb, `peek('${ids[1]}')`)).toBe('Beta text about bridges.\n');
    expect(await value(sb, `peek('${ids[1]}', 5, 9)`)).toBe('text');
    expect(await value(sb, `get_chunk('${ids[0]}').text`)).toBe('# A\n\nAlpha text about rivers.\n');
  });
});
