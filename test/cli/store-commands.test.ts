import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PART_BYTES } from '../../memory/ingest/file-parts.ts';
import { tempDir } from '../helpers/temp.ts';
import { writeSampleCorpus } from '../memory/helpers/corpus.ts';
import { legacyStore } from '../memory/helpers/legacy.ts';
import { cli } from './helpers.ts';

/** A file of this repository, by its path from the root. */
const repoFile = (rel: string) => path.resolve(import.meta.dirname, '../..', rel);

describe('rlm store commands', () => {
  it('ingest, search, peek, grep, links, link, stats and rm print the CONTRACTS.md JSON shapes', async () => {
    const root = tempDir();
    const corpus = writeSampleCorpus(root);
    const store = path.join(root, 'store');

    const ingest = await cli(['ingest', corpus, '--store', store, '--json']);
    expect(ingest.code).toBe(0);
    const report = ingest.json();
    expect(Object.keys(report).sort()).toEqual([
      'added',
      'chunks',
      'documents',
      'elapsedMs',
      'links',
      'removed',
      'skipped',
      'tokens',
      'updated',
    ]);
    expect(report).toMatchObject({ documents: 4, added: 4, updated: 0, skipped: 0, removed: 0 });
    expect(ingest.stderr).toContain('rlm: 1 binary file skipped (--verbose lists them)');

    const again = await cli(['ingest', corpus, '--store', store, '--json']);
    expect(again.json()).toMatchObject({ added: 0, skipped: 4 });

    const search = await cli(['search', 'flimflam keys', '--store', store, '-k', '3', '--json']);
    expect(search.code).toBe(0);
    const results = search.json<{ results: Record<string, unknown>[] }>().results;
    expect(results.length).toBeGreaterThan(0);
    expect(Object.keys(results[0]!).sort()).toEqual(['document', 'id', 'path', 'preview', 'score', 'tags']);
    const id = results[0]!.id as string;
    const file = results[0]!.path as string;
    expect(path.isAbsolute(file) && file.startsWith(corpus)).toBe(true);

    const peek = await cli(['peek', id, '--store', store, '--json']);
    expect(Object.keys(peek.json()).sort()).toEqual([
      'document',
      'id',
      'links',
      'path',
      'tags',
      'text',
      'tokens',
    ]);
    expect(peek.json()).toMatchObject({ path: file });
    expect(peek.json<{ text: string }>().text).toContain('flimflam');

    const grep = await cli(['grep', 'quark\\w+', '--store', store, '--json']);
    const matches = grep.json<{ matches: Record<string, unknown>[] }>().matches;
    expect(matches).toHaveLength(1);
    expect(Object.keys(matches[0]!).sort()).toEqual(['id', 'offset', 'path', 'text']);
    expect(path.dirname(matches[0]!.path as string)).toBe(corpus);

    const other = (await cli(['search', 'zephyrine', '--store', store, '--json'])).json<{
      results: { id: string }[];
    }>().results[0]!.id;
    expect((await cli(['link', id, other, '--type', 'supports', '--store', store])).code).toBe(0);
    const links = await cli(['links', other, '--type', 'supports', '--store', store, '--json']);
    expect(links.json()).toEqual({
      id: other,
      path: expect.stringContaining(corpus),
      links: [{ from: id, to: other, type: 'supports', strength: 1 }],
    });

    const ls = await cli(['ls', '--store', store, '--json']);
    const listed = ls.json<{ documents: Record<string, unknown>[] }>().documents;
    expect(listed).toHaveLength(4);
    expect(Object.keys(listed[0]!).sort()).toEqual(['chunks', 'id', 'modified', 'path', 'tokens']);
    expect(listed.map((d) => d.path)).toContain(file);

    const stats = await cli(['stats', '--store', store, '--json']);
    expect(stats.json()).toMatchObject({ documents: 4, schema: 3 });

    const doc = peek.json<{ document: string }>().document;
    expect((await cli(['rm', doc, '--store', store, '--json'])).json()).toEqual({
      removed: true,
      ids: [doc],
      summaries: [],
      restored: [],
    });
    expect((await cli(['stats', '--store', store, '--json'])).json()).toMatchObject({ documents: 3 });
    expect((await cli(['rm', doc, '--store', store])).code).toBe(1);
  });

  it('uses exit 2 and one clear line for usage errors', async () => {
    const root = tempDir();
    const cases: [string[], RegExp][] = [
      [[], /^usage: rlm <command>/],
      [['nope'], /unknown command 'nope'/],
      [['search', 'x'], /--store DIR\|URL is required/],
      [['search', 'x', '--store', path.join(root, 'missing')], /no rlm store at/],
      [['ingest', '--store', path.join(root, 's')], /give at least one file/],
      [
        ['ingest', path.join(root, 'absent.txt'), '--store', path.join(root, 's')],
        /no such file or directory/,
      ],
      [['search', 'x', '--store', root, '--bogus'], /Unknown option '--bogus'/],
      [['ingest', root, '--store', path.join(root, 's'), '--chunker', 'words'], /--chunker must be one of/],
      [['link', 'a:0', 'b:0', '--store', root], /--type supports or --type contradicts is required/],
      [['repair', '--store', root], /no rlm store at .*nothing to repair/],
      [['search', '', '--store', root], /the query is empty/],
      [['search', 'x', '--store', root, '-k', '0'], /-k must be an integer >= 1/],
      [
        ['ingest', root, '--store', path.join(root, 's'), '--tag', ''],
        /--tag: a tag is empty or only spaces/,
      ],
      [
        ['ingest', root, '--store', path.join(root, 's'), '--tag', 'a', '--tag', ' '],
        /--tag: a tag is empty/,
      ],
      [['search', 'x', '--store', root, '--tag', ''], /--tag: a tag is empty or only spaces/],
      [
        ['ingest', root, '--store', path.join(root, 's'), '--chunk-tokens', '100', '--overlap-tokens', '200'],
        /--overlap-tokens must be smaller/,
      ],
      [['trace', 'show', path.join(root, 'none.jsonl')], /no trace file at/],
      // A negative number after a flag reaches the flag's own check, as with `--flag=-1`.
      [
        [
          'answer',
          'q',
          '--context',
          repoFile('memory/SCHEMA.md'),
          '--model',
          `scripted:${repoFile('examples/schema-version.json')}`,
          '--max-depth',
          '-1',
        ],
        /--max-depth must be an integer >= 0, got "-1"/,
      ],
      [['recall', 'x', '--store', root, '-k', '-3'], /-k must be an integer >= 1, got '-3'/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      // The usage goes with the error that no command is: to stderr, like it.
      const usage = args.length === 0;
      expect(r.stderr.trim().split('\n').length, r.stderr).toBeLessThanOrEqual(usage ? 32 : 1);
      expect(r.stdout).toBe('');
    }
  });

  it('suggests a command that works to create a missing store: with --create in a folder of other files', async () => {
    const root = tempDir();
    const empty = path.join(root, 'empty');
    mkdirSync(empty);
    const busy = path.join(root, 'busy');
    mkdirSync(busy);
    writeFileSync(path.join(busy, 'notes.md'), '# notes\n');
    const missing = await cli(['search', 'x', '--store', empty]);
    expect(missing.stderr).toContain(`(create one with \`rlm ingest PATH --store ${empty}\`)`);
    const other = await cli(['search', 'x', '--store', busy]);
    expect(other.stderr).toContain(`(create one with \`rlm ingest PATH --store ${busy} --create\`)`);
    // The suggestion works there: without --create, ingest refuses the folder.
    expect((await cli(['ingest', path.join(busy, 'notes.md'), '--store', busy])).code).toBe(2);
    expect((await cli(['ingest', path.join(busy, 'notes.md'), '--store', busy, '--create'])).code).toBe(0);
  });

  it('leaves nothing behind when the input is wrong, and names a file given as a store', async () => {
    const root = tempDir();
    const store = path.join(root, 'never');
    const r = await cli(['ingest', path.join(root, 'nope'), '--store', store]);
    expect(r.code).toBe(2);
    expect(existsSync(store)).toBe(false);
    writeFileSync(path.join(root, 'file.md'), '# hi\n');
    for (const args of [
      ['ingest', path.join(root, 'file.md'), '--store', path.join(root, 'file.md')],
      ['repair', '--store', path.join(root, 'file.md')],
    ]) {
      const bad = await cli(args);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr).toMatch(/^rlm: store path .*file\.md is a file, not a folder \[BAD_INPUT\]\n$/);
    }
  });

  it('repair rebuilds a corrupted store from the CLI', async () => {
    const root = tempDir();
    const store = path.join(root, 'store');
    await cli(['ingest', writeSampleCorpus(root), '--store', store]);
    writeFileSync(path.join(store, 'segments', 'seg-000001.bm25'), '{');
    const broken = await cli(['search', 'flimflam', '--store', store]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/seg-000001\.bm25 is corrupt.*\[STORE_CORRUPT\]/);
    expect((await cli(['repair', '--store', store, '--json'])).json()).toMatchObject({ documents: 4 });
    expect(
      (await cli(['search', 'flimflam', '--store', store, '--json'])).json<{ results: unknown[] }>().results
        .length,
    ).toBeGreaterThan(0);
  });

  it('prints help for every command and the command list', async () => {
    const list = await cli(['--help']);
    expect(list.code).toBe(0);
    for (const c of [
      'answer',
      'exec',
      'ingest',
      'search',
      'peek',
      'grep',
      'links',
      'link',
      'ls',
      'stats',
      'rm',
      'repair',
      'serve',
      'bench',
      'trace',
    ]) {
      expect(list.stdout).toContain(`  ${c}`);
    }
    for (const c of [
      'ingest',
      'search',
      'peek',
      'grep',
      'links',
      'link',
      'ls',
      'stats',
      'rm',
      'repair',
      'answer',
      'trace',
    ]) {
      const r = await cli([c, '--help']);
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toMatch(/^usage: rlm /);
    }
  });

  it('grep on a store written before text columns says how to make it faster, and repair does', async () => {
    const { dir: store } = legacyStore('schema-1');
    const fresh = await cli(['grep', 'quasar \\w+', '--store', store]);
    expect(fresh.stdout).toMatch(/quasar/);
    expect(fresh.stderr).toBe('');
    const segments = path.join(store, 'segments');
    for (const f of readdirSync(segments).filter((f) => f.endsWith('.text'))) rmSync(path.join(segments, f));
    const old = await cli(['grep', 'quasar \\w+', '--store', store]);
    expect(old.stdout).toBe(fresh.stdout);
    expect(old.stderr).toMatch(
      /written by an older rlm and read the slow way; `rlm repair --store .*` makes grep/,
    );
    expect((await cli(['repair', '--store', store])).code).toBe(0);
    const repaired = await cli(['grep', 'quasar \\w+', '--store', store]);
    expect(repaired.stdout).toBe(fresh.stdout);
    expect(repaired.stderr).toBe('');
  });

  it('grep --count counts every match per document, with no limit, and --document takes a path', async () => {
    const root = tempDir();
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const logs = path.join(root, 'logs');
    mkdirSync(logs);
    writeFileSync(path.join(logs, 'a.log'), 'ERR-1 x ERR-2\n'.repeat(150));
    writeFileSync(path.join(logs, 'b.log'), 'ok\nERR-3\n');
    const store = path.join(root, 'store');
    expect((await cli(['ingest', logs, '--store', store])).code).toBe(0);
    const counted = await cli(['grep', 'ERR-\\d', '-c', '--store', store, '--json']);
    expect(counted.json()).toEqual({
      counts: {
        matches: 301,
        lines: 151,
        documents: [
          { id: expect.stringMatching(/^a-log-/), path: path.join(logs, 'a.log'), matches: 300, lines: 150 },
          { id: expect.stringMatching(/^b-log-/), path: path.join(logs, 'b.log'), matches: 1, lines: 1 },
        ],
      },
    });
    const text = await cli([
      'grep',
      'ERR-\\d',
      '--count',
      '--store',
      store,
      '--document',
      path.join(logs, 'b.log'),
    ]);
    expect(text.stdout).toBe(`${path.join(logs, 'b.log')}:1\n`);
    expect(text.stderr).toBe('rlm: 1 match on 1 line in 1 document\n');
    const typo = await cli(['grep', 'ERR', '--store', store, '--document', path.join(logs, 'c.log')]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('no document');
  });

  it('grep reads a file stored in parts as one: -c prints one line for it, a match across a seam is found', async () => {
    const root = tempDir();
    const file = path.join(root, 'big.log');
    const lines = Array.from({ length: 64_000 }, (_, i) => `line ${i} of the big log, elephant\n`);
    const text = lines.join('');
    expect(text.length).toBeGreaterThan(PART_BYTES);
    writeFileSync(file, text);
    const store = path.join(root, 'store');
    expect((await cli(['ingest', file, '--store', store])).code).toBe(0);
    const docs = (await cli(['ls', '--store', store, '--json'])).json<{
      documents: { id: string; parts?: number }[];
    }>().documents;
    // ls shows the file once, its two parts counted.
    expect(docs).toEqual([expect.objectContaining({ parts: 2 })]);

    const counted = await cli(['grep', 'elephant', '-c', '--store', store]);
    expect(counted.stdout).toBe(`${file}:64000\n`);
    expect(counted.stderr).toBe('rlm: 64000 matches on 64000 lines in 1 document\n');
    // The first part ends after the last line end in its 2 MiB.
    const n = text.slice(0, text.lastIndexOf('\n', PART_BYTES - 1) + 1).split('\n').length - 1;
    const first = docs[0]!.id;
    const across = await cli(['grep', `elephant\\nline ${n} `, '--store', store]);
    expect(across.stdout.split('\n')).toHaveLength(2);
    expect(across.stdout.startsWith(`${file}  ${first}:`)).toBe(true);
    expect(across.stdout.endsWith(`: line ${n - 1} of the big log, elephant\n`)).toBe(true);
  });
});
