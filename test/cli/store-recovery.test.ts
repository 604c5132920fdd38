import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';
import { repairAgain } from '../../src/cli/commands/admin.ts';
import { tempDir } from '../helpers/temp.ts';
import { writeSampleCorpus } from '../memory/helpers/corpus.ts';
import { cli } from './helpers.ts';

// An embedding endpoint that answers every request with a 400 (not retried): a dead or misconfigured
// embedder. Only the probe a store sends once when it is made with an embedder gets an answer at
// `/alive/v1`: an embedder that died after its store was made.
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url?.startsWith('/alive/') && body.includes('dimension probe')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [{ index: 0, embedding: [1, 0, 0, 0, 0, 0, 0, 0] }] }));
        return;
      }
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"model not loaded"}}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

describe('a store whose embedder died', () => {
  it('still ingests and searches with BM25, warning, and repair --embedder none removes vectors', async () => {
    const root = tempDir();
    const doc = path.join(root, 'a.md');
    writeFileSync(doc, '# Rivers\n\nThe river carries stones to the sea.\n');
    const store = path.join(root, 'store');
    const spec = `${url.replace('/v1', '/alive/v1')}#dead-model@8`;

    const first = await cli(['ingest', doc, '--store', store, '--embedder', spec]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^1 added/);
    expect(first.stderr).toMatch(
      /rlm: warning: the embedder .*dead-model.* failed .*searchable with BM25.*rlm repair --embedder none/,
    );

    const search = await cli(['search', 'river stones', '--store', store, '--json']);
    expect(search.code, search.stderr).toBe(0);
    expect(search.json<{ results: unknown[] }>().results).toHaveLength(1);
    expect(search.stderr).toMatch(/warning: the embedder .* failed .*results are BM25 only/);

    // A repair that needs the dead embedder changes nothing and says what to do.
    const stuck = await cli(['repair', '--store', store]);
    expect(stuck.code).toBe(1);
    expect(stuck.stderr).toMatch(/nothing was changed.*--embedder none/);

    const none = await cli(['repair', '--store', store, '--embedder', 'none']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toMatch(/removed the embedder/);
    const after = await cli(['search', 'river stones', '--store', store]);
    expect(after.stderr).toBe('');
    expect(after.stdout).toMatch(/a\.md/);
    // And a working embedder can be set again.
    expect((await cli(['repair', '--store', store, '--embedder', 'hash'])).code).toBe(0);
    expect((await cli(['search', 'river', '--store', store, '--mode', 'vector'])).code).toBe(0);
  });
});

describe('an embedder that is down when a store is created', () => {
  // The same dead server named the three ways an OpenAI-compatible embedder can be: one behaviour.
  const forms = (): [string, string, Record<string, string>][] => [
    ['http://…#model (dimensions unknown until it answers)', `${url}#dead-model`, {}],
    ['ollama:MODEL (dimensions known)', 'ollama:nomic-embed-text', { OLLAMA_BASE_URL: url }],
    ['openai:MODEL with OPENAI_BASE_URL', 'openai:dead-model', { OPENAI_BASE_URL: url }],
  ];

  it('never stops the ingest: BM25 works, one warning says how to add vectors later', async () => {
    for (const [form, spec, env] of forms()) {
      const root = tempDir();
      onTestFinished(() => rmSync(root, { recursive: true, force: true }));
      const doc = path.join(root, 'a.md');
      writeFileSync(doc, '# Rivers\n\nThe river carries stones to the sea.\n');
      const store = path.join(root, 'store');
      const r = await cli(['ingest', doc, '--store', store, '--embedder', spec], { env });
      expect(r.code, `${form}: ${r.stderr}`).toBe(0);
      expect(r.stdout, form).toMatch(/^1 added/);
      expect(r.stderr, form).toMatch(
        /^rlm: warning: the embedder \S+ failed \(.*model not loaded.*\): .*searchable with BM25.*`rlm repair --store \S+ --embedder \S+`/m,
      );
      const search = await cli(['search', 'river stones', '--store', store, '--json'], { env });
      expect(search.json<{ results: unknown[] }>().results, form).toHaveLength(1);
    }
  });
});

describe('a command that created a store and then failed', () => {
  it('leaves no store folder behind', async () => {
    const root = tempDir();
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const doc = path.join(root, 'a.md');
    writeFileSync(doc, 'text\n');
    const cases: string[][] = [
      ['ingest', doc, '--embedder', 'nope:x'],
      ['remember', 'a fact', '--decay-rate', '5'],
      ['remember', 'a fact', '--multipliers', 'critical=oops'],
    ];
    for (const [i, args] of cases.entries()) {
      const store = path.join(root, `store-${i}`);
      const r = await cli([...args, '--store', store]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(existsSync(store), args.join(' ')).toBe(false);
    }
    // The library too: a store that could not be set up is not left half-made.
    const lib = path.join(root, 'lib');
    await expect(ChunkStore.open(lib, { create: true, embedder: 'nope:x' })).rejects.toThrow(
      /unknown embedder/,
    );
    expect(existsSync(lib)).toBe(false);
  });
});

describe('rlm repair with unreadable chunks', () => {
  function damaged() {
    const root = tempDir();
    const corpus = writeSampleCorpus(root);
    const store = path.join(root, 'store');
    return { root, corpus, store };
  }

  it('lists what it would drop and changes nothing without --yes; asks on a terminal; --yes drops', async () => {
    const { corpus, store } = damaged();
    expect((await cli(['ingest', corpus, '--store', store])).code).toBe(0);
    writeFileSync(path.join(store, 'segments', 'seg-000001.chunks'), 'garbage');

    const refused = await cli(['repair', '--store', store]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/4 documents cannot be kept \(chunks unreadable\); ingest again:\n {2}\//);
    expect(refused.stderr).toContain(path.join(corpus, 'guide.md'));
    // The command to run again is the one given, with --yes; a dry run drops nothing, so says "would drop".
    expect(refused.stderr).toContain(`nothing was changed; run \`rlm repair --store ${store} --yes\``);
    expect(refused.stderr).toMatch(/^- would drop document \S+ \(.*guide\.md\): its chunks are missing$/m);
    expect(refused.stderr).not.toContain('dropped document');
    const fromEnv = await cli(['repair'], { env: { RLM_STORE: store } });
    expect(fromEnv.stderr).toContain('nothing was changed; run `rlm repair --yes`');

    const no = await cli(['repair', '--store', store], { tty: true, stdin: 'n\n' });
    expect(no.code).toBe(1);
    expect(no.stderr).toContain('drop them and repair the rest? [y/N] ');

    const yes = await cli(['repair', '--store', store], { tty: true, stdin: 'y\n' });
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toMatch(/^repaired: 0 documents/);

    // The files can simply be ingested again.
    const again = await cli(['ingest', corpus, '--store', store, '--json']);
    expect(again.json()).toMatchObject({ documents: 4, added: 4 });
  });

  it('lists a lost memory apart from the files: it has none to ingest, it can only be remembered again', async () => {
    const root = tempDir();
    const store = path.join(root, 'store');
    const file = path.join(root, 'a.md');
    writeFileSync(file, '# Rivers\n\nThe river carries stones to the sea.\n');
    expect((await cli(['ingest', file, '--store', store])).code).toBe(0);
    const id = (await cli(['remember', 'Answers in French', '--store', store])).stdout.trim();
    // A repair folds the memory journal into a segment, where a damaged chunk file loses the memory.
    expect((await cli(['repair', '--store', store])).code).toBe(0);
    for (const f of readdirSync(path.join(store, 'segments')))
      if (f.endsWith('.chunks')) writeFileSync(path.join(store, 'segments', f), 'garbage');

    const refused = await cli(['repair', '--store', store]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `rlm: 1 document cannot be kept (chunks unreadable); ingest again:\n  ${file}\n` +
        `rlm: 1 memory cannot be kept (unreadable); a memory cannot be recovered, remember it again:\n  ${id}\n`,
    );
    expect(refused.stderr).not.toContain('(no file)');
  });
});

describe('repairAgain', () => {
  it('gives the command as it was given, with --yes, and never a PostgreSQL password', () => {
    expect(repairAgain('my store', 'hash')).toBe("rlm repair --store 'my store' --embedder hash --yes");
    expect(repairAgain(undefined, undefined)).toBe('rlm repair --yes');
    expect(repairAgain('postgres://ana:s3cret@db.example:5432/rlm?schema=s', undefined)).toBe(
      "rlm repair --store 'postgres://ana:***@db.example:5432/rlm?schema=s' --yes",
    );
  });
});
