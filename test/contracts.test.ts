/**
 * CONTRACTS.md says what the code does: every `--json` shape it lists is what the command prints (run
 * here over a small store), and its lists of exit codes, model specs, sandbox globals, MCP tools and
 * error codes are the code's.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSession } from '../benchmarks/claude-corpus.ts';
import { LINK_TYPES } from '../memory/types.ts';
import { EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from '../src/cli/io.ts';
import { TOOL_NAMES } from '../src/mcp/server.ts';
import { parseModelSpec } from '../src/runtime/providers/index.ts';
import { HELPER_NAMES } from '../src/sandbox/names.ts';
import { cli } from './cli/helpers.ts';
import { thrown } from './helpers/errors.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONTRACTS = readFileSync(path.join(ROOT, 'CONTRACTS.md'), 'utf8');

/** The rows of the first table after `heading`, each a list of cells (`\|` unescaped, backticks kept). */
function table(heading: string): string[][] {
  const at = CONTRACTS.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const lines = CONTRACTS.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replaceAll('\\|', '|'));
    rows.push(cells);
  }
  return rows;
}

/** The text inside the first pair of backticks of a cell. */
const code = (cell: string): string => /`([^`]+)`/.exec(cell)?.[1] ?? '';

/** A shape of CONTRACTS.md's notation: an object's keys, each optional or not, with what it holds. */
interface Shape {
  keys: Map<string, { optional: boolean; nullable: boolean; holds?: Shape; list?: Shape | 'values' }>;
}

function parseShape(text: string): Shape {
  let i = 0;
  const skip = () => {
    while (text[i] === ' ') i++;
  };
  const eat = (s: string) => {
    skip();
    if (!text.startsWith(s, i)) throw new Error(`shape ${text}: expected '${s}' at ${i}`);
    i += s.length;
  };
  const name = (): string => {
    skip();
    const m = /^[A-Za-z]+/.exec(text.slice(i));
    if (!m) throw new Error(`shape ${text}: expected a key at ${i}`);
    i += m[0].length;
    return m[0];
  };
  const object = (): Shape => {
    eat('{');
    const keys: Shape['keys'] = new Map();
    for (;;) {
      const key = name();
      const optional = text[i] === '?';
      if (optional) i++;
      const entry: Shape['keys'] extends Map<string, infer V> ? V : never = { optional, nullable: false };
      skip();
      if (text[i] === ':') {
        i++;
        skip();
        if (text[i] === '{') entry.holds = object();
        else {
          eat('[');
          skip();
          if (text[i] === '{') entry.list = object();
          else {
            name(); // what the values are (ids, names...): words for people
            entry.list = 'values';
          }
          eat(']');
        }
        if (text.startsWith('|null', i)) {
          entry.nullable = true;
          i += 5;
        }
      }
      keys.set(key, entry);
      skip();
      if (text[i] === '}') break;
      eat(',');
    }
    i++;
    return { keys };
  };
  const shape = object();
  skip();
  if (i !== text.length) throw new Error(`shape ${text}: unexpected text at ${i}`);
  return shape;
}

/** Where `value` differs from `shape`: missing keys, keys the shape does not name, wrong nesting. */
function mismatches(value: unknown, shape: Shape, at = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return [`${at || '.'}: not an object`];
  const obj = value as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(obj)) if (!shape.keys.has(k)) out.push(`${at}.${k}: not in CONTRACTS.md`);
  for (const [k, spec] of shape.keys) {
    const v = obj[k];
    if (!(k in obj)) {
      if (!spec.optional) out.push(`${at}.${k}: missing`);
      continue;
    }
    if (v === null && (spec.nullable || (!spec.holds && !spec.list))) continue;
    if (spec.holds) out.push(...mismatches(v, spec.holds, `${at}.${k}`));
    if (spec.list) {
      if (!Array.isArray(v)) out.push(`${at}.${k}: not a list`);
      else if (spec.list === 'values') {
        if (v.some((x) => x !== null && typeof x === 'object')) out.push(`${at}.${k}: holds objects`);
      } else for (const [n, x] of v.entries()) out.push(...mismatches(x, spec.list, `${at}.${k}[${n}]`));
    }
  }
  return out;
}

describe('the shape notation', () => {
  it('finds missing, extra and misnested keys', () => {
    const s = parseShape('{a, b?, c:{d}|null, e:[{f}], g:[ids]}');
    expect(mismatches({ a: 1, c: null, e: [{ f: 1 }], g: ['x'] }, s)).toEqual([]);
    expect(mismatches({ a: 1, b: 2, c: { d: 1 }, e: [], g: [] }, s)).toEqual([]);
    expect(mismatches({ c: { d: 1, z: 2 }, e: [{}], g: [{}], h: 1 }, s)).toEqual([
      '.h: not in CONTRACTS.md',
      '.a: missing',
      '.c.z: not in CONTRACTS.md',
      '.e[0].f: missing',
      '.g: holds objects',
    ]);
  });
});

describe('CONTRACTS.md', () => {
  let dir: string;
  const printed = new Map<string, unknown>();
  /** What the sandbox's grep returned over the store, as model code sees it. */
  let sandboxGrepMatches: unknown[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rlm-contracts-'));
    const docs = path.join(dir, 'docs');
    mkdirSync(docs);
    writeFileSync(path.join(docs, 'billing.md'), '# Billing\n\nWe chose PostgreSQL for billing in March.\n');
    writeFileSync(
      path.join(docs, 'deploy.md'),
      '# Deploy\n\nDeploys run on Fridays; ERR-1234 means a bad key.\n',
    );
    writeFileSync(path.join(docs, 'old.md'), '# Old\n\nAn old note about the lantern.\n');
    const rules = path.join(dir, 'rules.json');
    writeFileSync(rules, JSON.stringify({ rules: [{ reply: 'FINAL("done")' }] }));
    const blocks = path.join(dir, 'blocks.js');
    writeFileSync(blocks, 'print(1)\n// ---\nFINAL(2)\n');
    const failing = path.join(dir, 'failing.js');
    writeFileSync(failing, 'const x = 1;\nthrow new Error("no");\n');
    const config = path.join(dir, 'claude');
    writeSession(path.join(config, 'projects'), '/home/ana/app', {
      session: 'sess-1',
      cwd: '/home/ana/app',
      exchanges: [
        {
          user: 'Why is the login test flaky?',
          assistant: 'It raced a cookie.',
          time: '2026-03-02T09:00:00.000Z',
        },
      ],
    });
    const store = path.join(dir, 'store');
    const env = { CLAUDE_CONFIG_DIR: config };
    const run = async (key: string, args: string[], expectCode = 0) => {
      const r = await cli([...args, '--json'], { env, cwd: dir });
      expect(r.code, `${key}: ${r.stderr}`).toBe(expectCode);
      printed.set(key, r.json());
      return r.json<Record<string, unknown>>();
    };
    const s = ['--store', store];

    await run('rlm ingest', ['ingest', docs, ...s]);
    const hit = (await run('rlm search', ['search', 'PostgreSQL billing', ...s])) as {
      results: { id: string }[];
    };
    const id = hit.results[0]!.id;
    const other = ((await cli(['search', 'lantern', ...s, '--json'])).json() as { results: { id: string }[] })
      .results[0]!.id;
    await run('rlm peek', ['peek', id, ...s]);
    await run('rlm grep', ['grep', 'ERR-\\d+', ...s]);
    await run('rlm grep -c', ['grep', '-c', 'ERR-\\d+', ...s]);
    const sandboxGrep = path.join(dir, 'sandbox-grep.js');
    writeFileSync(sandboxGrep, "print(JSON.stringify(grep('ERR-\\\\d+', {context: 5})))\n");
    const exec = await cli(['exec', sandboxGrep, ...s, '--json'], { cwd: dir });
    expect(exec.code, exec.stderr).toBe(0);
    sandboxGrepMatches = JSON.parse(exec.json<{ stdout: string }>().stdout);
    await run('rlm link', ['link', id, other, '--type', 'supports', ...s]);
    await run('rlm links', ['links', other, ...s]);
    await run('rlm link --remove', ['link', id, other, '--type', 'supports', '--remove', ...s]);
    await run('rlm ls', ['ls', ...s]);
    await run('rlm stats', ['stats', ...s]);
    await run('rlm store copy', ['store', 'copy', store, path.join(dir, 'copy')]);
    unlinkSync(path.join(docs, 'old.md'));
    const pruned = await run('rlm ingest', ['ingest', docs, '--prune', ...s]);
    expect(pruned.removed).toBe(1);
    await run('rlm rm', ['rm', path.join(docs, 'deploy.md'), ...s]);
    await run('rlm repair', ['repair', ...s]);

    const memory = (await run('rlm remember', [
      'remember',
      'Answers in French',
      '--topic',
      'prefs',
      ...s,
    ])) as {
      id: string;
    };
    await cli(['remember', 'Short answers', '--topic', 'prefs', '--importance', 'low', ...s]);
    await run('rlm recall', ['recall', 'french', ...s]);
    await run('rlm topics', ['topics', ...s]);
    const decayed = (await run('rlm decay', ['decay', '--now', '2031-01-01', ...s])) as { ids: string[] };
    expect(decayed.ids.length).toBeGreaterThan(0);
    await run('rlm restore', ['restore', ...decayed.ids, ...s]);
    await run('rlm consolidate', ['consolidate', 'prefs', '--model', `scripted:${rules}`, ...s]);
    await run('rlm forget', ['forget', memory.id, ...s]);

    const history = ['--store', path.join(dir, 'history')];
    await run('rlm claude ingest', ['claude', 'ingest', ...history]);
    await run('rlm claude projects', ['claude', 'projects', ...history]);
    await run('rlm claude timeline', ['claude', 'timeline', ...history]);
    await run('rlm claude recall', ['claude', 'recall', 'login test', ...history]);
    await run('rlm claude forget', ['claude', 'forget', '--project', 'app', ...history]);

    await run('rlm answer', [
      'answer',
      'What was chosen?',
      '--context',
      docs,
      '--model',
      `scripted:${rules}`,
    ]);
    await run('rlm exec', ['exec', blocks]);
    const failed = await run('rlm exec', ['exec', failing], EXIT_FAILURE);
    expect(failed.error).not.toBeNull();
    await run('rlm bench', [
      'bench',
      'sniah',
      '--model',
      'smoke',
      '--methods',
      'bm25',
      '--sizes',
      '8k',
      '--n',
      '1',
      '--out',
      path.join(dir, 'bench'),
    ]);
  }, 240_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the JSON each command prints, key for key', () => {
    const rows = table('### `--json` shapes');
    expect(rows.length).toBeGreaterThan(20);
    for (const [command, shape] of rows) {
      const key = code(command!);
      expect(printed.has(key), `${key}: run it in this test`).toBe(true);
      expect(mismatches(printed.get(key), parseShape(code(shape!))), key).toEqual([]);
    }
  });

  it("lists the CLI's exit codes", () => {
    const codes = table('## The command line').map((r) => Number(r[0]));
    expect(codes).toEqual([EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED]);
  });

  it('lists the model specs the providers take', () => {
    const documented = table('## Model specs').map((r) => code(r[0]!));
    // The message for an unknown spec names every form.
    const usage = thrown(() => parseModelSpec('nope:x')).message;
    const forms = usage.slice(usage.indexOf('use ') + 4).split(/, | or /);
    expect(documented).toEqual(forms);
  });

  it("lists the sandbox's globals", () => {
    expect(
      table("## The sandbox's globals")
        .map((r) => code(r[0]!))
        .sort(),
    ).toEqual([...HELPER_NAMES].sort());
  });

  it("gives the sandbox grep's result key for key, and every link type neighbors takes", () => {
    const row = table("## The sandbox's globals").find((r) => code(r[0]!) === 'grep')!;
    const shape = /`(\[\{[^`]+\}\])`/.exec(row[1]!)![1]!;
    expect(sandboxGrepMatches.length).toBeGreaterThan(0);
    expect(mismatches({ matches: sandboxGrepMatches }, parseShape(`{matches:${shape}}`))).toEqual([]);
    const neighbors = table("## The sandbox's globals").find((r) => code(r[0]!) === 'neighbors')!;
    const types = [...neighbors[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(types).toEqual([...LINK_TYPES]);
  });

  it("lists the MCP server's tools", () => {
    expect(table('## The MCP server').map((r) => code(r[0]!))).toEqual([...TOOL_NAMES]);
  });

  it('lists every error code', () => {
    const source = readFileSync(path.join(ROOT, 'core/errors.ts'), 'utf8');
    const union = /export type ErrorCode =([^;]+);/.exec(source)![1]!;
    const codes = [...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]).sort();
    expect(
      table('## Errors')
        .map((r) => code(r[0]!))
        .sort(),
    ).toEqual(codes);
  });
});
