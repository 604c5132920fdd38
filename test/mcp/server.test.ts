import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/mcp/server.ts';
import { sendJson, startFakeServer } from '../runtime/providers/fake-server.ts';
import { type Connected, connect } from './helpers/connect.ts';

let s: Connected;
beforeAll(async () => {
  s = await connect();
});
afterAll(() => s.close());

describe('createServer', () => {
  it('offers every rlm tool with input and output schemas', async () => {
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.description, t.name).toBeTruthy();
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
    }
    const answer = tools.find((t) => t.name === 'rlm_answer')!;
    expect(Object.keys(answer.inputSchema.properties ?? {}).sort()).toEqual(
      [
        'context',
        'max_depth',
        'max_iterations',
        'max_output_tokens',
        'model',
        'paths',
        'question',
        'store',
        'sub_model',
      ].sort(),
    );
    expect(answer.inputSchema.required).toEqual(['question']);
    expect(Object.keys(answer.outputSchema?.properties ?? {})).toEqual(
      expect.arrayContaining([
        'answer',
        'status',
        'iterations',
        'subCalls',
        'maxDepthReached',
        'usage',
        'elapsedMs',
      ]),
    );
  });

  it('marks read-only tools as such, and the ingest and memory tools as writing', async () => {
    const { tools } = await s.client.listTools();
    const readOnly = Object.fromEntries(tools.map((t) => [t.name, t.annotations?.readOnlyHint]));
    expect(readOnly).toEqual({
      rlm_answer: true,
      rlm_ingest: false,
      rlm_search: true,
      rlm_peek: true,
      rlm_grep: true,
      rlm_status: true,
      rlm_remember: false,
      rlm_recall: false, // recall reinforces the memories it returns
      rlm_forget: false,
      rlm_topics: true,
      rlm_claude_recall: true,
      rlm_claude_timeline: true,
      rlm_claude_projects: true,
    });
    expect(tools.find((t) => t.name === 'rlm_answer')?.annotations?.openWorldHint).toBe(true);
    expect(tools.find((t) => t.name === 'rlm_ingest')?.annotations?.destructiveHint).toBe(false);
  });

  it('tells the calling model what rlm_answer needs, costs and prefers', async () => {
    const { tools } = await s.client.listTools();
    const answer = tools.find((t) => t.name === 'rlm_answer')!.description ?? '';
    expect(answer).toContain('never sees this conversation: make the question self-contained');
    expect(answer).toContain('A call can take minutes and makes paid model calls');
    expect(answer).toContain('Do not paste large text into `context`: pass file or folder `paths`');
    const status = tools.find((t) => t.name === 'rlm_status')!.description ?? '';
    expect(status).toContain('working folder that relative paths resolve against');
    expect(s.client.getServerCapabilities()?.logging).toEqual({});
  });

  it('introduces itself with its name, version and instructions', () => {
    expect(s.client.getServerVersion()).toMatchObject({ name: 'rlm' });
    expect(s.client.getInstructions()).toContain('rlm_answer');
  });

  it('refuses a call with too many argument elements', async () => {
    const small = await connect({ limits: { maxInputElements: 10 } });
    try {
      const r = await small.call('rlm_answer', {
        question: 'q',
        context: Array.from({ length: 20 }, () => 'x'),
      });
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toMatch(/more than the maximum of 10 elements/);
    } finally {
      await small.close();
    }
  });

  it('rlm_answer sends max_output_tokens to the provider', async () => {
    const srv = await startFakeServer((_req, _i, res) =>
      sendJson(res, 200, {
        model: 'local',
        choices: [{ index: 0, message: { role: 'assistant', content: 'FINAL(42)' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 2 },
      }),
    );
    const c = await connect({ env: { OPENAI_BASE_URL: `${srv.url}/v1` } });
    try {
      const r = await c.call('rlm_answer', {
        question: 'q',
        context: 'text',
        model: 'openai:local',
        max_output_tokens: 55,
      });
      expect(r.structuredContent).toMatchObject({ answer: '42', status: 'final' });
      expect(srv.requests.map((q) => q.body.max_tokens)).toEqual([55]);
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('refuses relay: model specs (they write files and wait for a person)', async () => {
    const r = await s.call('rlm_answer', { question: 'q', context: 'text', model: 'relay:/tmp/x' });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toContain('relay: model specs are not available over MCP');
  });
});
