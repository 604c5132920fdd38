/**
 * Rules of the chunk graph that every backend applies the same way: chunk and document ids, and which
 * links a person may set by hand.
 */
import { RlmError } from '../core/errors.ts';
import type { DocumentRecord, Link, LinkType } from './types.ts';

/** How many same-document chunks `neighbors(id, 'context_of')` lists, nearest first. */
const CONTEXT_FANOUT = 20;

/**
 * A chunk ordinal as chunk ids spell it: decimal digits, no sign and no leading zero. Ids are compared as
 * strings (hand-made links, access stats), so `1.0`, `01` or `0x1` naming chunk 1 would make a second
 * id for one chunk.
 */
const ORDINAL = /^(?:0|[1-9][0-9]*)$/;

/** The document and ordinal of a chunk id `DOCUMENT:ORDINAL`, or null when it is not one. */
export function parseChunkId(id: string): { document: string; ordinal: number } | null {
  const colon = id.lastIndexOf(':');
  if (colon <= 0) return null;
  const digits = id.slice(colon + 1);
  if (!ORDINAL.test(digits)) return null;
  const ordinal = Number(digits);
  // Past 2^31 no document has a chunk, and PostgreSQL's integer column would reject the query.
  if (ordinal > 0x7fffffff) return null;
  return { document: id.slice(0, colon), ordinal };
}

/** The document part of a chunk id (everything before its last colon), whatever follows the colon. */
function documentPart(id: string): string {
  return id.slice(0, Math.max(0, id.lastIndexOf(':')));
}

/** Throws BAD_INPUT unless `id` can name a document given by a caller (`ingestText`). */
export function checkDocumentId(id: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(id)) {
    throw new RlmError('BAD_INPUT', `document id "${id}" must be 1-100 letters, digits, '.', '_' or '-'`);
  }
}

/** Throws BAD_INPUT unless a hand-made link of this type and strength may be set. */
export function checkManualLink(type: string, strength: number): void {
  if (type !== 'supports' && type !== 'contradicts') {
    throw new RlmError(
      'BAD_INPUT',
      `link type must be supports or contradicts (the others are computed), got ${type}`,
    );
  }
  if (!(strength > 0 && strength <= 1))
    throw new RlmError('BAD_INPUT', `link strength must be in (0, 1], got ${strength}`);
}

/** Whether a hand-made link has an end in one of `docs` (it goes when either end is removed or replaced). */
export function touchesDocument(link: Link, docs: ReadonlySet<string>): boolean {
  if (docs.size === 0) return false;
  // By the text before the colon, so that a link a store kept from before ids were checked strictly
  // (`DOC:1.0`) still goes with its document.
  return docs.has(documentPart(link.from)) || docs.has(documentPart(link.to));
}

/**
 * The links a chunk has by its place in its document, which no backend stores: `follows` to the chunks
 * before and after it, and `context_of` to the nearest 20 of the same document (strength falls with
 * distance). Only those of `type` when given.
 */
export function positionLinks(document: string, ordinal: number, chunks: number, type?: LinkType): Link[] {
  const id = `${document}:${ordinal}`;
  const out: Link[] = [];
  const want = (t: LinkType) => type === undefined || type === t;
  if (want('follows')) {
    if (ordinal > 0) out.push({ from: id, to: `${document}:${ordinal - 1}`, type: 'follows', strength: 1 });
    if (ordinal + 1 < chunks)
      out.push({ from: `${document}:${ordinal + 1}`, to: id, type: 'follows', strength: 1 });
  }
  if (want('context_of')) {
    for (let d = 1, n = 0; n < CONTEXT_FANOUT && (ordinal - d >= 0 || ordinal + d < chunks); d++) {
      for (const o of [ordinal - d, ordinal + d]) {
        if (o >= 0 && o < chunks && n < CONTEXT_FANOUT) {
          out.push({ from: id, to: `${document}:${o}`, type: 'context_of', strength: 1 / (1 + d / 10) });
          n++;
        }
      }
    }
  }
  return out;
}

/** `ID.pN`: a later part of a file stored in parts (`ID`, `ID.p2`, `ID.p3`, …). */
export function isPart(id: string): boolean {
  return /\.p\d+$/.test(id);
}

