import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/corpus.ts';

const STORE = new URL('../../memory/store.ts', import.meta.url).href;

/** Ingests and searches in a fresh process; reports whether vectra (and its tokenizer) got loaded. */
function loadsVectra(embedder: string | null): boolean {
  const dir = path.join(tempDir(), 'store');
  const script = `
    import { createRequire } from 'node:module';
    const { ChunkStore } = await import(${JSON.stringify(STORE)});
    const s = await ChunkStore.open(${JSON.stringify(dir)}, { create: true${embedder ? `, embedder: ${JSON.stringify(embedder)}` : ''} });
    await s.ingestText('a', 'rivers carry stones');
    const hits = await s.search('river');
    await s.close();
    const cache = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify({ hits: hits.length, vectra: cache.some((k) => k.includes('/node_modules/vectra/')) }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as { hits: number; vectra: boolean };
  expect(out.hits).toBe(1);
  return out.vectra;
}

describe('vectra', () => {
  it('is loaded only by stores with vectors', () => {
    expect(loadsVectra(null)).toBe(false);
    expect(loadsVectra('hash')).toBe(true);
  }, 60_000);
});
