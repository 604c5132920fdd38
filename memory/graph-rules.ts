/**
 * Rules of the chunk graph that every backend applies the same way: chunk and document ids, and which
 * links a person may set by hand.
 */
import { RlmError } from '../core/errors.ts';
import type { Link } from './types.ts';

/** The document and ordinal of a chunk id `DOCUMENT:ORDINAL`, or null when it is not one. */
export function parseChunkId(id: string): { document: string; ordinal: number } | null {
  const colon = id.lastIndexOf(':');
  if (colon <= 0) return null;
  const ordinal = Number(id.slice(colon + 1));
  if (!Number.isInteger(ordinal) || ordinal < 0) return null;
  return { document: id.slice(0, colon), ordinal };
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
  return docs.has(parseChunkId(link.from)?.document ?? '') || docs.has(parseChunkId(link.to)?.document ?? '');
}
