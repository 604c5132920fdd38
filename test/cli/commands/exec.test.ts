import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import exec, { splitBlocks, splitSourceBlocks } from '../../../src/cli/commands/exec.ts';
import type { CliIO } from '../../../src/cli/io.ts';
import { loadInput } from '../../../src/runtime/input.ts';
import { tempDir } from '../../helpers/temp.ts';
import { cli } from '../helpers.ts';

const dir = tempDir('rlm-exec-');

function fakeIO(stdin = '', env: NodeJS.ProcessEnv = {}): CliIO & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    stdin: Readable.from([stdin]),
    env,
    cwd: dir,
    out: () => out,
    err: () => err,
  };
}

function file(name: string, text: string): string {
  writeFileSync(path.join(dir, name), text);
  return name;
}

describe('splitBlocks', () => {
  it('splits at // --- lines and drops empty blocks', () => {
    expect(splitBlocks('a\n// ---\nb\n// ---   \n')).toEqual(['a', 'b']);
    expect(splitBlocks('one')).toEqual(['one']);
  });

  it('keeps the file line each block starts on', () => {
    expect(splitSourceBlocks('a\nb\n// ---\n\n// ---\nc')).toEqual([
      { code: 'a\nb', line: 1 },
      { code: 'c', line: 6 },
    ]);
  });
});

