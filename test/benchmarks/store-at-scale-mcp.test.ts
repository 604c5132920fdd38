import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { measureServerIngest } from '../../benchmarks/store-at-scale-mcp.ts';
import { tempDir } from '../helpers/temp.ts';

const BIN = fileURLToPath(new URL('../../bin/rlm.js', import.meta.url));

describe('measureServerIngest', () => {
  it('ingests through an rlm serve of its own and reads its memory', async () => {
    const dir = tempDir('rlm-bench-served-');
    const docs = join(dir, 'docs');
    mkdirSync(docs);
    for (let i = 0; i < 5; i++)
      writeFileSync(join(docs, `n${i}.md`), `# Note ${i}\n\nThe value is ${i * 7}.\n`);
    const store = join(dir, 'store');
    const r = await measureServerIngest(BIN, docs, store);
    expect(r.ms).toBeGreaterThan(0);
    if (existsSync('/proc/self/status')) {
      // A Node process with the MCP SDK and a store loaded: tens of MB, and its peak at least what it holds.
      expect(r.rssMB).toBeGreaterThan(30);
      expect(r.rssMB).toBeGreaterThanOrEqual(r.afterMB);
    } else {
      expect(r.rssMB).toBeNaN();
    }
    // The store is the benchmark's scratch: gone after the call.
    expect(existsSync(store)).toBe(false);
  }, 60_000);

  it('fails loudly when the server refuses the ingest', async () => {
    const dir = tempDir('rlm-bench-served-');
    await expect(measureServerIngest(BIN, join(dir, 'missing'), join(dir, 'store'))).rejects.toThrow(
      /rlm_ingest failed: .*no such file or directory/,
    );
  }, 60_000);
});
