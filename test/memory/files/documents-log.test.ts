import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';

const manifestOf = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, 'rlm-store.json'), 'utf8')) as {
    documents: string;
    documentLog?: string[];
  };

async function storeOf(docs: number): Promise<{ dir: string; store: ChunkStore }> {
  const dir = path.join(tempDir(), 'store');
  const store = await ChunkStore.open(dir, { create: true });
  for (let i = 0; i < docs; i++)
    await store.ingestText(`doc-${i}`, `document ${i} about lighthouses and tides`);
  return { dir, store };
}

describe('the documents log', () => {
  it('a commit writes only the records it adds or changes, beside the base; a reader sees base and log as one', async () => {
    const { dir, store } = await storeOf(3);
    const manifest = manifestOf(dir);
    expect(manifest.documentLog).toHaveLength(3);
    const last = JSON.parse(readFileSync(path.join(dir, manifest.documentLog!.at(-1)!), 'utf8')) as {
      put: { id: string }[];
      remove: string[];
    };
    expect(last.put.map((d) => d.id)).toEqual(['doc-2']);
    await store.ingestText('doc-0', 'document 0 rewritten about harbours');
    const changed = manifestOf(dir);
    expect(changed.documents).toBe(manifest.documents);
    const delta = JSON.parse(readFileSync(path.join(dir, changed.documentLog!.at(-1)!), 'utf8')) as {
      put: { id: string }[];
    };
    expect(delta.put.map((d) => d.id)).toEqual(['doc-0']);
    const reader = await ChunkStore.open(dir);
    expect(reader.documents()).toEqual(store.documents());
    expect((await reader.getChunk('doc-0:0'))?.text).toBe('document 0 rewritten about harbours');
    await reader.close();
    await store.close();
  });

  it('a commit that removes a document writes a whole base: its record is in no file', async () => {
    const { dir, store } = await storeOf(3);
    await store.removeDocument('doc-1');
    const manifest = manifestOf(dir);
    expect(manifest.documentLog).toBeUndefined();
    for (const f of readdirSync(dir).filter((f) => f.startsWith('documents-')))
      expect(readFileSync(path.join(dir, f), 'utf8'), f).not.toContain('doc-1');
    expect(store.documents().map((d) => d.id)).toEqual(['doc-0', 'doc-2']);
    // Written record by record, the base is the JSON of them all, byte for byte; and with none left.
    const base = () => readFileSync(path.join(dir, manifestOf(dir).documents), 'utf8');
    expect(base()).toBe(JSON.stringify({ version: 1, documents: store.documents() }));
    await store.removeDocument('doc-0');
    await store.removeDocument('doc-2');
    expect(base()).toBe('{"version":1,"documents":[]}');
    await store.close();
  });

  it('is folded into a new base before it holds more than 32 files', async () => {
    const { dir, store } = await storeOf(40);
    const manifest = manifestOf(dir);
    expect(manifest.documentLog?.length ?? 0).toBeLessThanOrEqual(32);
    expect(manifest.documentLog?.length ?? 0).toBeLessThan(40);
    const base = JSON.parse(readFileSync(path.join(dir, manifest.documents), 'utf8')) as {
      documents: unknown[];
    };
    expect(base.documents.length).toBeGreaterThan(0);
    // Files of earlier generations are gone: the manifest names every file the documents are in.
    const named = new Set([manifest.documents, ...(manifest.documentLog ?? [])]);
    expect(readdirSync(dir).filter((f) => f.startsWith('documents-') && !named.has(f))).toEqual([]);
    const reader = await ChunkStore.open(dir);
    expect(reader.documents()).toHaveLength(40);
    await reader.close();
    await store.close();
  });

  it('a damaged log file is STORE_CORRUPT naming it; repair rebuilds the records from the chunk files', async () => {
    const { dir, store } = await storeOf(2);
    await store.close();
    const file = path.join(dir, manifestOf(dir).documentLog!.at(-1)!);
    writeFileSync(file, '{"version": 1, "put": [{"id": 3}]');
    const err = await ChunkStore.open(dir).catch((e: unknown) => e);
    expect(isRlmError(err, 'STORE_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain(file);
    const report = await repairStore(dir);
    expect(report.actions.join('\n')).toContain('rebuilt 2 document records from chunk files');
    expect(existsSync(file)).toBe(false);
    const reader = await ChunkStore.open(dir);
    expect(
      reader
        .documents()
        .map((d) => d.id)
        .sort(),
    ).toEqual(['doc-0', 'doc-1']);
    await reader.close();
  });
});
