import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import { type LoadedInput, loadInput } from '../../src/runtime/input.ts';
import { createSandbox } from '../../src/sandbox/session.ts';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { tempDir } from '../helpers/temp.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A folder of two notes, read as a run reads `--context`. */
async function notes(): Promise<{ dir: string; loaded: LoadedInput }> {
  const dir = path.join(tempDir(), 'notes');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'a.md'), '# Harbour\n\nThe harbour master keeps the logbook.\n');
  writeFileSync(path.join(dir, 'b.txt'), 'Nothing about logbooks here, only ships and storms.\n');
  const loaded = await loadInput({ question: 'q', paths: [dir] }, 1_000_000);
  cleanups.push(() => loaded.close());
  return { dir, loaded };
}

async function session(loaded: LoadedInput): Promise<Sandbox> {
  const sandbox = await createSandbox({
    ...(loaded.context === undefined ? {} : { context: loaded.context }),
    ...(loaded.store === undefined ? {} : { store: loaded.store }),
    ...(loaded.contextFiles === undefined ? {} : { contextFiles: loaded.contextFiles }),
  });
  cleanups.push(() => sandbox.dispose());
  return sandbox;
}

describe('the index of --context files, built on first use', () => {
  it('is not built by a run that reads, slices and counts the context without the chunk functions', async () => {
    const { loaded } = await notes();
    const sandbox = await session(loaded);
    const r = await sandbox.run(
      "const all = context.join('\\n');\nprint(context.length, all.match(/logbook/g).length, peek(2, 9), peek('doc:1', 0, 7))",
    );
    expect(r.error).toBeNull();
    expect(r.stdout).toBe('2 2 Harbour Nothing\n');
    expect(loaded.index?.built).toBe(false);
  });

  it('is not built by grep, its count and document filter, or peek of a document id: they read the text', async () => {
    const { dir, loaded } = await notes();
    const eager = new MemoryChunkStore();
    cleanups.push(() => eager.close());
    await eager.ingestPaths([dir]);
    const sandbox = await session(loaded);
    const r = await sandbox.run(
      [
        "const hits = grep('logbook');",
        'const a = hits[0].document;',
        "print(JSON.stringify({ hits: hits.map((m) => [m.document, m.path, m.documentOffset, m.text]), count: grep('logbook', { count: true }), only: grep('logbook', { document: 'notes/b.txt' }).map((m) => m.path), peek: peek(a, 2, 9) }))",
      ].join('\n'),
    );
    expect(r.error).toBeNull();
    expect(loaded.index?.built).toBe(false);
    // The same documents and offsets the index gives once built.
    const [a, b] = eager.documents().map((d) => d.id);
    const lines = (await eager.grep('logbook')).matches.map((m) => [m.documentOffset, m.text]);
    expect(JSON.parse(r.stdout)).toEqual({
      hits: [
        [a, 'notes/a.md', ...lines[0]!],
        [b, 'notes/b.txt', ...lines[1]!],
      ],
      count: {
        matches: 2,
        lines: 2,
        documents: [
          { id: a, path: 'notes/a.md', matches: 1, lines: 1 },
          { id: b, path: 'notes/b.txt', matches: 1, lines: 1 },
        ],
      },
      only: ['notes/b.txt'],
      peek: 'Harbour',
    });
  });

  it('is built by the first search_chunks, which answers as an ingested store does', async () => {
    const { dir, loaded } = await notes();
    const eager = new MemoryChunkStore();
    cleanups.push(() => eager.close());
    await eager.ingestPaths([dir]);
    const sandbox = await session(loaded);
    const r = await sandbox.run(
      [
        "const hits = search_chunks('logbook', { k: 5 });",
        'print(JSON.stringify({ hits: hits.map((h) => h.id), chunk: get_chunk(hits[0].id).text, docs: list_documents().map((d) => [d.id, d.chunks]) }))',
      ].join('\n'),
    );
    expect(r.error).toBeNull();
    expect(loaded.index?.built).toBe(true);
    const seen = JSON.parse(r.stdout) as { hits: string[]; chunk: string };
    const expected = await eager.search('logbook', { k: 5 });
    expect(JSON.parse(r.stdout)).toEqual({
      hits: expected.map((h) => h.id),
      chunk: eager.getChunk(expected[0]!.id)?.text,
      docs: eager.documents().map((d) => [d.id, d.chunks]),
    });
    expect(seen.hits.length).toBeGreaterThan(0);
  });

  it('is built once however many calls wait for it', async () => {
    const { loaded } = await notes();
    const [a, b] = await Promise.all([loaded.index!.load(), loaded.index!.load()]);
    expect(a).toBe(b);
    expect(a).toBe(await loaded.index!.load());
  });

  it('indexes the text the run read when a file changed on disk since', async () => {
    const { dir, loaded } = await notes();
    writeFileSync(
      path.join(dir, 'b.txt'),
      'Rewritten after the run read it: a longer text about lighthouses.\n',
    );
    const store = await loaded.index!.load();
    const texts = await Promise.all(
      (await store.documents()).map(async (d) =>
        (await store.documentChunks(d.id)).map((c) => c.text).join(''),
      ),
    );
    expect(texts).toEqual(loaded.context);
    expect(await store.search('lighthouses')).toEqual([]);
  });

  it('is not built after the run has closed it', async () => {
    const { loaded } = await notes();
    await loaded.close();
    const err = await loaded.index!.load().catch((e: unknown) => e);
    expect(isRlmError(err, 'ABORTED')).toBe(true);
    expect(loaded.index?.built).toBe(false);
  });
});

describe('reading --context files', () => {
  it('gives a file over 4 MiB as one string, in the host and in the sandbox', async () => {
    const file = path.join(tempDir(), 'big.log');
    const line = 'ERR-1234 something happened at the harbour\n';
    const text = line.repeat(Math.ceil((5 * 1024 * 1024) / line.length));
    writeFileSync(file, text);
    const loaded = await loadInput({ question: 'q', paths: [file] }, 64 * 1024 * 1024);
    cleanups.push(() => loaded.close());
    expect(loaded.context).toBe(text);
    expect(loaded.shape).toMatchObject({ kind: 'string', chars: text.length, inIsolate: true });
    const sandbox = await session(loaded);
    const r = await sandbox.run('print(typeof context, context.length, context.match(/ERR-\\d{4}/g).length)');
    expect(r.stdout).toBe(`string ${text.length} ${text.length / line.length}\n`);
  });

  it('says plainly what to use for files over the sandbox limit', async () => {
    const file = path.join(tempDir(), 'notes.txt');
    writeFileSync(file, 'x'.repeat(5000));
    const loaded = await loadInput({ question: 'q', paths: [file] }, 1000);
    cleanups.push(() => loaded.close());
    expect(loaded.shape).toMatchObject({ inIsolate: false, isolateLimit: 1000, searchable: true });
  });
});
