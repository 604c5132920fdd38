/**
 * Document reads and document ids, the same on every backend: `readDocument` (a file stored in parts,
 * a slice, a memory, overlapping chunks, a JSONL transcript), and document or memory ids where a chunk
 * id is taken (rm, link, delete with the summaries written from a memory).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';
import { backends } from '../helpers/backends.ts';

const line = (i: number) => `line ${i} of the big log, with café and 日本 in it\n`;

describe.each(backends('document read conformance'))('readDocument, %s store', (_name, backend) => {
  it('reads a file stored in parts as the file’s whole text, by path and by id; a part alone by its id', async () => {
    const file = path.join(tempDir('rlm-readdoc-'), 'big.log');
    const text = Array.from({ length: 3000 }, (_, i) => line(i)).join('');
    writeFileSync(file, text);
    const store = await backend.open();
    await store.ingestPaths([file], { partBytes: 40_000, segmentChars: 60_000 });
    const ids = (await store.documents()).map((d) => d.id);
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
    // The same naming as a lookup of records, which a search's document filter uses.
    const named = async (name: string) => (await store.documentsNamed(name)).map((d) => d.id);
    expect(await named(file)).toEqual([base, ...parts]);
    expect(await named(base)).toEqual([base, ...parts]);
    expect(await named(parts[1]!)).toEqual([parts[1]]);
    expect(await named('nope')).toEqual([]);

    // rm by the file's id takes every part, as rm by its path does.
    expect(await store.removeDocument(base)).toBe(true);
    expect(await store.documents()).toEqual([]);
  });

  it('reads a memory, an ingested text with overlapping chunks, and a JSONL transcript', async () => {
    const store = await backend.open();
    const m = await store.remember({ text: 'The user wants answers in French.' });
    expect((await store.readDocument(m.id))?.text).toBe('The user wants answers in French.');

    const prose = Array.from({ length: 400 }, (_, i) => `Sentence ${i} about lanterns and rivers.`).join(' ');
    await store.ingestText('prose', prose, { chunker: 'size', chunkTokens: 100, overlapTokens: 20 });
    expect((await store.documents()).find((d) => d.id === 'prose')!.chunks).toBeGreaterThan(5);
    expect((await store.readDocument('prose'))?.text).toBe(prose);
    expect((await store.documents()).find((d) => d.id === 'prose')!.chars).toBe(prose.length);

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
    const chunks = await store.documentChunks('chat');
    expect(chunks.length).toBe(2);
    const read = await store.readDocument('chat');
    // No source text is kept for a JSONL transcript: its text is the rendered exchanges.
    expect(read?.text).toBe(`${chunks[0]!.text}\n\n${chunks[1]!.text}`);
    expect(read?.text).toContain('Where is the retry logic?');
  });
});

describe.each(backends('document id conformance'))('document and memory ids, %s store', (_name, backend) => {
  it('link takes a document or memory id for its first chunk; unlink too; an unknown id is NOT_FOUND', async () => {
    const store = await backend.open();
    await store.ingestText('notes', 'Kafka topics are partitioned by customer id.');
    const m = await store.remember({ text: 'Kafka retention is seven days' });
    await store.link(m.id, 'notes', 'supports', 0.5);
    expect(await store.neighbors('notes:0', 'supports')).toEqual([
      { from: `${m.id}:0`, to: 'notes:0', type: 'supports', strength: 0.5 },
    ]);
    const err = await caught(store.link('nothing-here', 'notes', 'supports'));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(/no chunk or document with id nothing-here/);
    expect(await store.unlink(m.id, 'notes', 'supports')).toBe(true);
    expect(await store.neighbors('notes:0', 'supports')).toEqual([]);
  });

  it('deleteDocuments takes ids and paths, refuses unknown names whole, and deletes summaries of a deleted memory', async () => {
    const store = await backend.open();
    await store.ingestText('keep', 'The harbour opens at dawn.');
    await store.ingestText('drop', 'The lighthouse keeper sleeps at noon.', { path: '/docs/drop.md' });
    const missing = await caught(store.deleteDocuments(['/docs/drop.md', 'no-such-doc']));
    expect(missing.code).toBe('NOT_FOUND');
    expect(missing.message).toMatch(/no-such-doc/);
    expect(await store.findDocument('drop')).toBeDefined();
    expect(await store.deleteDocuments(['/docs/drop.md'])).toEqual({
      deleted: ['drop'],
      summaries: [],
      restored: [],
    });
    expect(await store.findDocument('drop')).toBeUndefined();
    expect((await store.grep('lighthouse')).matches).toEqual([]);

    const a = await store.remember({ text: 'alpha one', topic: 't' });
    const b = await store.remember({ text: 'alpha two', topic: 't' });
    const { summary, text } = await store.consolidate('t', async () => 'alpha summary');
    expect(text).toBe('alpha summary');
    store.touch([`${a.id}:0`]);
    expect(await store.deleteDocuments([a.id])).toEqual({
      deleted: [a.id],
      summaries: [summary],
      restored: [b.id],
    });
    expect(await store.readDocument(summary)).toBeUndefined();
    expect((await store.getMemory(b.id))?.archived).toBe(false);
    expect((await store.accessStats(`${a.id}:0`)).count).toBe(0);
    const notMemory = await caught(store.forgetMemories(['keep']));
    expect(notMemory.code).toBe('NOT_FOUND');

    // A summary deleted by name gives its sources back to recall too: their knowledge was only in it.
    const c = await store.remember({ text: 'gamma one', topic: 'g' });
    const d = await store.remember({ text: 'gamma two', topic: 'g' });
    const second = await store.consolidate('g', async () => 'gamma summary');
    const report = await store.deleteDocuments([second.summary]);
    expect({ ...report, restored: [...report.restored].sort() }).toEqual({
      deleted: [second.summary],
      summaries: [],
      restored: [c.id, d.id].sort(),
    });
    expect((await store.recall('gamma')).map((m) => m.id).sort()).toEqual([c.id, d.id].sort());
  });
});
