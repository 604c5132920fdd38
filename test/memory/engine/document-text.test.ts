import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';

function temp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rlm-readdoc-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const line = (i: number) => `line ${i} of the big log, with café and 日本 in it\n`;

describe('readDocument', () => {
  it('reads a file stored in parts as the file’s whole text, by path and by id; a part alone by its id', async () => {
    const root = temp();
    const file = path.join(root, 'big.log');
    const text = Array.from({ length: 3000 }, (_, i) => line(i)).join('');
    writeFileSync(file, text);
    const store = await ChunkStore.open(path.join(root, 'store'), { create: true });
    onTestFinished(() => store.close());
    await store.ingestPaths([file], { partBytes: 40_000, segmentChars: 60_000 });
    const ids = store.documents().map((d) => d.id);
    const base = ids.find((id) => !/\.p\d+$/.test(id))!;
    expect(ids.length).toBeGreaterThan(3);

    const whole = await store.readDocument(file);
    expect(whole?.text).toBe(text);
    expect(whole?.length).toBe(text.length);
    const parts = Array.from({ length: ids.length - 1 }, (_, i) => `${base}.p${i + 2}`);
    expect(whole?.documents.map((d) => d.id)).toEqual([base, ...parts]);
    expect((await store.readDocument(base))?.text).toBe(text);
    // A slice across the first part's end, in the file's offsets.
    const second = (await store.readDocument(parts[0]!))!;
    expect(second.documents).toHaveLength(1);
    const at = text.indexOf(second.text);
    expect(at).toBeGreaterThan(0);
    const cut = await store.readDocument(file, { start: at - 10, end: at + 10 });
    expect(cut).toMatchObject({ text: text.slice(at - 10, at + 10), start: at - 10, end: at + 10 });
    expect((await store.readDocument(file, { start: -5 }))?.text).toBe(text.slice(-5));
    expect(await store.readDocument('nope')).toBeUndefined();

    // rm by the file's id takes every part, as rm by its path does.
    expect(await store.removeDocument(base)).toBe(true);
    expect(store.documents()).toEqual([]);
  });

  it('reads a memory, an ingested text with overlapping chunks, and a JSONL transcript', async () => {
    const store = new MemoryChunkStore();
    const m = await store.remember({ text: 'The user wants answers in French.' });
    expect((await store.readDocument(m.id))?.text).toBe('The user wants answers in French.');

    const prose = Array.from({ length: 400 }, (_, i) => `Sentence ${i} about lanterns and rivers.`).join(' ');
    await store.ingestText('prose', prose, { chunker: 'size', chunkTokens: 100, overlapTokens: 20 });
    expect(store.documents().find((d) => d.id === 'prose')!.chunks).toBeGreaterThan(5);
    expect((await store.readDocument('prose'))?.text).toBe(prose);

    const jsonl = [
      { type: 'user', message: { role: 'user', content: 'Where is the retry logic?' } },
      {
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'text', text: 'In http-retry.ts.' }] },
      },
      { type: 'user', message: { role: 'user', content: 'And the backoff?' } },
      {
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'text', text: 'Doubling to 8 s.' }] },
      },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n');
    await store.ingestText('chat', jsonl, { path: '/x/chat.jsonl', chunker: 'turn' });
    const chunks = store.documentChunks('chat');
    expect(chunks.length).toBe(2);
    const read = await store.readDocument('chat');
    // No source text is kept for a JSONL transcript: its text is the rendered exchanges.
    expect(read?.text).toBe(`${chunks[0]!.text}\n\n${chunks[1]!.text}`);
    expect(read?.text).toContain('Where is the retry logic?');
  });
});
