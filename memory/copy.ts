/**
 * `rlm store copy SRC DST`: copies a store into an empty one, between any two backends, losslessly:
 * documents and their records (paths, hashes, tags, notes, importer meta, memory fields with archive
 * flags), chunks as stored (offsets, types, tags, sections, times, text), hand-made links, access stats
 * (so memories keep their weights) and memory settings. `follows` and `context_of` links follow from
 * chunk order; `related_to` links are derived data, computed again by the destination as it writes.
 */
import { RlmError } from '../core/errors.ts';
import type { ExactDocument } from './ingest/prepare.ts';
import { DEFAULT_MEMORY_SETTINGS } from './memories/memory-model.ts';
import type { Store } from './store-api.ts';

/** Text per commit of the copy, characters: what a crash can lose, and what memory the copy holds. */
const BATCH_CHARS = 4 * 1024 * 1024;

/** What `rlm store copy` prints: the destination's totals and the time taken. */
export interface CopyReport {
  documents: number;
  chunks: number;
  links: number;
  memories: number;
  elapsedMs: number;
}

export interface CopyProgress {
  documentsDone: number;
  documentsTotal: number;
}

/** Copies `src` into `dst`, which must hold no document (BAD_INPUT otherwise: nothing is mixed). */
export async function copyStore(
  src: Store,
  dst: Store,
  opts: { onProgress?: (p: CopyProgress) => void } = {},
): Promise<CopyReport> {
  const started = performance.now();
  const already = (await dst.stats()).documents;
  if (already > 0) {
    throw new RlmError(
      'BAD_INPUT',
      `the destination ${dst.location} already holds ${already} document${already === 1 ? '' : 's'}; copy into a new or empty store`,
    );
  }
  const documents = await src.documents();
  const settings = await src.memorySettings();
  const memories = documents.filter((d) => d.memory !== undefined).length;
  if (memories > 0 || JSON.stringify(settings) !== JSON.stringify(DEFAULT_MEMORY_SETTINGS))
    await dst.configureMemory(settings);
  let batch: ExactDocument[] = [];
  let batchTime: string | undefined;
  let chars = 0;
  let done = 0;
  const flush = async () => {
    if (batch.length > 0) await dst.writeRecords(batch);
    opts.onProgress?.({ documentsDone: done, documentsTotal: documents.length });
    batch = [];
    chars = 0;
  };
  for (const document of documents) {
    const chunks = await src.documentChunks(document.id);
    // A folder store keeps one ingest time per segment: documents ingested at another time go in
    // another batch. Memories are the exception (each one's time is its document's ingestedAt).
    const time = document.memory ? undefined : chunks[0]?.createdAt;
    if (time !== undefined && batchTime !== undefined && time !== batchTime) await flush();
    if (time !== undefined) batchTime = time;
    batch.push({ document, chunks });
    chars += chunks.reduce((n, c) => n + c.text.length, 0);
    done++;
    if (chars >= BATCH_CHARS) {
      await flush();
      batchTime = undefined;
    }
  }
  await flush();
  opts.onProgress?.({ documentsDone: done, documentsTotal: documents.length });
  const links = await src.manualLinks();
  if (links.length > 0) await dst.addManualLinks(links);
  const access = await src.accessEntries();
  if (access.length > 0) await dst.setAccessEntries(access);
  const totals = await dst.stats();
  return {
    documents: totals.documents,
    chunks: totals.chunks,
    links: totals.links,
    memories,
    elapsedMs: Math.round(performance.now() - started),
  };
}
