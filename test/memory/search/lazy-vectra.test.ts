import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp.ts';

const STORE = new URL('../../../memory/files/store.ts', import.meta.url).href;

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
  });

  it('is optional: without it, a store with vectors says how to install it, and one without works', () => {
    const dir = path.join(tempDir(), 'store');
    // Resolving 'vectra' fails the way it does where the package is not installed.
    const script = `
      import { registerHooks } from 'node:module';
      registerHooks({
        resolve(specifier, context, next) {
          if (specifier !== 'vectra') return next(specifier, context);
          throw Object.assign(new Error("Cannot find package 'vectra' imported from " + context.parentURL), { code: 'ERR_MODULE_NOT_FOUND' });
        },
      });
      const { ChunkStore } = await import(${JSON.stringify(STORE)});
      const plain = await ChunkStore.open(${JSON.stringify(`${dir}-plain`)}, { create: true });
      await plain.ingestText('a', 'rivers carry stones');
      const hits = (await plain.search('river')).length;
      await plain.close();
      const err = await ChunkStore.open(${JSON.stringify(dir)}, { create: true, embedder: 'hash' }).catch((e) => e);
      console.log(JSON.stringify({ hits, code: err.code, message: err.message }));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { hits: number; code: string; message: string };
    expect(out.hits).toBe(1);
    expect(out.code).toBe('BAD_INPUT');
    expect(out.message).toMatch(/optional package vectra.*npm install vectra/);
  });
});
