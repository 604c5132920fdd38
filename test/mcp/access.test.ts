import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { type CallToolResult, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';
import { serveHttp } from '../../src/mcp/http.ts';
import { type CreateServerOptions, createServer } from '../../src/mcp/server.ts';
import {
  createServerContext,
  type ServerContext,
  type ServerContextOptions,
} from '../../src/mcp/server-context.ts';
import { tempDir } from '../helpers/temp.ts';
import { fakeSandboxes } from '../runtime/helpers/fake-sandbox.ts';
import { textOf } from './helpers/connect.ts';
import { scripted } from './helpers/rules.ts';

// Real paths, since the fences compare paths with symlinks resolved (macOS /tmp is a link).
const base = realpathSync(tempDir('rlm-mcp-access-'));
const work = join(base, 'work');
const outside = join(base, 'outside');
let model: string;

beforeAll(() => {
  mkdirSync(join(work, 'docs'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(work, 'docs', 'a.txt'), 'The launch is on Tuesday.\n');
  writeFileSync(join(outside, 'secret.txt'), 'the secret is 1234\n');
  // A link inside the allowed folder that leads out of it.
  symlinkSync(join(outside, 'secret.txt'), join(work, 'docs', 'link.txt'));
  symlinkSync(outside, join(work, 'out-dir'));
  model = scripted(base, 'final.json', [{ depth: 0, reply: 'FINAL(done)' }]);
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function context(opts: ServerContextOptions = {}): ServerContext {
  const ctx = createServerContext({
    cwd: work,
    env: { RLM_MODEL: model },
    log: () => {},
    run: { sandboxFactory: fakeSandboxes().factory },
    ...opts,
  });
  cleanups.push(() => ctx.close());
  return ctx;
}

/** An in-memory client; with `roots`, it offers them (and can change them later). */
async function connect(ctx: ServerContext, roots?: string[], opts: CreateServerOptions = {}) {
  const server = createServer(ctx, opts);
  const client = new Client(
    { name: 'access-test', version: '0' },
    roots === undefined ? {} : { capabilities: { roots: { listChanged: true } } },
  );
  const current = { roots: roots ?? [] };
  if (roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: current.roots.map((r) => ({ uri: pathToFileURL(r).href, name: r })),
    }));
  }
  const [s, c] = InMemoryTransport.createLinkedPair();
  await server.connect(s);
  await client.connect(c);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    call,
    async setRoots(next: string[]) {
      current.roots = next;
      await client.sendRootsListChanged();
    },
  };
}

