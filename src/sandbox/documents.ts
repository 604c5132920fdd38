/**
 * The document list `list_documents()` returns and the prompt summarises. Paths are shown relative to the
 * parent of the documents' common folder: enough to tell files apart and see the layout, without the
 * host's directory structure above what the user handed in.
 */
import type { ChunkReader } from '../../memory/types.ts';
import type { DocumentEntry } from './host.ts';

/** Shortens absolute paths to the part below the parent of their common folder. */
export function displayPaths(paths: readonly string[]): string[] {
  const split = paths.map((p) => p.replace(/\\/g, '/').split('/'));
  if (split.length === 0) return [];
  // Directories shared by all (the file names themselves excluded).
  let common = (split[0] as string[]).length - 1;
  for (const parts of split) {
    const first = split[0] as string[];
    let k = 0;
    while (k < common && k < parts.length - 1 && parts[k] === first[k]) k++;
    common = k;
  }
  const keep = Math.max(0, common - 1);
  return split.map((parts) => parts.slice(keep).join('/'));
}

/** Every document of a store, in store order. `chars` is the stored byte size (equal for ASCII text). */
export async function storeDocuments(store: ChunkReader): Promise<DocumentEntry[]> {
  const docs = await store.documents();
  const shown = displayPaths(docs.map((d) => d.path ?? d.id));
  return docs.map((d, i) => ({
    id: d.id,
    path: d.path === null ? d.id : (shown[i] as string),
    chars: d.bytes,
    chunks: d.chunks,
    modified: d.ingestedAt ?? null,
  }));
}
