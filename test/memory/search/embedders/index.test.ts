import { describe, expect, it } from 'vitest';
import { HashingEmbedder } from '../../../../memory/search/embedders/hashing.ts';
import { createEmbedder } from '../../../../memory/search/embedders/index.ts';
import { OpenAIEmbedder } from '../../../../memory/search/embedders/openai.ts';

describe('createEmbedder', () => {
  it('builds hashing embedders', () => {
    const a = createEmbedder('hash', {});
    expect(a).toBeInstanceOf(HashingEmbedder);
    expect(a.dimensions).toBe(384);
    const b = createEmbedder('hash:256', {});
    expect(b.dimensions).toBe(256);
    expect(b.name).toBe('hash:256');
  });

  it('builds OpenAI-compatible embedders with names that identify the vector space', () => {
    const o = createEmbedder('openai:text-embedding-3-small', { OPENAI_API_KEY: 'k' });
    expect(o).toBeInstanceOf(OpenAIEmbedder);
    expect(o.name).toBe('openai:text-embedding-3-small');
    expect(o.dimensions).toBe(1536);
    const short = createEmbedder('openai:text-embedding-3-small@512', { OPENAI_API_KEY: 'k' });
    expect(short.name).toBe('openai:text-embedding-3-small@512');
    expect(short.dimensions).toBe(512);
    const ollama = createEmbedder('ollama:nomic-embed-text:latest', {});
    expect(ollama.name).toBe('ollama:nomic-embed-text:latest');
    expect(ollama.dimensions).toBe(768);
    const http = createEmbedder('http://127.0.0.1:8080/v1#bge-small', {});
    expect(http.name).toBe('http:http://127.0.0.1:8080/v1#bge-small');
    expect(http.dimensions).toBe(0);
  });

  it('needs OPENAI_API_KEY for api.openai.com but not for local or custom endpoints', () => {
    const message = 'OPENAI_API_KEY is not set (needed by the openai: embedder)';
    for (const env of [
      {},
      { OPENAI_API_KEY: '  ' },
      { OPENAI_BASE_URL: 'https://api.openai.com/v1' },
      { OPENAI_BASE_URL: 'https://API.OpenAI.com/v1/' },
    ]) {
      expect(() => createEmbedder('openai:text-embedding-3-small', env)).toThrow(
        expect.objectContaining({ code: 'BAD_INPUT', message }),
      );
    }
    for (const base of [
      'http://localhost:8080/v1',
      'http://127.0.0.1:11434/v1',
      'https://embeddings.example.com/v1',
    ]) {
      const e = createEmbedder('openai:text-embedding-3-small', { OPENAI_BASE_URL: base });
      expect(e).toBeInstanceOf(OpenAIEmbedder);
    }
  });

  it.each([
    'word2vec:foo',
    'hash:0',
    'hash:abc',
    'openai:',
    'openai:model@x',
    'http://127.0.0.1:8080/v1',
    'ftp:thing',
    '',
  ])('rejects %j with BAD_INPUT', (spec) => {
    expect(() => createEmbedder(spec, {})).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }));
  });
});
