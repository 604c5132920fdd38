/**
 * Ids as every surface reads them (CLI peek/links/link, MCP rlm_peek, the sandbox's peek, get_chunk and
 * neighbors): a chunk id `DOCUMENT:N` names one chunk; a document id (a memory id `mem-…` included) or
 * the path a file was ingested from names the whole document, every part of a big file included.
 * Built on {@link ChunkReader} alone, so it works over any backend.
 */
import { RlmError } from '../core/errors.ts';
import type {
  Awaitable,
  ChunkReader,
  ChunkRecord,
  DocumentRecord,
  DocumentText,
  Link,
  LinkType,
  TextRange,
} from './types.ts';

/** The forms an id may take, for messages about an id that names nothing. */
const ID_FORMS =
  'a chunk id (DOCUMENT:N), a document id, a memory id (mem-…) or the path a file was ingested from';

/** What an id names: one chunk, or a whole document (or the slice of it asked for). */
export type ReadTarget = { kind: 'chunk'; chunk: ChunkRecord } | { kind: 'document'; read: DocumentText };

/** Reads what `id` names, `range` applying to a document (a chunk comes whole); undefined when nothing. */
export async function readTarget(
  store: ChunkReader,
  id: string,
  range?: TextRange,
): Promise<ReadTarget | undefined> {
  const chunk = await store.getChunk(id);
  if (chunk) return { kind: 'chunk', chunk };
  const read = await store.readDocument(id, range);
  return read ? { kind: 'document', read } : undefined;
}

/** NOT_FOUND for an id that names nothing, saying which forms are accepted and where ids come from. */
export function unknownId(id: string, where: string): RlmError {
  return new RlmError('NOT_FOUND', `no chunk or document with id ${id}: give ${ID_FORMS} (${where})`, { id });
}

/** What resolving a search's document filter needs of a store: its {@link Store.documentsNamed}. */
export interface DocumentNames {
  documentsNamed(idOrPath: string): Awaitable<DocumentRecord[]>;
}

/**
 * The ids of the documents a search's `document` filter names: each a document id or the path a file was
 * ingested from, tried also as `resolve` makes it (a path relative to the caller's folder). A name that
 * matches no document is refused (BAD_INPUT), as grep refuses it: a typo must not read as "no results".
 * A file stored in parts is named whole: its first part brings the others, in one lookup. A name already
 * brought along is not looked up again, so resolving ids this returned costs one lookup per file.
 */
export async function searchDocumentIds(
  store: DocumentNames,
  names: readonly string[],
  resolve: (name: string) => string = (name) => name,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const name of names) {
    if (ids.has(name)) continue;
    let docs = await store.documentsNamed(name);
    if (docs.length === 0 && resolve(name) !== name) docs = await store.documentsNamed(resolve(name));
    if (docs.length === 0)
      throw new RlmError(
        'BAD_INPUT',
        `search: no document ${JSON.stringify(name)} in the store; give a document id or the path it was ingested from`,
      );
    for (const doc of docs) ids.add(doc.id);
  }
  return [...ids];
}

/**
 * `opts` with its `document` filter as ids ({@link searchDocumentIds}): a store's search takes the paths
 * files were ingested from (relative ones against the process's folder) and refuses a name of nothing.
 */
export async function documentFilter<O extends { document?: string | string[] }>(
  store: DocumentNames,
  opts: O,
): Promise<O> {
  if (opts.document === undefined) return opts;
  const names = typeof opts.document === 'string' ? [opts.document] : opts.document;
  return { ...opts, document: await searchDocumentIds(store, names) };
}

/** The chunk a link end names: the chunk itself, or a document's first chunk (a memory's only one). */
export async function linkEnd(store: ChunkReader, id: string): Promise<string | undefined> {
  if (await store.getChunk(id)) return id;
  return (await store.getChunk(`${id}:0`)) ? `${id}:0` : undefined;
}

/**
 * The chunk a hand-made link's end names ({@link linkEnd}), or why there is none: a document with no
 * chunk (an empty file) has nothing to link (BAD_INPUT); an id that names nothing is NOT_FOUND.
 */
export async function requireLinkEnd(store: ChunkReader, id: string): Promise<string> {
  const end = await linkEnd(store, id);
  if (end !== undefined) return end;
  const read = await store.readDocument(id, { end: 0 });
  if (read?.documents[0]?.id === id && read.documents.every((d) => d.chunks === 0))
    throw new RlmError('BAD_INPUT', `document ${id} has no chunks (it is empty), so it cannot be linked`, {
      id,
    });
  throw unknownId(id, 'a document id stands for its first chunk');
}

/** Link types that relate chunks of different documents; follows and context_of stay inside one. */
const ACROSS: LinkType[] = ['related_to', 'supports', 'contradicts', 'summarizes'];
const BY_HAND = new Set<LinkType>(['supports', 'contradicts', 'summarizes']);

/**
 * The links of a whole document (all its parts): those of its chunks that leave it, plus the ones set by
 * hand inside it. follows and context_of, which only order its own chunks, are left out.
 */
export async function documentLinks(
  store: ChunkReader,
  documents: DocumentRecord[],
  type?: LinkType,
): Promise<Link[]> {
  const inside = new Set(documents.map((d) => d.id));
  const within = (chunkId: string) => inside.has(chunkId.slice(0, chunkId.lastIndexOf(':')));
  // One read per chunk (a store on a server answers each with a query), sorted into the order of ACROSS.
  const byType = new Map<LinkType, Link[]>(
    (type === undefined ? ACROSS : ACROSS.filter((a) => a === type)).map((t) => [t, []]),
  );
  for (const doc of documents) {
    for (let i = 0; i < doc.chunks; i++) {
      for (const l of await store.neighbors(`${doc.id}:${i}`, type)) {
        if (within(l.from) && within(l.to) && !BY_HAND.has(l.type)) continue;
        byType.get(l.type)?.push(l);
      }
    }
  }
  const seen = new Set<string>();
  const out: Link[] = [];
  for (const l of [...byType.values()].flat()) {
    const key = `${l.type} ${l.from} ${l.to}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(l);
  }
  return out;
}

/** Tags on a document read: what its records carry (ingest tags, a memory's tags), each once. */
export function documentTags(documents: DocumentRecord[]): string[] {
  return [...new Set(documents.flatMap((d) => d.tags ?? []))];
}