describe('file access: --allow-path', () => {
  it('reads inside the allowed folders and refuses, by name, what lies outside', async () => {
    const { call } = await connect(context({ allowPaths: ['.'] }));
    const ok = await call('rlm_answer', { question: 'q', paths: ['docs/a.txt'] });
    expect(ok.structuredContent).toMatchObject({ answer: 'done' });
    const secret = join(outside, 'secret.txt');
    const r = await call('rlm_answer', { question: 'q', paths: [secret] });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      `rlm_answer: ${secret} is outside the folders this server may read (${work}); ` +
        `to allow it, add --allow-path ${outside} to the server's command [ACCESS_DENIED]`,
    );
    const up = await call('rlm_answer', { question: 'q', paths: ['../outside'] });
    expect(textOf(up)).toContain(`../outside (${outside}) is outside the folders`);
  });

  it('follows symlinks before judging, both named and found inside a folder', async () => {
    const { call } = await connect(context({ allowPaths: ['.'] }));
    const named = await call('rlm_answer', { question: 'q', paths: ['out-dir'] });
    expect(textOf(named)).toContain(
      `out-dir (${join(work, 'out-dir')} -> ${outside}) is outside the folders`,
    );
    // A link found inside a named folder that leads out of it is skipped by the walk (as ingest skips
    // it), so the run reads the rest and never the secret.
    const found = await call('rlm_answer', { question: 'q', paths: ['docs'] });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent).toMatchObject({ answer: 'done' });
    expect(JSON.stringify(found)).not.toContain('1234');
  });

  it('fences stores and ingest too', async () => {
    const { call } = await connect(context({ allowPaths: ['.'] }));
    const store = join(outside, 'store');
    for (const [tool, args] of [
      ['rlm_ingest', { paths: ['docs/a.txt'], store }],
      ['rlm_ingest', { paths: [join(outside, 'secret.txt')], store: 'inside-store' }],
      ['rlm_search', { query: 'x', store }],
      ['rlm_grep', { pattern: 'x', store }],
      ['rlm_peek', { id: 'a:0', store }],
      ['rlm_answer', { question: 'q', store }],
    ] as const) {
      const r = await call(tool, args);
      expect(textOf(r), tool).toMatch(/is outside the folders this server may read.*\[ACCESS_DENIED\]$/);
    }
    const status = await call('rlm_status', { store });
    expect((status.structuredContent as { problems: string[] }).problems.join()).toContain('is outside');
    const fine = await call('rlm_ingest', { paths: ['docs/a.txt'], store: 'inside-store' });
    expect(fine.structuredContent).toMatchObject({ added: 1 });
  });

  it('fences what a store folder holds: links to the files of a store outside are refused, reads and writes', async () => {
    const victim = join(outside, 'victim');
    const setup = await connect(context({ allowPaths: [outside] }));
    const kept = await setup.call('rlm_remember', { text: 'the deploy key is in vault/prod', store: victim });
    expect(kept.isError).toBeFalsy();
    // A store inside the allowed folder made of links to the outside store's files, as a cloned
    // repository could carry them; and one whose segments folder alone is such a link.
    const evil = join(work, 'evil-store');
    mkdirSync(evil);
    for (const name of readdirSync(victim)) symlinkSync(join(victim, name), join(evil, name));
    const { call } = await connect(context({ allowPaths: ['.'] }));
    for (const [tool, args] of [
      ['rlm_recall', { query: 'deploy key', store: 'evil-store' }],
      ['rlm_search', { query: 'deploy key', store: 'evil-store' }],
      ['rlm_remember', { text: 'INJECTED', store: 'evil-store' }],
    ] as const) {
      const r = await call(tool, args);
      expect(textOf(r), tool).toMatch(
        /evil-store\/\S+ \(.* -> .*victim.*\) is outside the folders .*\[ACCESS_DENIED\]$/,
      );
    }
    expect(
      readFileSync(join(victim, readdirSync(victim).find((n) => n.startsWith('memories-'))!), 'utf8'),
    ).not.toContain('INJECTED');
    // Links that stay inside the fence are a store's own business.
    const linked = join(work, 'linked-store');
    mkdirSync(linked);
    const fine = await call('rlm_remember', { text: 'a note', store: 'inside-store-2' });
    expect(fine.isError).toBeFalsy();
    for (const name of readdirSync(join(work, 'inside-store-2')))
      symlinkSync(join(work, 'inside-store-2', name), join(linked, name));
    const r = await call('rlm_recall', { query: 'note', store: 'linked-store' });
    expect(r.isError, textOf(r)).toBeFalsy();
  });

  it('judges a link to nothing by where it leads: writing through it is refused and creates nothing', async () => {
    const { call } = await connect(context({ allowPaths: ['.'] }));
    const made = await call('rlm_remember', { text: 'a note', store: 'planted-store' });
    expect(made.isError).toBeFalsy();
    const store = join(work, 'planted-store');
    const journal = readdirSync(store).find((n) => n.startsWith('memories-'))!;
    rmSync(join(store, journal));
    const target = join(outside, 'planted.jsonl');
    symlinkSync(target, join(store, journal));
    const r = await call('rlm_remember', { text: 'PLANTED', store: 'planted-store' });
    expect(textOf(r)).toContain(
      `planted-store/${journal} (${join(store, journal)} -> ${target}) is outside the folders`,
    );
    expect(existsSync(target)).toBe(false);
  });

  it('leaves alone the links of a folder a store shares with other files', async () => {
    const project = join(work, 'project');
    mkdirSync(join(project, 'deps', 'a'), { recursive: true });
    symlinkSync(outside, join(project, 'outside-docs'));
    symlinkSync(outside, join(project, 'deps', 'a', 'global-link'));
    // Made there on purpose (as `--create` does: a tool call makes no store among other files).
    await (await ChunkStore.open(project, { create: true })).close();
    const seed = await connect(context({ allowPaths: [base] }));
    expect(
      (await seed.call('rlm_remember', { text: 'kept in the project', store: project })).isError,
    ).toBeFalsy();
    const { call } = await connect(context({ allowPaths: ['.'] }));
    const r = await call('rlm_recall', { query: 'kept project', store: 'project' });
    expect(r.isError, textOf(r)).toBeFalsy();
  });

  it('fences the file of a scripted model a call names, when the server allows them at all', async () => {
    const { call } = await connect(context({ allowPaths: ['.'], allowScriptedModels: true }));
    const outsideRules = scripted(outside, 'rules.json', [{ depth: 0, reply: 'FINAL(from outside)' }]);
    const refused = await call('rlm_answer', { question: 'q', context: 'c', model: outsideRules });
    expect(textOf(refused)).toMatch(
      /rules\.json .*is outside the folders this server may read.*\[ACCESS_DENIED\]$/,
    );
    const insideRules = scripted(work, 'rules.json', [{ depth: 0, reply: 'FINAL(from inside)' }]);
    const fine = await call('rlm_answer', { question: 'q', context: 'c', model: insideRules });
    expect(fine.structuredContent).toMatchObject({ answer: 'from inside' });
  });

  it('rlm_status reports the working folder and the fences', async () => {
    const fenced = await connect(context({ allowPaths: ['docs'] }));
    const r = await fenced.call('rlm_status', {});
    expect(r.structuredContent).toMatchObject({
      workingFolder: work,
      fileAccess: { allowedFolders: [join(work, 'docs')], roots: null },
    });
    const open = await connect(context());
    expect((await open.call('rlm_status', {})).structuredContent).toMatchObject({
      fileAccess: { allowedFolders: null, roots: null },
    });
  });
});

