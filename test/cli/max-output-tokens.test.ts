/**
 * `--max-output-tokens N` / `RLM_MAX_OUTPUT_TOKENS`: `rlm answer` and `rlm exec --model` send the cap with
 * every model request, checked against a loopback OpenAI-compatible server.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { type FakeServer, sendJson, startFakeServer } from '../runtime/providers/fake-server.ts';
import { cli } from './helpers.ts';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function openai(content: string): Promise<FakeServer> {
  server = await startFakeServer((_req, _i, res) =>
    sendJson(res, 200, {
      model: 'local',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    }),
  );
  return server;
}

describe('max output tokens', () => {
  it('rlm answer sends --max-output-tokens, and RLM_MAX_OUTPUT_TOKENS without the flag', async () => {
    const srv = await openai('FINAL(42)');
    const doc = path.join(tempDir(), 'doc.txt');
    writeFileSync(doc, 'some text\n');
    const env = { OPENAI_BASE_URL: `${srv.url}/v1`, RLM_MAX_OUTPUT_TOKENS: '99' };
    const args = ['answer', 'q?', '--context', doc, '--model', 'openai:local', '--json'];
    const flagged = await cli([...args, '--max-output-tokens', '123'], { env });
    expect(flagged.json()).toMatchObject({ answer: '42', status: 'final' });
    expect(srv.requests.at(-1)?.body.max_tokens).toBe(123);
    const fromEnv = await cli(args, { env });
    expect(fromEnv.code).toBe(0);
    expect(srv.requests.at(-1)?.body.max_tokens).toBe(99);
    const bad = await cli([...args, '--max-output-tokens', '0'], { env });
    expect(bad.code).toBe(2);
  });

  it('rlm exec --model sends it with each sub-call', async () => {
    const srv = await openai('pong');
    const r = await cli(['exec', '-', '--model', 'openai:local', '--max-output-tokens', '7', '--json'], {
      env: { OPENAI_BASE_URL: `${srv.url}/v1` },
      stdin: 'FINAL(llm_query("ping") + " " + rlm_query_batched(["a"])[0])',
    });
    expect(r.json()).toMatchObject({ ok: true, final: 'pong pong' });
    expect(srv.requests.map((q) => q.body.max_tokens)).toEqual([7, 7]);
  });
});
