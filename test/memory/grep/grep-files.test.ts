import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import type { SegmentSource } from '../../../memory/engine/graph.ts';
import { MemoryTail } from '../../../memory/engine/memory-tail.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { segmentTextPieces } from '../../../memory/grep/segment-text.ts';
import { checkRemember } from '../../../memory/memories/memory-model.ts';
import { tempDir } from '../../helpers/temp.ts';

/** A store of three documents in three segments, one of them with non-ASCII text. */
async function threeDocs(dir: string): Promise<ChunkStore> {
  const store = await ChunkStore.open(dir, { create: true });
  await store.ingestText('c-doc', 'gamma needle 3\nplain\n', { path: '/p/c.md' });
  await store.ingestText('b-doc', 'crème brûlée needle 2 🍮\nmore\n', { path: '/p/b.md' });
  await store.ingestText('a-doc', 'alpha needle 1\nalpha needle 1b\n', { path: '/p/a.md' });
  return store;
}

async function textColumns(dir: string): Promise<string[]> {
  return (await fs.readdir(path.join(dir, 'segments'))).filter((f) => f.endsWith('.text')).sort();
}

describe('store grep over chunk files', () => {
  it('reports matches in document path order across segments, honours limit, document and context', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    // Written in reverse path order, one segment each, then one replaced: segment order ≠ path order.
    await store.ingestText('c-doc', 'gamma needle 3\nplain\n', { path: '/p/c.md' });
    await store.ingestText('b-doc', 'beta needle 2\n', { path: '/p/b.md' });
    await store.ingestText('a-doc', 'alpha needle 1\nalpha needle 1b\n', { path: '/p/a.md' });
    await store.ingestText('b-doc', 'beta needle 2 (new)\n', { path: '/p/b.md' });
    const all = await store.grep('needle \\d');
    expect(all.matches.map((m) => m.text)).toEqual([
      'alpha needle 1',
      'alpha needle 1b',
      'beta needle 2 (new)',
      'gamma needle 3',
    ]);
    expect(all.truncated).toBe(false);
    const two = await store.grep('needle', { limit: 2, literal: true });
    expect(two.matches.map((m) => m.id)).toEqual(['a-doc:0', 'a-doc:0']);
    expect(two.truncated).toBe(true);
    const onlyC = await store.grep('NEEDLE', {
      ignoreCase: true,
      literal: true,
      document: 'c-doc',
      context: 4,
    });
    expect(onlyC.matches).toEqual([
      {
        id: 'c-doc:0',
        offset: 6,
        text: 'gamma needle 3',
        before: '',
        after: '\npla',
        document: 'c-doc',
        documentOffset: 6,
      },
    ]);
    await store.close();
  });

  it('stops a catastrophic regex with TIMEOUT and stays usable', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    await store.ingestText('evil', `${'a'.repeat(40)}b\n`);
    const err = await store.grep('(a+)+$', { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(isRlmError(err, 'TIMEOUT')).toBe(true);
    expect((await store.grep('b$')).matches).toHaveLength(1);
    await store.close();
  });

  it('reads each segment from its text column, and from the chunk file when the column is missing or damaged', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await threeDocs(dir);
    expect(await textColumns(dir)).toEqual(['seg-000001.text', 'seg-000002.text', 'seg-000003.text']);
    const expected = await store.grep('needle \\d', { context: 3 });
    expect(expected.matches.map((m) => m.text)).toEqual([
      'alpha needle 1',
      'alpha needle 1b',
      'crème brûlée needle 2 🍮',
      'gamma needle 3',
    ]);
    const peeked = store.getChunk('b-doc:0')!.text;
    await store.close();

    // With its text column there, a segment's chunk file is not read at all: grep scans the column.
    const segments = path.join(dir, 'segments');
    const aChunks = path.join(segments, 'seg-000003.chunks.json');
    const aSaved = await fs.readFile(aChunks);
    await fs.writeFile(aChunks, '{"damaged": true}');
    const columnOnly = await ChunkStore.open(dir);
    expect(await columnOnly.grep('needle \\d', { context: 3 })).toEqual(expected);
    await columnOnly.close();
    await fs.writeFile(aChunks, aSaved);

    // A store written before text columns has none; a torn one does not add up.
    await fs.rm(path.join(segments, 'seg-000001.text'));
    const torn = await fs.readFile(path.join(segments, 'seg-000002.text'));
    await fs.writeFile(path.join(segments, 'seg-000002.text'), torn.subarray(0, torn.length - 4));
    const reopened = await ChunkStore.open(dir);
    expect(await reopened.grep('needle \\d', { context: 3 })).toEqual(expected);
    expect(reopened.getChunk('b-doc:0')!.text).toBe(peeked);
    expect((await reopened.search('brûlée'))[0]?.preview).toContain('brûlée');
    await reopened.close();

    await repairStore(dir);
    expect(await textColumns(dir)).toEqual(['seg-000001.text', 'seg-000002.text', 'seg-000003.text']);
    const repaired = await ChunkStore.open(dir);
    expect(await repaired.grep('needle \\d', { context: 3 })).toEqual(expected);
    await repaired.close();
  });

  it('greps the memories not yet folded together with the segments in files', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await threeDocs(dir);
    const memory = await store.remember({ text: 'Remember: the needle 9 is in the red box.' });
    const found = await store.grep('needle \\d');
    expect(found.matches.map((m) => m.id.split(':')[0])).toEqual([
      'a-doc',
      'a-doc',
      'b-doc',
      'c-doc',
      memory.id,
    ]);
    expect(found.matches.at(-1)?.text).toBe('Remember: the needle 9 is in the red box.');
    expect((await store.grep('needle', { literal: true, document: memory.id })).matches).toHaveLength(1);
    await store.close();
  });

  it('the memory tail keeps the file paths of the segments it does not hold', () => {
    const base = {
      filePaths: (segment: string) => ({ text: `/s/${segment}.text`, chunks: `/s/${segment}.chunks.json` }),
    } as unknown as SegmentSource;
    const tail = new MemoryTail(base);
    const entry = checkRemember({ text: 'a memory' });
    tail.add([entry], 10);
    const view = tail.view({
      generation: 1,
      nextSegment: 2,
      segments: ['seg-000001'],
      documents: new Map(),
      manual: [],
      embedder: null,
    });
    const block = view.segments.find((s) => s.startsWith('jrn-'))!;
    expect(tail.filePaths?.('seg-000001')).toEqual({
      text: '/s/seg-000001.text',
      chunks: '/s/seg-000001.chunks.json',
    });
    expect(tail.filePaths?.(block)).toBeUndefined();
    // Over a source held in memory, the tail has no file paths at all.
    expect(new MemoryTail({} as SegmentSource).filePaths).toBeUndefined();
  });

  it('ignores a text column whose layout is not the one the documents and meta files give', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await threeDocs(dir);
    const expected = await store.grep('needle \\d');
    await store.close();
    // As an older rlm's repair would leave it: the chunk file compacted, the column of before beside it.
    const column = [
      ...segmentTextPieces(
        'seg-000003',
        [
          { id: 'gone-doc', first: 0, count: 1 },
          { id: 'a-doc', first: 1, count: 1 },
        ],
        ['gone needle 0\n', 'stale needle 7\n'],
      ),
    ].join('');
    await fs.writeFile(path.join(dir, 'segments', 'seg-000003.text'), column);
    const reopened = await ChunkStore.open(dir);
    expect(await reopened.grep('needle \\d')).toEqual(expected);
    expect(reopened.getChunk('a-doc:0')!.text).toBe('alpha needle 1\nalpha needle 1b\n');
    await reopened.close();
  });

  it('greps on when another process removed a segment this store still names', async () => {
    const dir = path.join(tempDir(), 'store');
    const writer = await ChunkStore.open(dir, { create: true });
    await writer.ingestText('only-doc', 'old needle 1\n', { path: '/p/only.md' });
    const reader = await ChunkStore.open(dir);
    // Replacing the only document of segment 1 drops that segment's files at the commit.
    await writer.ingestText('only-doc', 'new needle 2\n', { path: '/p/only.md' });
    expect(existsSync(path.join(dir, 'segments', 'seg-000001.text'))).toBe(false);
    const found = await reader.grep('needle \\d');
    expect(found.matches.map((m) => m.text)).toEqual(['new needle 2']);
    await reader.close();
    await writer.close();
  });
  it('keeps lone surrogates as the chunk file has them, in grep and in chunk reads', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await ChunkStore.open(dir, { create: true });
    const text = 'before \ud800 lone \udfff after\n';
    await store.ingestText('lone', text, { path: '/p/lone.md' });
    await store.ingestText('fine', 'plain text\n', { path: '/p/fine.md' });
    const read = async (s: ChunkStore) => ({
      chunk: s.getChunk('lone:0')!.text,
      grep: (await s.grep('[\\ud800-\\udfff]')).matches.map((m) => m.text),
      replacement: (await s.grep('\ufffd', { literal: true })).matches.length,
    });
    const expected = { chunk: text, grep: ['before \ud800 lone \udfff after'], replacement: 0 };
    expect(await read(store)).toEqual(expected);
    await store.close();
    const reopened = await ChunkStore.open(dir);
    expect(await read(reopened)).toEqual(expected);
    await reopened.close();
    // Segments without a lone surrogate keep their column.
    expect(await textColumns(dir)).toEqual(['seg-000002.text']);
  });
});