/** A file's parts in order: `ID`, `ID.p2`, `ID.p3`, … */
export function byPart(a: DocumentRecord, b: DocumentRecord): number {
  const n = (d: DocumentRecord) => Number(/\.p(\d+)$/.exec(d.id)?.[1] ?? 1);
  return n(a) - n(b);
}

/** The parts after `id` among `candidates`, in order and without a gap: `ID.p2`, `ID.p3`, … */
export function partsAfter(id: string, candidates: DocumentRecord[]): DocumentRecord[] {
  const byId = new Map(candidates.map((d) => [d.id, d]));
  const out: DocumentRecord[] = [];
  for (let n = 2; ; n++) {
    const part = byId.get(`${id}.p${n}`);
    if (!part) return out;
    out.push(part);
  }
}

/** The file a document id belongs to: `ID` for `ID.p3`, any other id itself. */
export function fileIdOf(id: string): string {
  return partKey(id)[0];
}

/** A file's id and part number for a document id: `ID.p3` is part 3 of `ID`, any other id part 1 of itself. */
function partKey(id: string): [file: string, part: number] {
  const m = /^(.*)\.p(\d+)$/.exec(id);
  return m ? [m[1]!, Number(m[2])] : [id, 1];
}

/** Store order of document ids that share a path: a file's parts follow its first part by number (`ID.p10` after `ID.p9`). */
export function compareDocumentIds(a: string, b: string): number {
  const [fa, na] = partKey(a);
  const [fb, nb] = partKey(b);
  return fa < fb ? -1 : fa > fb ? 1 : na - nb;
}

/** How a document continues a file stored in parts, for grep (see {@link partLinks}). */
export interface PartLink {
  /** The part before it, whose scan it continues. */
  prevPart?: string;
  /** The part after it, which continues its scan. */
  nextPart?: string;
}

/**
 * The parts among `ids` that grep reads as one text with the parts next to them: a file's first part
 * `ID` and `ID.p2`, `ID.p3`, … after it without a gap, as readDocument(ID) reads them. A part whose file's
 * first part is not among `ids` has no link: it is read alone, as readDocument reads it by its own id.
 */
export function partLinks(ids: Iterable<string>): Map<string, PartLink> {
  const all = new Set(ids);
  const out = new Map<string, PartLink>();
  for (const id of all) {
    if (isPart(id)) continue;
    let prev = id;
    for (let n = 2; all.has(`${id}.p${n}`); n++) {
      const part = `${id}.p${n}`;
      out.set(prev, { ...out.get(prev), nextPart: part });
      out.set(part, { prevPart: prev });
      prev = part;
    }
  }
  return out;
}

/**
 * The file each later part among `ids` belongs to: `ID.p2`, `ID.p3`, … (without a gap, as readDocument(ID)
 * reads them) → `ID`, when `ID` is among `ids`. Ids that are no such part are not in the map.
 */
export function partOwners(ids: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, link] of partLinks(ids)) {
    if (link.prevPart !== undefined) out.set(id, out.get(link.prevPart) ?? link.prevPart);
  }
  return out;
}

/**
 * One entry per file of `docs`, in their order: `entry` makes it from each document that is no later
 * part of a file among them, and `addPart` folds each later part ({@link partOwners}) into its file's
 * entry. What the listings of a store (`rlm ls`, `list_documents()`) show a file stored in parts as.
 */
export function foldParts<E>(
  docs: readonly DocumentRecord[],
  entry: (doc: DocumentRecord, i: number) => E,
  addPart: (file: E, part: DocumentRecord, i: number) => void,
): E[] {
  const owners = partOwners(docs.map((d) => d.id));
  const files = new Map<string, E>();
  docs.forEach((d, i) => {
    if (!owners.has(d.id)) files.set(d.id, entry(d, i));
  });
  docs.forEach((d, i) => {
    const owner = owners.get(d.id);
    const file = owner === undefined ? undefined : files.get(owner);
    if (file !== undefined) addPart(file, d, i);
  });
  return [...files.values()];
}