describe('rlm exec', () => {
  it('prints stdout and the final answer', async () => {
    const io = fakeIO();
    const code = await exec([file('a.js', 'print("hello")\nFINAL("done")')], io);
    expect(code).toBe(0);
    expect(io.out()).toBe('hello\nFINAL: done\n');
  });

  it('prints the CONTRACTS.md JSON with --json, with the context loaded', async () => {
    const io = fakeIO();
    file('ctx.txt', 'alpha\nbeta NEEDLE\n');
    const code = await exec(
      [
        file('b.js', "const m = grep('NEEDLE'); print(m[0].text); FINAL(context.length)"),
        '--context',
        'ctx.txt',
        '--json',
      ],
      io,
    );
    expect(code).toBe(0);
    const out = JSON.parse(io.out());
    expect(out).toMatchObject({ ok: true, stdout: 'beta NEEDLE\n', final: '18', error: null });
    expect(Object.keys(out.stats)).toEqual(['cpuMs', 'wallMs']);
  });

  it('runs // --- blocks in one session so declarations persist', async () => {
    const io = fakeIO();
    const code = await exec(
      [file('c.js', 'const x = 20\n// ---\nconst y = x + 1\n// ---\nprint(y * 2)'), '--json'],
      io,
    );
    expect(code).toBe(0);
    const out = JSON.parse(io.out());
    expect(out.stdout).toBe('42\n');
    expect(out.blocks).toHaveLength(3);
  });

  it('exits 1 with the error and its position in the file when the last block fails', async () => {
    const io = fakeIO();
    const code = await exec([file('d.js', 'print(1)\n// ---\nconst a = 1;\n  a.constructor'), '--json'], io);
    expect(code).toBe(1);
    const out = JSON.parse(io.out());
    expect(out.ok).toBe(false);
    expect(out.error).toEqual({
      code: 'VALIDATION',
      message: expect.stringContaining('constructor'),
      line: 4,
      column: 4,
      rule: 'prototype-access',
      block: 2,
    });
    expect(out.blocks[1].error).toMatchObject({ line: 4, column: 4 });
  });

  it('a failed middle block fails the run: top-level ok, error and exit code say so', async () => {
    const src = file('mid.js', 'print(1)\n// ---\n\nconst x = ;\n// ---\nprint(2)');
    const io = fakeIO();
    expect(await exec([src, '--json'], io)).toBe(1);
    const out = JSON.parse(io.out());
    expect(out).toMatchObject({ ok: false, stdout: '1\n2\n', final: null });
    expect(out.error).toMatchObject({ code: 'SYNTAX', line: 4, column: 10, block: 2 });
    expect(out.blocks.map((b: { ok: boolean }) => b.ok)).toEqual([true, false, true]);

    const text = fakeIO();
    expect(await exec([src], text)).toBe(1);
    expect(text.out()).toBe('1\n2\n');
    expect(text.err()).toMatch(/^rlm: exec: at 4:11 \(block 2\): SyntaxError: .* \[SYNTAX\]\n$/);
    expect(text.err().trim().split('\n')).toHaveLength(1);
  });

  it('writes errors to stderr without --json as every error line is, with a 1-based column', async () => {
    const io = fakeIO();
    expect(await exec([file('e.js', 'null.x')], io)).toBe(1);
    expect(io.err()).toBe(
      "rlm: exec: at 1:6: TypeError: Cannot read properties of null (reading 'x') [RUNTIME]\n",
    );
  });

  it('reads code from stdin with -', async () => {
    const io = fakeIO('print(6 * 7)');
    expect(await exec(['-'], io)).toBe(0);
    expect(io.out()).toBe('42\n');
  });

  it('several --context files make context an array', async () => {
    const io = fakeIO();
    file('one.txt', 'first');
    file('two.txt', 'second');
    await exec(
      [file('f.js', 'print(context.length, context[1])'), '--context', 'one.txt', '--context', 'two.txt'],
      io,
    );
    expect(io.out()).toBe('2 second\n');
  });

  it('backs the store helpers with --store', async () => {
    const { ChunkStore } = await import('../../../memory/files/store.ts');
    const storeDir = path.join(dir, 'store');
    const store = await ChunkStore.open(storeDir, { create: true });
    await store.ingestText('notes', 'The harbour master keeps the logbook.\n\nNothing about ships here.');
    await store.close();
    const io = fakeIO();
    const code = await exec(
      [
        file(
          's.js',
          "const hits = search_chunks('harbour'); const c = get_chunk(hits[0].id); print(hits.length > 0, c.text.includes('logbook'), grep('logbook').length)",
        ),
        '--store',
        storeDir,
      ],
      io,
    );
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    expect(io.out()).toBe('true true 1\n');
  });

  it('answers llm_query with --model (a scripted model here)', async () => {
    const rules = path.join(
      dir,
      file('rules.json', JSON.stringify({ rules: [{ match: 'capital', reply: 'Paris' }] })),
    );
    const io = fakeIO();
    const code = await exec(
      [
        file('m.js', "print(llm_query('capital of France?'), llm_query_batched(['capital?']))"),
        '--model',
        `scripted:${rules}`,
      ],
      io,
    );
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    expect(io.out()).toBe('Paris [ "Paris" ]\n');
  });

  it('names the model to model code by its file name, never by its host path', async () => {
    const rules = path.join(
      dir,
      file('named.json', JSON.stringify({ rules: [{ match: '^hello', reply: 'yo' }] })),
    );
    const io = fakeIO();
    const code = await exec(
      [
        file(
          'n.js',
          "print(llm_query('hello', null, {model: 'nope'}), llm_query('hello', null, {model: 'scripted:named.json'}))\n" +
            "// ---\nprint(llm_query('zzz'))",
        ),
        '--model',
        `scripted:${rules}`,
      ],
      io,
    );
    // A model that fails is an answer starting `Error:` here too, as in a run: no block fails.
    expect(code, io.err()).toBe(0);
    // A failed call is also noted in the output (issue 30: failures never pass unseen).
    const [first, second] = io
      .out()
      .split(/(?<=\n)(?=\[llm_query: a call failed; its answer is the string "Error: SCRIPT)/);
    expect(first).toBe(
      '[llm_query: a call failed; its answer is the string "Error: BAD_INPUT: no model \\"nope\\" is configured; use scripted:named.json"]\n' +
        'Error: BAD_INPUT: no model "nope" is configured; use scripted:named.json yo\n',
    );
    expect(second).toMatch(/^\[llm_query: a call failed[^\n]*\]\nError: SCRIPT_EXHAUSTED: /);
    expect(io.out() + io.err()).not.toContain(dir);
  });

  it('reports llm_query as unavailable without --model', async () => {
    const io = fakeIO();
    expect(await exec([file('g.js', "llm_query('x')")], io)).toBe(1);
    expect(io.err()).toContain('llm_query is unavailable: no model configured (pass --model)');
  });

  it('exits 2 with one error line for a missing file or a bad flag', async () => {
    const missing = await cli(['exec', 'missing.js'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      `rlm: exec: cannot read ${path.join(dir, 'missing.js')} (ENOENT) [BAD_INPUT]\n`,
    );
    expect((await cli(['exec', '--bogus'], { cwd: dir })).code).toBe(2);
  });

  it('exits 2 with one clear line for a missing --context path, or --context with --store', async () => {
    const missing = await cli(['exec', file('h.js', '1'), '--context', 'nope.txt'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      `rlm: --context: no such file or directory: ${path.join(dir, 'nope.txt')} [BAD_INPUT]\n`,
    );
    expect(missing.stdout).toBe('');
    file('both.txt', 'x');
    const both = await cli(['exec', 'h.js', '--context', 'both.txt', '--store', 'store'], { cwd: dir });
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('rlm: exec: give --context or --store, not both [BAD_INPUT]\n');
  });

  it('prints help', async () => {
    const io = fakeIO();
    expect(await exec(['--help'], io)).toBe(0);
    expect(io.out()).toContain('usage: rlm exec');
  });

  it('loads --context exactly as rlm answer does: chunk ids, search_chunks, folders', async () => {
    const folder = path.join(dir, 'notes');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'notes.md'), '# Harbour\n\nThe harbour master keeps the logbook.\n');
    writeFileSync(path.join(folder, 'ships.txt'), 'Nothing about logbooks here, only ships.\n');
    const answer = await loadInput({ question: 'q', paths: [folder] }, 64 * 1024 * 1024);
    const store = await answer.index!.load();
    const expected = {
      context: await Promise.all((answer.contextFiles ?? []).map((f) => f.text.string())),
      // grep over --context files reads their text, by document (rlm answer's grep does the same).
      grep: (await store.grep('harbour master', {})).matches.map((m) => m.document),
      search: (await store.search('logbook', { k: 5 })).map((h) => h.id),
    };
    await answer.close();
    expect(expected.grep[0]).toMatch(/^notes-md-[0-9a-f]{8}$/);
    expect(expected.search.length).toBeGreaterThan(0);
    expect(expected.context).toHaveLength(2);

    const io = fakeIO();
    const code = await exec(
      [
        file(
          'ctx.js',
          "print(JSON.stringify({ context, grep: grep('harbour master').map((m) => m.id), search: search_chunks('logbook', { k: 5 }).map((h) => h.id) }))",
        ),
        '--context',
        'notes',
      ],
      io,
    );
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(io.out())).toEqual(expected);
  });

  it('falls back to $RLM_STORE without --context or --store', async () => {
    const { ChunkStore } = await import('../../../memory/files/store.ts');
    const storeDir = path.join(dir, 'env-store');
    const store = await ChunkStore.open(storeDir, { create: true });
    await store.ingestText('log', 'The lighthouse keeper logs every storm.');
    await store.close();
    const io = fakeIO('', { RLM_STORE: 'env-store' });
    const code = await exec(
      [file('env.js', "print(search_chunks('lighthouse').length, grep('storm').length)")],
      io,
    );
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    expect(io.out()).toBe('1 1\n');
    // --context wins over $RLM_STORE, as in rlm answer.
    file('only.txt', 'just this');
    const ctx = fakeIO('', { RLM_STORE: 'env-store' });
    expect(await exec([file('only.js', 'print(context)'), '--context', 'only.txt'], ctx)).toBe(0);
    expect(ctx.out()).toBe('just this\n');
  });
});
