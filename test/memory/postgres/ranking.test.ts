/**
 * The PostgreSQL store ranks like the folder store: same analyzer, same BM25 (k1, b, idf, length norm),
 * same typo expansion; with an embedder, the same cosine ranking of vectors (pgvector, on PGlite) and
 * the same fusion. Shown on a real corpus (this repository's documentation and source, a mix of
 * prose and code) and 50 fixed queries: both give the same top 5, up to ties (equal scores in either
 * order), with the same scores.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { PostgresStore } from '../../../memory/postgres/store.ts';
import type { Store } from '../../../memory/store-api.ts';
import type { SearchHit } from '../../../memory/types.ts';
import { type PgliteServer, startPglite } from '../../helpers/pglite.ts';
import { freshSchemaUrl, postgresAvailable } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const CORPUS = [
  'README.md',
  'ARCHITECTURE.md',
  'memory/SCHEMA.md',
  'memory',
  'core',
  'src/cli',
  'src/mcp',
].map((p) => path.join(ROOT, p));

const QUERIES = [
  'how does grep stop a slow regex',
  'memory decay weight importance',
  'store lock held by another writer',
  'manifest rename is the commit',
  'BM25 idf document frequency',
  'typo tolerance damerau levenshtein',
  'recall score recency half life',
  'consolidate memories into a summary',
  'access stats batched log',
  'related links signature terms',
  'chunk ids document ordinal',
  'segment text column utf-8',
  'embedder vectors hybrid search',
  'reciprocal rank fusion',
  'markdown heading path section',
  'transcript turn chunker',
  'ignore rules gitignore node_modules',
  'binary file skipped note',
  'token count cl100k_base tiktoken',
  'repair rebuilds derived files',
  'MCP server tools schemas',
  'allow path roots fence',
  'HTTP transport bearer token',
  'exit codes usage error',
  'json output shapes search results',
  'peek chunk neighbors links',
  'claude code sessions import',
  'hooks session start',
  'remember topic importance tags',
  'forget deletes memory',
  'archive restore memories',
  'store copy between backends',
  'postgres url schema password',
  'stemmer french english',
  'stop words analyzer',
  'camelCase identifier split',
  'fuzzy vocabulary letter mask',
  'postings varint delta',
  'top k heap ties',
  'passage preview highlight',
  'worker thread terminate timeout',
  'context lines before after',
  'journal fold segment',
  'killed process crash consistent',
  'atomic write fsync rename',
  'progress phase commit bytes',
  'prune vanished files',
  'file parts big file stream',
  'statement timeout trigram',
  'recall since until filters',
];

function topWithTies(hits: SearchHit[]): { id: string; score: number }[] {
  return hits.map((h) => ({ id: h.id, score: h.score }));
}

/**
 * Ingests the corpus into both stores and checks, for each of the 50 queries, that the PostgreSQL
 * store's top 5 are the folder store's up to ties, with scores equal to `digits` decimals.
 */
async function agree(
  folder: Store,
  pg: Store,
  opts: { mode?: 'bm25' | 'vector' | 'hybrid'; digits: number },
): Promise<void> {
  expect(QUERIES).toHaveLength(50);
  const a = await folder.ingestPaths(CORPUS);
  const b = await pg.ingestPaths(CORPUS);
  expect(b).toMatchObject({ documents: a.documents, chunks: a.chunks, tokens: a.tokens });
  let agreed = 0;
  const mode = opts.mode ? { mode: opts.mode } : {};
  for (const q of QUERIES) {
    const fs = topWithTies(await folder.search(q, { k: 10, touch: false, ...mode }));
    const db = topWithTies(await pg.search(q, { k: 10, touch: false, ...mode }));
    const n = Math.min(5, fs.length);
    expect(db.length, q).toBeGreaterThanOrEqual(n);
    for (let i = 0; i < n; i++) {
      // The same score at each rank (sums in another order differ in the last bits at most)...
      expect(db[i]!.score, `${q} #${i + 1}`).toBeCloseTo(fs[i]!.score, opts.digits);
      // ...and the same chunk, or one the other store scores equally (a tie, in either order).
      const same = fs.find((h) => h.id === db[i]!.id);
      expect(same?.score, `${q} #${i + 1}: ${db[i]!.id}`).toBeCloseTo(db[i]!.score, opts.digits);
    }
    agreed++;
  }
  expect(agreed).toBe(50);
}

async function folderStore(embedder?: string): Promise<Store> {
  const root = tempDir();
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const folder = await ChunkStore.open(path.join(root, 'store'), {
    create: true,
    ...(embedder ? { embedder } : {}),
  });
  onTestFinished(() => folder.close());
  return folder;
}

describe.skipIf(!postgresAvailable('postgres ranking'))(
  'PostgreSQL search ranks like the folder store',
  () => {
    it('gives the same top 5, up to ties, with the same scores, for 50 queries over a real corpus', async () => {
      const pg = await PostgresStore.open(freshSchemaUrl(), { create: true });
      onTestFinished(() => pg.close());
      await agree(await folderStore(), pg, { digits: 9 });
    }, 300_000);
  },
);

describe('PostgreSQL vector search ranks like the folder store', () => {
  let server: PgliteServer;
  beforeAll(async () => {
    server = await startPglite();
  }, 120_000);
  afterAll(() => server?.stop());

  // pgvector keeps 4-byte floats, the folder store's index 6 decimals: cosines agree to 5.
  for (const mode of ['vector', 'hybrid'] as const) {
    it(`gives the same top 5 in ${mode} mode for the 50 queries (hash embedder, pgvector on PGlite)`, async () => {
      const pg = await PostgresStore.open(server.storeUrl(), { create: true, embedder: 'hash' });
      onTestFinished(() => pg.close());
      await agree(await folderStore('hash'), pg, { mode, digits: 5 });
    }, 600_000);
  }
});
