/** A tiny in-memory ChunkReader for sandbox tests. */
import type {
  ChunkReader,
  ChunkRecord,
  DocumentRecord,
  GrepOptions,
  Link,
  SearchOptions,
} from '../../memory/types.ts';

export interface FakeStore extends ChunkReader {
  touched: string[];
  searches: { query: string; opts: SearchOptions | undefined }[];
  greps: { pattern: string; opts: GrepOptions | undefined }[];
}

function chunk(id: string, document: string, ordinal: number, text: string): ChunkRecord {
  return {
    id,
    document,
    ordinal,
    start: 0,
    end: text.length,
    tokens: Math.ceil(text.length / 4),
    type: 'text',
    tags: ['t'],
    createdAt: '2025-01-01T00:00:00.000Z',
    text,
  };
}

export function fakeStore(): FakeStore {
  const chunks = new Map<string, ChunkRecord>([
    ['a:0', chunk('a:0', 'a', 0, 'The launch code is 1234.\nNothing else here.')],
    ['a:1', chunk('a:1', 'a', 1, 'Second chunk mentions the harbour.')],
    ['b:0', chunk('b:0', 'b', 0, 'Another document about harbours and ships.')],
  ]);
  const links: Link[] = [
    { from: 'a:0', to: 'a:1', type: 'follows', strength: 1 },
    { from: 'b:0', to: 'a:1', type: 'related_to', strength: 0.5 },
  ];
  const chunksOf = (documentId: string) => [...chunks.values()].filter((c) => c.document === documentId);
  const documents = (): DocumentRecord[] =>
    ['a', 'b'].map((id) => ({
      id,
      path: null,
      hash: '',
      bytes: 0,
      chunker: 'paragraph',
      chunks: chunksOf(id).length,
      tokens: chunksOf(id).reduce((n, c) => n + c.tokens, 0),
      ingestedAt: '2025-01-01T00:00:00.000Z',
      segment: 'seg-000001',
      first: 0,
    }));
  const store: FakeStore = {
    touched: [],
    searches: [],
    greps: [],
    stats() {
      return { documents: 2, chunks: chunks.size, links: links.length, tokens: 30, bytes: 100, schema: 1 };
    },
    documents,
    async readDocument(id, range) {
      const doc = documents().find((d) => d.id === id);
      if (!doc) return undefined;
      const whole = chunksOf(id)
        .map((c) => c.text)
        .join('');
      const start = range?.start ?? 0;
      const end = range?.end ?? whole.length;
      return { documents: [doc], text: whole.slice(start, end), start, end, length: whole.length };
    },
    getChunk(id) {
      return chunks.get(id);
    },
    documentChunks: chunksOf,
    neighbors(id, type) {
      return links.filter((l) => (l.from === id || l.to === id) && (type === undefined || l.type === type));
    },
    async search(query, opts) {
      store.searches.push({ query, opts });
      return [...chunks.values()]
        .filter((c) => c.text.toLowerCase().includes(query.toLowerCase()))
        .slice(0, opts?.k ?? 10)
        .map((c, i) => ({
          id: c.id,
          score: 1 / (i + 1),
          preview: c.text.slice(0, 20),
          document: c.document,
          path: null,
          tokens: c.tokens,
          tags: c.tags,
          type: c.type,
        }));
    },
    async grep(pattern, opts) {
      store.greps.push({ pattern, opts });
      if (pattern === 'explode')
        throw new Error(
          'grep failed reading /home/secret/store/segments/0001.jsonl\n    at Object.<anonymous> (/app/x.js:1:1)',
        );
      const re = new RegExp(
        opts?.literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern,
        opts?.ignoreCase ? 'i' : '',
      );
      const matches = [...chunks.values()]
        .filter((c) => re.test(c.text))
        .map((c) => ({
          id: c.id,
          offset: c.text.search(re),
          text: c.text.split('\n')[0]!,
          before: '',
          after: '',
        }));
      return { matches, truncated: false };
    },
    touch(ids) {
      store.touched.push(...ids);
    },
  };
  return store;
}
