/**
 * The document list `list_documents()` returns and the prompt summarises. Paths are shown relative to the
 * parent of the documents' common folder: enough to tell files apart and see the layout, without the
 * host's directory structure above what the user handed in.
 */
import { createHash } from 'node:crypto';
import { fileIdOf, foldParts } from '../../memory/graph-rules.ts';
import type { ChunkReader, DocumentRecord } from '../../memory/types.ts';
import type { ContextFileRef, DocumentEntry } from './host.ts';

/** Hex digits of a content hash `list_documents()` shows: plenty to tell documents apart. */
const HASH_CHARS = 16;

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

/**
 * A document's length in UTF-16 code units: recorded at ingest, else (stores written before it) the end
 * of its last chunk, which is where the text ends for every chunker but `turn`.
 */
async function documentChars(store: ChunkReader, d: DocumentRecord): Promise<number> {
  if (d.chars !== undefined) return d.chars;
  if (d.chunks === 0) return 0;
  return (await store.getChunk(`${d.id}:${d.chunks - 1}`))?.end ?? d.bytes;
}

/**
 * Every document of a store, in store order, with duplicates marked. A file stored in parts (`ID`,
 * `ID.p2`, …) is one entry, as peek, grep and a document filter take it: its first part's id, the file's
 * length and chunks, and no hash (each part's hash is of the part's text alone).
 */
export async function storeDocuments(store: ChunkReader): Promise<DocumentEntry[]> {
  const docs = await store.documents();
  const chars: number[] = [];
  for (const d of docs) chars.push(await documentChars(store, d));
  const shown = displayPaths(docs.map((d) => d.path ?? d.id));
  const files = foldParts(
    docs,
    (d, i): DocumentEntry => ({
      id: d.id,
      path: d.path === null ? d.id : (shown[i] as string),
      chars: chars[i]!,
      chunks: d.chunks,
      modified: d.ingestedAt ?? null,
      // `rlm repair`'s rebuilt records have no hash (the next ingest of the file sets it).
      ...(d.hash === '' ? {} : { hash: d.hash.slice(0, HASH_CHARS) }),
    }),
    (file, d, i) => {
      file.chars += chars[i]!;
      file.chunks = (file.chunks ?? 0) + d.chunks;
      const modified = d.ingestedAt ?? null;
      if (modified !== null && (file.modified === null || modified > file.modified)) file.modified = modified;
      delete file.hash;
    },
  );
  return markDuplicates(files);
}

/** The `doc:N` documents of a plain context (a text, or an array of texts). */
export function textDocuments(texts: readonly string[]): DocumentEntry[] {
  return markDuplicates(
    texts.map((text, i) => ({
      id: `doc:${i}`,
      path: `doc:${i}`,
      chars: text.length,
      chunks: 1,
      modified: null,
      hash: createHash('sha256').update(text).digest('hex').slice(0, HASH_CHARS),
    })),
  );
}

/** Files hashed at once by {@link fileDocuments}. */
const HASH_CONCURRENCY = 8;

/**
 * The documents of a run's --context files: what reading them measured, their hashes (read from the
 * files the first time they are asked for), and their chunk counts once `index` is built (null before:
 * counting chunks is chunking). A file the index holds in parts (`ID.p2`...) counts all of them.
 */
export async function fileDocuments(
  files: readonly ContextFileRef[],
  index: ChunkReader | null,
): Promise<DocumentEntry[]> {
  const chunks = new Map<string, number>();
  if (index !== null) {
    const own = new Set(files.map((f) => f.id));
    for (const d of await index.documents()) {
      const file = fileIdOf(d.id);
      const id = file !== d.id && !own.has(d.id) && own.has(file) ? file : d.id;
      chunks.set(id, (chunks.get(id) ?? 0) + d.chunks);
    }
  }
  const hashes: (string | undefined)[] = new Array(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      // A file changed since the run read it has no hash to give (its text is not the one read).
      hashes[i] = await files[i]!.text.hash().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, files.length) }, worker));
  return markDuplicates(
    files.map((f, i) => ({
      id: f.id,
      path: f.path,
      chars: f.text.chars,
      chunks: chunks.get(f.id) ?? null,
      modified: f.modified,
      ...(hashes[i] === undefined ? {} : { hash: hashes[i].slice(0, HASH_CHARS) }),
    })),
  );
}

/** Sets `duplicateOf` on each document whose text an earlier one already has (same hash and length). */
function markDuplicates(entries: DocumentEntry[]): DocumentEntry[] {
  const first = new Map<string, string>();
  for (const e of entries) {
    if (e.hash === undefined) continue;
    const key = `${e.hash}/${e.chars}`;
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, e.id);
    else e.duplicateOf = earlier;
  }
  return entries;
}
