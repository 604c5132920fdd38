/**
 * An OpenAI-compatible embeddings endpoint on 127.0.0.1 that a test can take down and bring back: while
 * `alive` it answers with the local hashing embedder's vectors, otherwise with a 400 (not retried).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { HashingEmbedder } from '../../../memory/search/embedders/hashing.ts';

export interface EmbedderServer {
  /** The embedder spec naming it (`http://127.0.0.1:PORT/v1#fake@128`). */
  spec: string;
  /** Whether it answers. */
  alive: boolean;
}

/** Starts the endpoint, closed when the test ends. */
export async function embedderServer(dimensions = 128): Promise<EmbedderServer> {
  const hashing = new HashingEmbedder({ dimensions });
  const state = { alive: true };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', async () => {
      if (!state.alive) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"model not loaded"}}');
        return;
      }
      const { input } = JSON.parse(body) as { input: string[] };
      const vectors = await hashing.embed(input);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: vectors.map((v, index) => ({ index, embedding: Array.from(v) })) }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  onTestFinished(
    () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    spec: `http://127.0.0.1:${port}/v1#fake@${dimensions}`,
    get alive() {
      return state.alive;
    },
    set alive(v: boolean) {
      state.alive = v;
    },
  };
}
