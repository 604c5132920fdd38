/**
 * Every tool's structured output, on success and on error, against the outputSchema it publishes, as the
 * official SDK client sees it: a client that listed the tools validates each result and rejects one that
 * does not match (this is how `rlm_ingest`'s extra `removed` field broke every SDK client).
 *
 * The test walks ALL listed tools and fails for a tool without cases: a new tool gets its entries in
 * {@link CASES} (at least one success and one error) before the suite passes again.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';
import { serveHttp } from '../../src/mcp/http.ts';
import { createServer } from '../../src/mcp/server.ts';
import { createServerContext, type ServerContext } from '../../src/mcp/server-context.ts';
import { tempDir } from '../helpers/temp.ts';
import { fakeSandboxes } from '../runtime/helpers/fake-sandbox.ts';
import { scripted } from './helpers/rules.ts';

const dir = tempDir('rlm-mcp-schemas-');

/** What the cases may refer to: files and a store made before any call. */
interface Fixture {
  dir: string;
  /** A store folder (relative to `dir`) holding docs/. */
  store: string;
  /** A chunk id in that store. */
  chunk: string;
  /** A scripted model that answers at once, and one with no matching rule (a failed run). */
  model: string;
  failingModel: string;
  /** Memories in the store, each forgotten by one successful rlm_forget case. */
  memories: string[];
}

/** One call of a tool: `error` says whether the result must be a tool error. */
interface ToolCase {
  label: string;
  args: (f: Fixture) => Record<string, unknown>;
  error: boolean;
}

const ok = (label: string, args: ToolCase['args']): ToolCase => ({ label, args, error: false });
const fails = (label: string, args: ToolCase['args']): ToolCase => ({ label, args, error: true });

/** Per tool, the calls whose results are checked. Add a tool's cases here when you add the tool. */
const CASES: Record<string, ToolCase[]> = {
  rlm_answer: [
    ok('inline context', (f) => ({ question: 'What is it?', context: 'It is 42.', model: f.model })),
    ok('paths', (f) => ({ question: 'What is it?', paths: ['docs'], model: f.model })),
    ok('store', (f) => ({ question: 'What is it?', store: f.store, model: f.model })),
    fails('a run that fails carries its result', (f) => ({
      question: 'q',
      context: 'c',
      model: f.failingModel,
    })),
    fails('missing path', (f) => ({ question: 'q', paths: ['nope.txt'], model: f.model })),
    fails('bad arguments', () => ({ question: '' })),
  ],
  rlm_ingest: [
    ok('new store', () => ({ paths: ['docs'], store: 'fresh' })),
    ok('unchanged files', (f) => ({ paths: ['docs'], store: f.store })),
    fails('missing path', () => ({ paths: ['nope'], store: 'never' })),
  ],
  rlm_search: [
    ok('hits', (f) => ({ query: 'rocket launch', store: f.store })),
    ok('no hits', (f) => ({ query: 'zzzqqq', store: f.store, k: 3 })),
    fails('missing store', () => ({ query: 'x', store: 'missing' })),
  ],
  rlm_peek: [
    ok('one chunk', (f) => ({ id: f.chunk, store: f.store })),
    ok('several chunks, a range', (f) => ({ id: [f.chunk, f.chunk], start: 2, end: 9, store: f.store })),
    fails('unknown id', (f) => ({ id: 'no:1', store: f.store })),
  ],
  rlm_grep: [
    ok('matches', (f) => ({ pattern: 'budget|crew', store: f.store })),
    ok('truncated', (f) => ({ pattern: 'e', store: f.store, limit: 1 })),
    ok('context lines, character budget', (f) => ({
      pattern: 'the',
      store: f.store,
      context_lines: 2,
      max_chars: 100,
    })),
    fails('bad regex', (f) => ({ pattern: '(', store: f.store })),
  ],
  rlm_status: [
    ok('with store', (f) => ({ store: f.store })),
    ok('store problem listed', () => ({ store: 'missing' })),
    fails('unknown argument', () => ({ nope: 1 })),
  ],
  rlm_remember: [
    ok('a decision', (f) => ({
      text: 'We chose PostgreSQL for billing.',
      topic: 'architecture',
      store: f.store,
    })),
    fails('empty text', (f) => ({ text: '', store: f.store })),
    fails('unknown importance', (f) => ({ text: 'x', importance: 'urgent', store: f.store })),
  ],
  rlm_recall: [
    ok('hits', (f) => ({ query: 'billing database', store: f.store })),
    ok('archived too', (f) => ({ query: 'zzzqqq', store: f.store, archived: true })),
    fails('missing store', () => ({ query: 'x', store: 'missing' })),
  ],
  rlm_forget: [
    ok('one memory', (f) => ({ ids: [f.memories.shift() ?? 'mem-none-left'], store: f.store })),
    fails('unknown id', (f) => ({ ids: ['mem-nope'], store: f.store })),
  ],
  rlm_topics: [
    ok('topics', (f) => ({ store: f.store })),
    fails('missing store', () => ({ store: 'missing' })),
  ],
  rlm_claude_recall: [
    ok('no sessions imported', (f) => ({ query: 'flaky login test', store: f.store })),
    fails('missing store', () => ({ query: 'x', store: 'missing' })),
  ],
  rlm_claude_timeline: [
    ok('no sessions imported', (f) => ({ store: f.store })),
    fails('missing store', () => ({ store: 'missing' })),
  ],
  rlm_claude_projects: [
    ok('no sessions imported', (f) => ({ store: f.store })),
    fails('missing store', () => ({ store: 'missing' })),
  ],
};

