/** Embedding a segment's new chunks into the vector index (an ingest, a repair). */
import type { Embedder } from '../search/embedders/types.ts';
import type { VectorIndex } from '../search/vectors.ts';
import type { ChunkRecord } from '../types.ts';
import { chunkKey } from './graph.ts';

const EMBED_BATCH = 256;

/** Embeds `records` of `segment` into the vector index, after deleting the `stale` keys. */
export async function embedRecords(
  vectors: { index: VectorIndex; embedder: Embedder },
  segment: string,
  records: ChunkRecord[],
  stale: string[],
  checkAbort: () => void = () => {},
): Promise<void> {
  if (stale.length > 0) await vectors.index.delete(stale);
  for (let i = 0; i < records.length; i += EMBED_BATCH) {
    checkAbort();
    const part = records.slice(i, i + EMBED_BATCH);
    const vecs = await vectors.embedder.embed(part.map((r) => r.text));
    await vectors.index.upsert(
      part.map((r, j) => ({ id: chunkKey(segment, r.id), vector: Array.from(vecs[j] ?? []) })),
    );
  }
}