describe('file access: MCP roots', () => {
  it('honours the client roots, and their changes', async () => {
    const { call, setRoots } = await connect(context(), [join(work, 'docs')]);
    expect((await call('rlm_answer', { question: 'q', paths: ['docs/a.txt'] })).isError).toBeFalsy();
    const secret = join(outside, 'secret.txt');
    const r = await call('rlm_answer', { question: 'q', paths: [secret] });
    expect(textOf(r)).toBe(
      `rlm_answer: ${secret} is outside the client's roots (${join(work, 'docs')}); to allow it, have the ` +
        `client share a root that holds it, or start the server with --allow-path ${outside} (honoured ` +
        'whatever the client says about roots) [ACCESS_DENIED]',
    );
    // Told that the roots changed, the server asks the client for them: wait until it has the answer.
    const rootsSeen = async (roots: string[]) => {
      const status = async () =>
        (await call('rlm_status', {})).structuredContent as { fileAccess: { roots: string[] } };
      while ((await status()).fileAccess.roots.join('\n') !== roots.join('\n')) {
        // The server has not heard back yet: ask again.
      }
    };
    await setRoots([outside]);
    await rootsSeen([outside]);
    expect((await call('rlm_answer', { question: 'q', paths: [secret] })).isError).toBeFalsy();
    await setRoots([]);
    await rootsSeen([]);
    expect(textOf(await call('rlm_answer', { question: 'q', paths: [secret] }))).toContain(
      `${secret} cannot be read: the client declares MCP roots but shares none; to allow it, have the ` +
        `client share a root that holds it, or start the server with --allow-path ${outside} `,
    );
  });

  it('suggests the folder itself for a folder, and quotes it for the shell', async () => {
    const odd = join(base, "it's here");
    mkdirSync(odd, { recursive: true });
    const { call } = await connect(context(), [join(work, 'docs')]);
    const r = await call('rlm_search', { query: 'x', store: odd });
    expect(textOf(r)).toContain(`--allow-path '${base}/it'\\''s here' (honoured`);
  });

  it('an explicit --allow-path is honoured whatever the client declares about roots', async () => {
    const secret = join(outside, 'secret.txt');
    // Declared but none listed (what the MCP Inspector does): the operator's folders still open.
    const none = await connect(context({ allowPaths: [outside] }), []);
    expect(
      (await none.call('rlm_answer', { question: 'q', paths: [secret] })).structuredContent,
    ).toMatchObject({ answer: 'done' });
    // Listed roots elsewhere neither narrow nor widen the operator's fence.
    const elsewhere = await connect(context({ allowPaths: [outside] }), [join(work, 'docs')]);
    expect((await elsewhere.call('rlm_answer', { question: 'q', paths: [secret] })).isError).toBeFalsy();
    const r = await elsewhere.call('rlm_answer', { question: 'q', paths: ['docs/a.txt'] });
    expect(textOf(r)).toContain(`is outside the folders this server may read (${outside})`);
    // rlm_status still shows what the client declared.
    expect((await none.call('rlm_status', {})).structuredContent).toMatchObject({
      fileAccess: { allowedFolders: [outside], roots: [] },
    });
  });

  it('narrows the HTTP default fence (the working folder), which no operator chose', async () => {
    const { call } = await connect(context(), [join(work, 'docs')], { fenceToCwd: true });
    writeFileSync(join(work, 'top.txt'), 'top\n');
    const r = await call('rlm_answer', { question: 'q', paths: ['top.txt'] });
    expect(textOf(r)).toContain(`is outside the client's roots (${join(work, 'docs')})`);
  });
});

