/**
 * Control characters in data never reach a terminal raw. Every command that prints data (file names,
 * chunk text, memories, session titles, model text) is run three ways over the same hostile data: on a
 * terminal (escaped), through a pipe (exact) and with --json (exact, on a terminal too). Error and status
 * lines that quote an argument or what a store holds are held to the same rule.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { escapeControls } from '../../core/terminal-text.ts';
import type { CliIO } from '../../src/cli/io.ts';
import { reportError } from '../../src/cli/main.ts';
import { tempDir } from '../helpers/temp.ts';
import { repl, scripted } from '../mcp/helpers/rules.ts';
import { cli } from './helpers.ts';

/** Sets the terminal's title, writes its clipboard (OSC 52), clears the screen, rewinds the line. */
const HOSTILE = '\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\r';
/** How the start of HOSTILE looks once escaped. */
const ESCAPED = '\\x1b]0;pwned\\x07';

const dir = tempDir('rlm-terminal-');
const store = join(dir, 'store');
const claudeStore = join(dir, 'claude-store');
const trace = join(dir, 'trace.jsonl');
let model = '';
let doc = '';

beforeAll(async () => {
  const docs = join(dir, 'docs');
  mkdirSync(docs);
  writeFileSync(join(docs, `launch${HOSTILE}\nnotes.md`), `The rocket launch ${HOSTILE} is at dawn.\n`);
  symlinkSync(join(dir, 'nowhere'), join(docs, `gone${HOSTILE}.md`));
  expect((await cli(['ingest', docs, '--store', store])).code).toBe(0);
  const remembered = await cli([
    'remember',
    `rocket fuel ${HOSTILE} is kerosene`,
    '--store',
    store,
    '--topic',
    `fuel${HOSTILE}`,
  ]);
  expect(remembered.code).toBe(0);
  doc = (await cli(['ls', '--store', store, '--json'])).json<{ documents: { id: string }[] }>().documents[0]!
    .id;
  const code = `print(${JSON.stringify(HOSTILE)}); FINAL(${JSON.stringify(`the launch ${HOSTILE} is at dawn`)})`;
  model = scripted(dir, 'rules.json', [{ reply: repl(code) }]);
  const answered = await cli(['answer', 'when?', '--store', store, '--model', model, '--trace', trace]);
  expect(answered.code).toBe(0);
  const session = join(dir, 'session.jsonl');
  const line = (type: string, text: string, uuid: string) =>
    JSON.stringify({
      type,
      uuid,
      sessionId: 's1',
      cwd: `/home/u/app${HOSTILE}`,
      timestamp: '2026-01-01T00:00:00Z',
      message: { role: type, content: text },
    });
  writeFileSync(
    session,
    `${line('user', `rocket launch ${HOSTILE} when?`, 'u1')}\n${line('assistant', `at dawn ${HOSTILE}`, 'a1')}\n`,
  );
  expect((await cli(['claude', 'ingest', '--session', session, '--store', claudeStore])).code).toBe(0);
});

/** Every command that prints data, with whether it has --json and what it reads from stdin. */
const COMMANDS: { name: string; args: () => string[]; json: boolean; stdin?: string }[] = [
  { name: 'ls', args: () => ['ls', '--store', store], json: true },
  { name: 'search', args: () => ['search', 'rocket', '--store', store], json: true },
  { name: 'grep', args: () => ['grep', 'rocket', '--store', store], json: true },
  { name: 'grep --count', args: () => ['grep', '-c', 'rocket', '--store', store], json: true },
  { name: 'peek a document', args: () => ['peek', doc, '--store', store], json: true },
  { name: 'peek a chunk', args: () => ['peek', `${doc}:0`, '--store', store], json: true },
  { name: 'recall', args: () => ['recall', 'rocket', '--store', store], json: true },
  { name: 'topics', args: () => ['topics', '--store', store], json: true },
  { name: 'answer', args: () => ['answer', 'when?', '--store', store, '--model', model], json: true },
  {
    name: 'exec',
    args: () => ['exec', '-', '--store', store],
    json: true,
    stdin: `print(${JSON.stringify(HOSTILE)}); FINAL(${JSON.stringify(HOSTILE)})`,
  },
  { name: 'trace show', args: () => ['trace', 'show', trace], json: true },
  { name: 'trace show --full', args: () => ['trace', 'show', '--full', trace], json: false },
  { name: 'claude projects', args: () => ['claude', 'projects', '--store', claudeStore], json: true },
  { name: 'claude timeline', args: () => ['claude', 'timeline', '--store', claudeStore], json: true },
  { name: 'claude recall', args: () => ['claude', 'recall', 'rocket', '--store', claudeStore], json: true },
  {
    name: 'ingest (notes name files)',
    args: () => ['ingest', join(dir, 'docs'), '--store', store],
    json: false,
  },
];