let fixture: Fixture;

beforeAll(async () => {
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'launch.md'), '# Launch\n\nThe rocket launch is on Tuesday.\n');
  writeFileSync(join(dir, 'docs', 'budget.txt'), 'The budget is forty units. The crew has three members.\n');
  const store = await ChunkStore.open(join(dir, 'store'), { create: true, env: {} });
  await store.ingestPaths([join(dir, 'docs')]);
  const chunk = (await store.documentChunks(store.documents()[0]!.id))[0]!.id;
  const memories: string[] = [];
  for (const text of ['Deploys happen on Thursdays.', 'The team prefers tabs.'])
    memories.push((await store.remember({ text, topic: 'team' })).id);
  await store.close();
  fixture = {
    dir,
    store: 'store',
    chunk,
    model: scripted(dir, 'final.json', [{ depth: 0, reply: 'FINAL(42)' }]),
    failingModel: scripted(dir, 'none.json', [{ depth: 0, match: 'never matches', reply: 'x' }]),
    memories,
  };
});

function context(): ServerContext {
  return createServerContext({
    cwd: dir,
    env: {},
    log: () => {},
    run: { sandboxFactory: fakeSandboxes().factory },
    allowScriptedModels: true,
  });
}

/** A connected SDK client over one transport, and how to tear it down. */
interface Link {
  client: Client;
  close(): Promise<void>;
}

const TRANSPORTS: Record<string, () => Promise<Link>> = {
  'in-memory': async () => {
    const ctx = context();
    const server = createServer(ctx);
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'rlm-schema-test', version: '0' });
    await client.connect(clientSide);
    return {
      client,
      async close() {
        await client.close();
        await server.close();
        await ctx.close();
      },
    };
  },
  http: async () => {
    const ctx = context();
    const handle = await serveHttp(ctx, { port: 0 });
    const client = new Client({ name: 'rlm-schema-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(handle.url)));
    return {
      client,
      async close() {
        await client.close();
        await handle.close();
        await ctx.close();
      },
    };
  },
};

const validators = new AjvJsonSchemaValidator();

describe.each(Object.keys(TRANSPORTS))('structured output over %s', (transport) => {
  let link: Link;
  let tools: Tool[];
  beforeAll(async () => {
    link = await TRANSPORTS[transport]!();
    // Listing first makes the client validate every later result against the published schemas.
    tools = (await link.client.listTools()).tools;
  });
  afterAll(() => link.close());

  it('every listed tool has success and error cases', () => {
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) {
      const cases = CASES[tool.name] ?? [];
      expect(
        cases.filter((c) => !c.error),
        `${tool.name}: add success cases to CASES`,
      ).not.toHaveLength(0);
      expect(
        cases.filter((c) => c.error),
        `${tool.name}: add error cases to CASES`,
      ).not.toHaveLength(0);
      expect(tool.outputSchema, `${tool.name} publishes no outputSchema`).toBeDefined();
    }
    const listed = new Set(tools.map((t) => t.name));
    expect(Object.keys(CASES).filter((name) => !listed.has(name))).toEqual([]);
  });

  it('every result validates against the tool\u2019s published outputSchema', async () => {
    for (const tool of tools) {
      const valid = validators.getValidator(tool.outputSchema as Record<string, unknown>);
      for (const c of CASES[tool.name] ?? []) {
        const where = `${tool.name} (${c.label})`;
        // The SDK client throws when structured content does not match the schema it listed.
        const r = (await link.client.callTool({
          name: tool.name,
          arguments: c.args(fixture),
        })) as CallToolResult;
        expect(r.isError ?? false, `${where}: ${JSON.stringify(r.content)}`).toBe(c.error);
        if (!c.error) expect(r.structuredContent, `${where} has no structured content`).toBeDefined();
        if (r.structuredContent !== undefined) {
          const v = valid(r.structuredContent);
          expect(v.valid ? '' : v.errorMessage, where).toBe('');
        }
      }
    }
  });
});