describe('file access: HTTP', () => {
  it('reads only the working folder by default', async () => {
    const ctx = context();
    const handle = await serveHttp(ctx, { port: 0 });
    cleanups.unshift(() => handle.close());
    const client = new Client({ name: 'access-http', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(handle.url)));
    cleanups.unshift(() => client.close());
    const call = async (args: Record<string, unknown>) =>
      (await client.callTool({ name: 'rlm_answer', arguments: args })) as CallToolResult;
    expect((await call({ question: 'q', paths: ['docs/a.txt'] })).structuredContent).toMatchObject({
      answer: 'done',
    });
    const r = await call({ question: 'q', paths: [join(outside, 'secret.txt')] });
    expect(textOf(r)).toContain(`is outside the folders this server may read (${work})`);
  });
});

describe('bounded paths', () => {
  it('refuses paths holding more bytes than one call reads, pointing to a store', async () => {
    const { call } = await connect(context({ limits: { maxPathsBytes: 10 } }));
    const r = await call('rlm_answer', { question: 'q', paths: ['docs/a.txt'] });
    expect(textOf(r)).toBe(
      'rlm_answer: paths hold more than 10 bytes of files: more than one call reads; ingest them once ' +
        'with rlm_ingest and pass `store`, or name fewer files [BAD_INPUT]',
    );
    // rlm_ingest builds stores to be large: it has its own, larger bound.
    expect((await call('rlm_ingest', { paths: ['docs/a.txt'], store: 's' })).isError).toBeFalsy();
    const ingest = await connect(context({ limits: { maxIngestBytes: 10 } }));
    expect(textOf(await ingest.call('rlm_ingest', { paths: ['docs/a.txt'], store: 's' }))).toBe(
      'rlm_ingest: paths hold more than 10 bytes of files: ingest them in parts, or with `rlm ingest` ' +
        'in a terminal [BAD_INPUT]',
    );
  });

  it('refuses paths with no files in them', async () => {
    mkdirSync(join(work, 'empty', '.hidden'), { recursive: true });
    writeFileSync(join(work, 'empty', '.hidden', 'x.txt'), 'hidden');
    const { call } = await connect(context());
    const r = await call('rlm_answer', { question: 'q', paths: ['empty'] });
    expect(textOf(r)).toBe(
      'rlm_answer: no files to read in empty (dot-folders and node_modules are skipped) [BAD_INPUT]',
    );
  });

  it('refuses a walk past the entry bound', async () => {
    const { call } = await connect(context({ limits: { maxPathsEntries: 1 } }));
    const r = await call('rlm_answer', { question: 'q', paths: ['.'] });
    expect(textOf(r)).toBe(
      'rlm_answer: paths hold more than 1 files and folders: name narrower paths [BAD_INPUT]',
    );
  });

  it('refuses `/` with the default bounds instead of reading the disk', async () => {
    const { call } = await connect(context());
    for (const tool of ['rlm_answer', 'rlm_ingest']) {
      const r = await call(
        tool,
        tool === 'rlm_answer' ? { question: 'q', paths: ['/'] } : { paths: ['/'], store: 's2' },
      );
      expect(r.isError, tool).toBe(true);
      expect(textOf(r), tool).toMatch(/paths hold more than .* \[BAD_INPUT\]$/);
    }
  });
});