/** Control characters left after taking out the CLI's own colours and line redraws. */
function rawControls(out: string): string[] {
  const own = out.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r\x1b\[2K/g, '');
  return [...own.matchAll(/[\0-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g)].map((m) => m[0]);
}

const run = (c: (typeof COMMANDS)[number], extra: string[], tty: boolean) =>
  cli([...c.args(), ...extra], { tty, ...(c.stdin === undefined ? {} : { stdin: c.stdin }) });

describe.each(COMMANDS)('rlm $name', (c) => {
  it('shows control characters escaped on a terminal', async () => {
    const r = await run(c, [], true);
    expect(r.code).toBe(0);
    expect(rawControls(r.stdout + r.stderr)).toEqual([]);
    expect(r.stdout + r.stderr).toContain(ESCAPED);
  });

  it('writes the exact text to a pipe', async () => {
    const r = await run(c, [], false);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toContain(HOSTILE.slice(0, 12));
    expect(r.stdout + r.stderr).not.toContain(ESCAPED);
  });
});

describe.each(COMMANDS.filter((c) => c.json))('rlm $name --json', (c) => {
  it('keeps the exact text, on a terminal too', async () => {
    const r = await run(c, ['--json'], true);
    expect(r.code).toBe(0);
    expect(JSON.stringify(r.json())).toContain(JSON.stringify(HOSTILE.slice(0, 20)).slice(1, -1));
  });
});

describe('escapeControls', () => {
  it('escapes C0, DEL, C1 and bidirectional overrides; keeps line feeds and tabs unless inline', () => {
    expect(escapeControls('a\x1b[2Jb\x07\x7f\x9b\u202e\r\n\tc')).toBe(
      'a\\x1b[2Jb\\x07\\x7f\\x9b\\u202e\\r\n\tc',
    );
    expect(escapeControls('a\nb\tc', true)).toBe('a\\nb\\tc');
    expect(escapeControls('plain text, accents é and emoji 🚀')).toBe('plain text, accents é and emoji 🚀');
  });
});

describe('error and status lines', () => {
  /** A new store whose manifest names its documents file with HOSTILE in it: a read fails naming that file. */
  async function corrupt(): Promise<string> {
    const at = join(tempDir(), 's');
    expect((await cli(['remember', 'Tea is served at four.', '--store', at])).code).toBe(0);
    const manifest = join(at, 'rlm-store.json');
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, unknown>;
    writeFileSync(manifest, JSON.stringify({ ...m, documents: `documents-${HOSTILE}.json` }));
    return at;
  }

  /** Commands whose line on stderr quotes an argument or what a store holds, and how each exits. */
  const LINES: { name: string; args: () => string[] | Promise<string[]>; code: number }[] = [
    { name: 'an unknown id', args: () => ['peek', `x${HOSTILE}`, '--store', store], code: 1 },
    { name: 'a file a manifest names', args: async () => ['stats', '--store', await corrupt()], code: 1 },
    {
      name: 'a file repair finds missing',
      args: async () => ['repair', '--store', await corrupt()],
      code: 0,
    },
    {
      name: 'a path that is not there',
      args: () => ['ingest', join(dir, `no${HOSTILE}`), '--store', store],
      code: 2,
    },
    { name: 'an unknown command', args: () => [`x${HOSTILE}`], code: 2 },
    { name: 'a document not in the store', args: () => ['rm', `x${HOSTILE}`, '--store', store], code: 1 },
    {
      name: 'a topic remembered',
      args: () => ['remember', 'Tea.', '--topic', `t${HOSTILE}`, '--store', join(tempDir(), 's')],
      code: 0,
    },
    { name: 'a file exec cannot read', args: () => ['exec', join(dir, `no${HOSTILE}.js`)], code: 2 },
    {
      name: 'a trace page written',
      args: () => ['trace', 'html', trace, '--out', join(tempDir(), `page${HOSTILE}.html`)],
      code: 0,
    },
  ];

  it.each(LINES)('$name is shown escaped on a terminal', async ({ args, code }) => {
    const r = await cli(await args(), { tty: true });
    expect(r.code, r.stderr).toBe(code);
    expect(rawControls(r.stdout + r.stderr)).toEqual([]);
    expect(r.stderr).toContain(ESCAPED);
  });

  it.each(LINES)('$name is exact in a pipe', async ({ args, code }) => {
    const r = await cli(await args(), { tty: false });
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toContain(HOSTILE.slice(0, 12));
    expect(r.stderr).not.toContain(ESCAPED);
  });

  it('keeps the exact error in --json output on a terminal', async () => {
    const r = await cli(['exec', '-', '--json'], {
      tty: true,
      stdin: `throw new Error(${JSON.stringify(HOSTILE)})`,
    });
    expect(r.code).toBe(1);
    expect(r.json<{ error: { message: string } }>().error.message).toBe(`Error: ${HOSTILE}`);
  });

  it('shows the path of a file not found, and an unexpected error, escaped on a terminal', () => {
    const report = (err: unknown, tty: boolean) => {
      let stderr = '';
      const io = { stderr: { write: (s: string) => (stderr += s), isTTY: tty } } as unknown as CliIO;
      return { code: reportError(err, { ...io, env: {} }), stderr };
    };
    const missing = Object.assign(new Error('ENOENT'), { code: 'ENOENT', path: `/no${HOSTILE}` });
    expect(report(missing, true)).toEqual({
      code: 2,
      stderr: `rlm: no such file or directory: /no${escapeControls(HOSTILE, true)} [BAD_INPUT]\n`,
    });
    expect(report(missing, false).stderr).toBe(`rlm: no such file or directory: /no${HOSTILE} [BAD_INPUT]\n`);
    const odd = report(new TypeError(`bad ${HOSTILE}`), true);
    expect(odd.code).toBe(1);
    expect(rawControls(odd.stderr)).toEqual([]);
    expect(odd.stderr).toContain(`bad ${ESCAPED}`);
  });
});
