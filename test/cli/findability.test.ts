import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { cli } from './helpers.ts';

const FILLER = 'Unrelated words about gardens, bridges and lanterns fill this part of the file. ';

async function setup() {
  const cwd = tempDir();
  const notes = path.join(cwd, 'notes');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(notes);
  writeFileSync(
    path.join(notes, 'auth.md'),
    `${FILLER.repeat(12)}The refresh token rotates every hour, and a stolen refresh token is revoked. ${FILLER.repeat(6)}\n`,
  );
  writeFileSync(path.join(notes, 'other.md'), `${FILLER.repeat(3)}\n`);
  const store = path.join(cwd, 'store');
  expect((await cli(['ingest', 'notes', '--store', store], { cwd })).code).toBe(0);
  return { cwd, store };
}

describe('finding things with the CLI', () => {
  it('search names the file and previews the matching passage, highlighted only on a terminal without NO_COLOR', async () => {
    const { cwd, store } = await setup();
    const plain = await cli(['search', 'refresh token', '--store', store, '-k', '1'], { cwd });
    const [head, preview] = plain.stdout.split('\n');
    expect(head).toMatch(/^auth-md-[0-9a-f]{8}:0 {2}[\d.]+ {2}notes\/auth\.md {2}\[/);
    expect(preview).toMatch(/^ {4}….*The refresh token rotates every hour/);
    expect(preview!.trim().length).toBeLessThanOrEqual(200);
    expect(plain.stdout).not.toContain('\x1b[');

    const tty = await cli(['search', 'refresh token', '--store', store, '-k', '1'], { cwd, tty: true });
    expect(tty.stdout).toContain('\x1b[1;31mrefresh\x1b[0m \x1b[1;31mtoken\x1b[0m');
    const noColor = await cli(['search', 'refresh token', '--store', store, '-k', '1'], {
      cwd,
      tty: true,
      env: { NO_COLOR: '1' },
    });
    expect(noColor.stdout).not.toContain('\x1b[');
  });

  it('search --document takes an id or a path from the working folder, and refuses one that names nothing', async () => {
    const { cwd, store } = await setup();
    const byPath = await cli(
      ['search', 'refresh token', '--store', store, '--document', 'notes/auth.md', '--json'],
      {
        cwd,
      },
    );
    const [hit] = byPath.json<{ results: { id: string; document: string }[] }>().results;
    expect(hit?.document).toMatch(/^auth-md-/);
    const byId = await cli(
      ['search', 'refresh token', '--store', store, '--document', hit!.document, '--json'],
      {
        cwd,
      },
    );
    expect(byId.json()).toEqual(byPath.json());
    for (const json of [[], ['--json']]) {
      const typo = await cli(
        [
          'search',
          'refresh token',
          '--store',
          store,
          '--document',
          hit!.document,
          '--document',
          'notes/auht.md',
          ...json,
        ],
        { cwd },
      );
      expect(typo.code).toBe(2);
      expect(typo.stdout).toBe('');
      expect(typo.stderr).toBe(
        'rlm: search: no document "notes/auht.md" in the store; give a document id or the path it was ingested from [BAD_INPUT]\n',
      );
    }
  });

  it('search --type memory keeps memories only; an unknown type says which are known', async () => {
    const { cwd, store } = await setup();
    expect((await cli(['remember', 'rotate the refresh token weekly', '--store', store], { cwd })).code).toBe(
      0,
    );
    const all = await cli(['search', 'refresh token', '--store', store, '--json'], { cwd });
    const documents = (r: typeof all) =>
      r.json<{ results: { document: string }[] }>().results.map((h) => h.document.replace(/-.*/, ''));
    expect(new Set(documents(all))).toEqual(new Set(['auth', 'mem']));
    const memories = await cli(['search', 'refresh token', '--store', store, '--type', 'memory', '--json'], {
      cwd,
    });
    expect(memories.code, memories.stderr).toBe(0);
    expect(documents(memories)).toEqual(['mem']);
    const bad = await cli(['search', 'refresh token', '--store', store, '--type', 'memories'], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'rlm: --type must be one of fact, decision, preference, pattern, note, code, text or memory [BAD_INPUT]\n',
    );
  });

  it('grep, peek and links name the file; unknown ids point to rlm ls', async () => {
    const { cwd, store } = await setup();
    const grep = await cli(['grep', 'stolen', '--store', store], { cwd });
    expect(grep.stdout).toMatch(/^notes\/auth\.md {2}auth-md-[0-9a-f]{8}:0:\d+: .*stolen refresh token/);
    const id = /(auth-md-[0-9a-f]{8}:0)/.exec(grep.stdout)![1]!;
    const peek = await cli(['peek', id, '--store', store], { cwd });
    expect(peek.stderr).toMatch(new RegExp(`^${id} {2}notes/auth\\.md {2}`));
    const links = await cli(['links', id, '--store', store], { cwd });
    expect(links.stderr).toBe(`${id}  notes/auth.md\n`);
    for (const command of ['peek', 'links']) {
      const missing = await cli([command, 'nope:3', '--store', store], { cwd });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(
        /no chunk or document with id nope:3: give a chunk id \(DOCUMENT:N\), a document id, a memory id .*rlm ls lists documents.*\[NOT_FOUND\]/,
      );
    }
    // rm fails as forget does, with --json too: one error line, nothing on stdout.
    for (const json of [[], ['--json']]) {
      const rm = await cli(['rm', 'nope', '--store', store, ...json], { cwd });
      expect(rm.code).toBe(1);
      expect(rm.stdout).toBe('');
      expect(rm.stderr).toBe('rlm: no document nope in the store (rlm ls lists ids and paths) [NOT_FOUND]\n');
    }
  });

  it('rlm ls lists documents with file, chunks, tokens and time', async () => {
    const { cwd, store } = await setup();
    const r = await cli(['ls', '--store', store], { cwd });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^notes\/auth\.md {2}1 chunk {2}\d+ tokens {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}auth-md-[0-9a-f]{8}$/,
    );
    expect(lines[1]).toMatch(/^notes\/other\.md /);
    const json = (await cli(['ls', '--store', store, '--json'], { cwd })).json<{
      documents: { path: string; modified: string }[];
    }>();
    expect(json.documents.map((d) => d.path)).toEqual([
      path.join(cwd, 'notes', 'auth.md'),
      path.join(cwd, 'notes', 'other.md'),
    ]);
    expect(Number.isNaN(Date.parse(json.documents[0]!.modified))).toBe(false);
  });
});
