/**
 * The embedding seam: anything that turns texts into fixed-length vectors. The vector index and hybrid
 * search depend only on this interface, so a local hashing embedder and a remote API are interchangeable.
 */

/** Turns texts into vectors of a fixed length. */
export interface Embedder {
  /**
   * Stable identity of the embedding space (e.g. `hash:384`, `openai:text-embedding-3-small`). Vectors
   * from embedders with different names must never be mixed in one index.
   */
  readonly name: string;
  /**
   * Length of every vector this embedder returns. A remote embedder whose model is unknown reports 0
   * until its first successful call has revealed the length.
   */
  readonly dimensions: number;
  /**
   * Embeds `texts`, returning one vector per text in the same order. Plain number arrays because that is
   * what the vector store persists, so no conversion happens on the write path.
   */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}
