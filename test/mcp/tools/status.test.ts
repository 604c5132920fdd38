import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp.ts';
import { connect } from '../helpers/connect.ts';
import { scripted } from '../helpers/rules.ts';

const dir = tempDir('rlm-mcp-status-');

interface Status {
  server: { name: string; version: string };
  defaults: { model: string | null; subModel: string | null; store: string | null };
  providers: { name: string; configured: boolean; detail: string }[];
  store: { dir: string; documents: number } | null;
  limits: { run: Record<string, number | null>; input: Record<string, number> };
  problems: string[];
}

describe('rlm_status', () => {
  it('reports defaults, providers, store totals and limits', async () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'claude'), '#!/bin/sh\n');
    chmodSync(join(bin, 'claude'), 0o755);
    const model = scripted(dir, 'm.json', [{ reply: 'FINAL(x)' }]);
    const s = await connect({
      cwd: dir,
      env: { RLM_MODEL: model, RLM_STORE: 'st', ANTHROPIC_API_KEY: 'k', PATH: bin, RLM_MAX_DEPTH: '3' },
      limits: { maxContextChars: 1234 },
    });
    try {
      await s.call('rlm_ingest', { paths: [join(dir, 'm.json')] });
      const r = await s.call('rlm_status', {});
      const st = r.structuredContent as unknown as Status;
      expect(st.server.name).toBe('rlm');
      expect(st.server.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(st.defaults).toEqual({ model, subModel: null, store: 'st' });
      const byName = Object.fromEntries(st.providers.map((p) => [p.name, p.configured]));
      expect(byName).toEqual({ anthropic: true, openai: false, 'claude-code': true, scripted: true });
      // Without --allow-scripted a call may not name one, whatever the server's default is.
      expect(st.providers.find((p) => p.name === 'scripted')?.detail).toContain(
        'as the server default only: calls may name them when the server runs with --allow-scripted',
      );
      expect(st.store).toMatchObject({ dir: join(dir, 'st'), documents: 1 });
      expect(st.limits.run).toMatchObject({ maxDepth: 3, maxIterations: 20, maxTokens: null });
      expect(st.limits.input.maxContextChars).toBe(1234);
      expect(st.problems).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('lists configuration problems instead of failing', async () => {
    const s = await connect({ cwd: dir, env: { RLM_SUB_MODEL: 'openai:gpt-x' } });
    try {
      const r = await s.call('rlm_status', { store: 'missing-store' });
      expect(r.isError).toBeFalsy();
      const st = r.structuredContent as unknown as Status;
      expect(st.store).toBeNull();
      expect(st.problems).toEqual([
        'no default model: set RLM_MODEL or pass `model` to rlm_answer',
        'model openai:gpt-x: OPENAI_API_KEY is not set (needed by openai:gpt-x)',
        expect.stringMatching(/^store missing-store: no rlm store at .* \[STORE_MISSING\]$/),
      ]);
    } finally {
      await s.close();
    }
  });
});
