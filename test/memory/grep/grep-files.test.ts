import { existsSync, promises as fs, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';

/** A store of three documents in three segments, one of them with non-ASCII text. */
async function threeDocs(dir: string): Promise<ChunkStore> {
  const store = await ChunkStore.open(dir, { create: true });
  await store.ingestText('c-doc', 'gamma needle 3\nplain\n', { path: '/p/c.md' });
  await store.ingestText('b-doc', 'crème brûlée needle 2 🍮\nmore\n', { path: '/p/b.md' });
  await store.ingestText('a-doc', 'alpha needle 1\nalpha needle 1b\n', { path: '/p/a.md' });
  return store;
}

async function chunkFiles(dir: string): Promise<string[]> {
  return (await fs.readdir(path.join(dir, 'segments'))).filter((f) => f.endsWith('.chunks')).sort();
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

  it('reads each segment from its chunk file, checking every chunk it scans against its CRC', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = await threeDocs(dir);
    expect(await chunkFiles(dir)).toEqual(['seg-000001.chunks', 'seg-000002.chunks', 'seg-000003.chunks']);
    const expected = await store.grep('needle \\d', { context: 3 });
    expect(expected.matches.map((m) => m.text)).toEqual([
      'alpha needle 1',
      'alpha needle 1b',
      'crème brûlée needle 2 🍮',
      'gamma needle 3',
    ]);
    await store.close();
    // The BM25 and links files play no part in a grep.
    const segments = path.join(dir, 'segments');
    for (const f of readdirSync(segments).filter((f) => !f.endsWith('.chunks')))
      await fs.writeFile(path.join(segments, f), 'x');
    const chunksOnly = await ChunkStore.open(dir);
    expect(await chunksOnly.grep('needle \\d', { context: 3 })).toEqual(expected);
    await chunksOnly.close();
    // A changed byte in a chunk's text: STORE_CORRUPT naming the file, not a match on damaged text.
    const file = path.join(segments, 'seg-000002.chunks');
    const bytes = await fs.readFile(file);
    const at = bytes.indexOf('needle');
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at);
    await fs.writeFile(file, bytes);
    const damaged = await ChunkStore.open(dir);
    const err = await damaged.grep('needle \\d').catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain(file);
    await damaged.close();
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

  it('greps on when another process removed a segment this store still names', async () => {
    const dir = path.join(tempDir(), 'store');
    const writer = await ChunkStore.open(dir, { create: true });
    await writer.ingestText('only-doc', 'old needle 1\n', { path: '/p/only.md' });
    const reader = await ChunkStore.open(dir);
    // Replacing the only document of segment 1 drops that segment's files at the commit.
    await writer.ingestText('only-doc', 'new needle 2\n', { path: '/p/only.md' });
    expect(existsSync(path.join(dir, 'segments', 'seg-000001.chunks'))).toBe(false);
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
      chunk: (await s.getChunk('lone:0'))!.text,
      grep: (await s.grep('[\\ud800-\\udfff]')).matches.map((m) => m.text),
      replacement: (await s.grep('\ufffd', { literal: true })).matches.length,
    });
    const expected = { chunk: text, grep: ['before \ud800 lone \udfff after'], replacement: 0 };
    expect(await read(store)).toEqual(expected);
    await store.close();
    const reopened = await ChunkStore.open(dir);
    expect(await read(reopened)).toEqual(expected);
    await reopened.close();
  });
});
