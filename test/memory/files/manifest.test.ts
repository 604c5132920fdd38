import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDocuments, checkLinks, checkManifest } from '../../../memory/files/manifest.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { thrown } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';

/** The files of a real one-document store, parsed. */
async function realStore() {
  const dir = tempDir();
  const store = await ChunkStore.open(dir, { create: true });
  await store.ingestText('doc-1', 'one small document about rivers');
  await store.close();
  const read = (name: string) =>
    JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as Record<string, unknown>;
  const manifest = read('rlm-store.json');
  // The commit that added the document wrote it to the documents log, over the empty base.
  const log = (manifest.documentLog as string[] | undefined) ?? [];
  const put = log.flatMap((f) => read(f).put as unknown[]);
  const base = read(manifest.documents as string);
  return {
    dir,
    manifest,
    documents: { ...base, documents: [...(base.documents as unknown[]), ...put] },
    links: read(manifest.links as string),
  };
}

describe('store file schemas', () => {
  it('accept what the store writes, unknown extra fields included', async () => {
    const { manifest, documents, links } = await realStore();
    expect(checkManifest(manifest, 'm.json')).toBe(manifest);
    expect(checkManifest({ ...manifest, addedLater: { x: 1 } }, 'm.json').generation).toBe(
      manifest.generation,
    );
    expect(checkDocuments(documents, 'd.json')).toBe(documents);
    expect(documents.documents).toHaveLength(1);
    expect(checkLinks(links, 'l.json')).toBe(links);
  });

  it('name the file and the first wrong field in STORE_CORRUPT', async () => {
    const { manifest, documents } = await realStore();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...manifest, format: 'other' }, /not an rlm store manifest/],
      [{ ...manifest, schema: 'one' }, /schema version missing/],
      [{ ...manifest, segments: ['seg-000001', 'oops'] }, /segments\.1: must be a segment name/],
      [{ ...manifest, documents: '../elsewhere.json' }, /documents: must be a file name in the store folder/],
      [{ ...manifest, generation: 1.5 }, /generation: must be an integer/],
      [
        { ...manifest, embedder: { spec: 'hash' } },
        /embedder\.dimensions: expected number, received undefined/,
      ],
      [{ ...manifest, nextSegment: -1 }, /nextSegment: must be >= 0/],
      [
        { ...manifest, memory: { journal: 'memories-1.jsonl', settings: [] } },
        /memory\.settings: expected object, received array/,
      ],
      [{ ...manifest, createdAt: null }, /createdAt: expected string, received null/],
    ];
    for (const [value, message] of cases) {
      const err = thrown(() => checkManifest(value, '/s/rlm-store.json'));
      expect(err.code).toBe('STORE_CORRUPT');
      expect(err.message).toContain('/s/rlm-store.json');
      expect(err.message).toMatch(message);
    }
    const docs = documents.documents as Record<string, unknown>[];
    const badDoc = { ...documents, documents: [{ ...docs[0], first: undefined }] };
    expect(thrown(() => checkDocuments(badDoc, 'd.json')).message).toMatch(/documents\.0\.first/);
    const badLink = { version: 1, links: [{ from: 'a', to: 'b', type: 'related_to' }] };
    expect(thrown(() => checkLinks(badLink, 'l.json')).message).toMatch(
      /links\.0\.type: must be supports, contradicts or summarizes/,
    );
  });

  it('refuse a newer schema with BAD_INPUT before judging fields it may have changed', async () => {
    const { manifest } = await realStore();
    const err = thrown(() =>
      checkManifest({ format: manifest.format, schema: 4, segments: 'new shape' }, '/s/rlm-store.json'),
    );
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toMatch(/schema 4, newer than this rlm understands \(3\); upgrade rlm/);
  });
});
