/**
 * Stores written by rlm before schema 3 (JSON segment files), kept as fixtures with what that rlm read
 * from them (golden.json): test/fixtures/memory/legacy/README.md says how they were made.
 */
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DocumentRecord, Link, StoreStats } from '../../../memory/types.ts';
import { tempDir } from '../../helpers/temp.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/memory/legacy/', import.meta.url));

/** What the rlm that wrote a fixture read from it. */
export interface Golden {
  stats: StoreStats;
  documents: (DocumentRecord & { path: string | null })[];
  /** Every live chunk's neighbors, in the order that rlm gave them. */
  neighbors: Record<string, Link[]>;
  texts: Record<string, string>;
  /** Search results (id, score) for a few queries, k = 8. */
  searches: Record<string, { id: string; score: number }[]>;
}

export function golden(name: 'schema-1' | 'schema-2' | 'ingest-text'): Golden {
  return JSON.parse(readFileSync(path.join(FIXTURES, name, 'golden.json'), 'utf8')) as Golden;
}

/** A copy of a fixture store in a temp folder, with its golden figures. */
export function legacyStore(name: 'schema-1' | 'schema-2'): { dir: string; golden: Golden } {
  const dir = path.join(tempDir(), 'store');
  cpSync(path.join(FIXTURES, name, 'store'), dir, { recursive: true });
  return { dir, golden: golden(name) };
}

/** A chunk's links in a canonical order (the order of related_to links among themselves may differ). */
export function sortedLinks(links: readonly Link[]): Link[] {
  const key = (l: Link) => `${l.type} ${l.from} ${l.to} ${l.strength}`;
  return [...links].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The text of the ingest-text fixture's document `i`, as it was ingested (one commit each). */
export { docText } from '../../fixtures/memory/legacy/corpus.ts';
