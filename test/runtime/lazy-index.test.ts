import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import { contentHash } from '../../memory/ingest/files.ts';
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

async function session(loaded: LoadedInput, maxContextChars?: number): Promise<Sandbox> {
  const sandbox = await createSandbox(
    {
      ...(loaded.context === undefined ? {} : { context: loaded.context }),
      ...(loaded.store === undefined ? {} : { store: loaded.store }),
      ...(loaded.contextFiles === undefined ? {} : { contextFiles: loaded.contextFiles }),
      ...(loaded.documents === undefined ? {} : { documents: loaded.documents }),
    },
    maxContextChars === undefined ? {} : { maxContextChars },
  );
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
      chunk: (await eager.getChunk(expected[0]!.id))?.text,
      docs: eager.documents().map((d) => [d.id, d.chunks]),
    });
    expect(seen.hits.length).toBeGreaterThan(0);
  });

  it('is not built by list_documents(), which gives sizes, hashes and copies, and no chunk counts yet', async () => {
    const { dir, loaded } = await notes();
    writeFileSync(path.join(dir, 'c.md'), '# Harbour\n\nThe harbour master keeps the logbook.\n');
    const again = await loadInput({ question: 'q', paths: [dir] }, 1_000_000);
    cleanups.push(() => again.close());
    expect(again.shape.duplicates).toBe(1);
    const sandbox = await session(again);
    const r = await sandbox.run('print(JSON.stringify(list_documents()))');
    expect(r.error).toBeNull();
    expect(again.index?.built).toBe(false);
    const docs = JSON.parse(r.stdout) as Record<string, unknown>[];
    const a = contentHash('# Harbour\n\nThe harbour master keeps the logbook.\n').slice(0, 16);
    expect(docs.map((d) => [d.path, d.chars, d.chunks, d.hash === a, d.duplicateOf ?? null])).toEqual([
      ['notes/a.md', 49, null, true, null],
      ['notes/b.txt', 52, null, false, null],
      ['notes/c.md', 49, null, true, docs[0]!.id],
    ]);
    expect(typeof docs[0]!.modified).toBe('string');
    expect(loaded.index?.built).toBe(false);
  });

  it('serves grep and peek from the files when they are too large for the isolate, without the index', async () => {
    const { loaded } = await notes();
    const sandbox = await session(loaded, 10);
    const r = await sandbox.run(
      [
        "const hits = grep('logbook');",
        "print(JSON.stringify({ paths: hits.map((m) => m.path), count: grep('logbook', { count: true }).matches, peek: peek(hits[1].document, 0, 7), range: peek(2, 9) }))",
      ].join('\n'),
    );
    expect(r.error).toBeNull();
    expect(JSON.parse(r.stdout)).toEqual({
      paths: ['notes/a.md', 'notes/b.txt'],
      count: 2,
      peek: 'Nothing',
      range: 'Harbour',
    });
    expect(loaded.index?.built).toBe(false);
  });

  it('is built once however many calls wait for it', async () => {
    const { loaded } = await notes();
    const [a, b] = await Promise.all([loaded.index!.load(), loaded.index!.load()]);
    expect(a).toBe(b);
    expect(a).toBe(await loaded.index!.load());
  });

  it('refuses to index a file that changed on disk since the run read it, and a session will not load it', async () => {
    const { dir, loaded } = await notes();
    writeFileSync(
      path.join(dir, 'b.txt'),
      'Rewritten after the run read it: a longer text about lighthouses.\n',
    );
    const err = await loaded.index!.load().catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toMatch(/b\.txt changed on disk after the run read it/);
    expect(loaded.index?.built).toBe(false);
    const sandbox = await session(loaded);
    const r = await sandbox.run('print(context.length)');
    expect(r.error?.message).toMatch(/a context file changed on disk after the run read it/);
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
  it('measures a file without keeping its text, and counts characters as JavaScript does', async () => {
    const file = path.join(tempDir(), 'mixed.txt');
    const text = '\ufeffé𝄞 naïve\r\nline two ✓\n';
    writeFileSync(file, text);
    const loaded = await loadInput({ question: 'q', paths: [file] }, 1_000_000);
    cleanups.push(() => loaded.close());
    // The BOM is dropped, as a store ingest drops it; a character past U+FFFF is two units.
    const read = text.slice(1);
    expect(loaded.shape.chars).toBe(read.length);
    expect(await loaded.contextFiles?.[0]?.text.string()).toBe(read);
    const sandbox = await session(loaded);
    const r = await sandbox.run('print(context.length, JSON.stringify(context.slice(0, 3)))');
    expect(r.stdout).toBe(`${read.length} ${JSON.stringify(read.slice(0, 3))}\n`);
  });

  it('gives a file over 4 MiB as one string, in the host and in the sandbox', async () => {
    const file = path.join(tempDir(), 'big.log');
    const line = 'ERR-1234 something happened at the harbour\n';
    const text = line.repeat(Math.ceil((5 * 1024 * 1024) / line.length));
    writeFileSync(file, text);
    const loaded = await loadInput({ question: 'q', paths: [file] }, 64 * 1024 * 1024);
    cleanups.push(() => loaded.close());
    // The host keeps no text: the file is measured, and read again by the session's isolate process.
    expect(loaded.context).toBeUndefined();
    expect(loaded.contextFiles?.map((f) => f.text.chars)).toEqual([text.length]);
    expect(await loaded.contextFiles?.[0]?.text.string()).toBe(text);
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
