import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../src/mcp/limits.ts';
import { answerInput } from '../src/mcp/tools/answer.ts';
import { cli } from './cli/helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The first ```sh block after a heading. */
function firstBlockAfter(heading: string): string {
  const at = README.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(at));
  return block![1]!.trim();
}

/** Splits a shell line into words, honouring double quotes (enough for the README's commands). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

describe('README', () => {
  it('its main command runs and prints the answer it promises', async () => {
    const command = firstBlockAfter('## The main command');
    const [bin, ...args] = words(command);
    expect(bin).toBe('rlm');
    const r = await cli(args, { cwd: ROOT });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('3\n');
    expect(README).toContain('It prints `3` on stdout');
    // The summary it shows is the one printed, word for word but for the time taken.
    const shown = /and a summary on stderr:\s*`(rlm: [^`]+)`/.exec(README)?.[1];
    const anyTime = (line: string) => line.replace(/ · \d+(\.\d+)? s$/, ' · N s');
    expect(r.stderr).toMatch(/^rlm: final · .* · \d+\.\d s$/m);
    expect(anyTime(shown ?? '')).toBe(anyTime(r.stderr.trim()));
  });

  it('its test command is the one package.json runs', () => {
    expect(firstBlockAfter('## Test')).toBe('npm test');
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.test).toBe('vitest run');
    expect(readFileSync(new URL('../.ci/run', import.meta.url), 'utf8')).toMatch(/^npm test$/m);
  });

  it('names the Node version CI pins, and the engines range that admits it', () => {
    const env = readFileSync(new URL('../.ci/node-env.sh', import.meta.url), 'utf8');
    const pinned = /rlm_node_version=\$\{RLM_NODE_VERSION:-(\d+\.\d+\.\d+)\}/.exec(env)?.[1];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(README.replace(/\s+/g, ' ')).toContain(`passes on Node ${pinned}, the version CI pins`);
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      engines: { node: string };
    };
    const floor = /^>=(\d+)$/.exec(pkg.engines.node)?.[1];
    expect(Number(pinned!.split('.')[0])).toBeGreaterThanOrEqual(Number(floor));
    expect(README).toContain(`Node.js ${floor} or newer`);
  });

  it('names only commands the CLI has', async () => {
    const help = (await cli(['--help'])).stdout;
    const shell = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((b) => [
      ...b[1]!.matchAll(/^rlm ([a-z]+)\b/gm),
    ]);
    const inline = [...README.matchAll(/`rlm ([a-z]+)\b/g)];
    const named = new Set([...shell, ...inline].map((m) => m[1]!));
    expect(named.size).toBeGreaterThan(10);
    for (const c of named) expect(help, `rlm ${c}`).toContain(`  ${c} `);
  });

  it('lists every error code', () => {
    const source = readFileSync(new URL('../core/errors.ts', import.meta.url), 'utf8');
    const union = /export type ErrorCode =([^;]+);/.exec(source)![1]!;
    const codes = [...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]).sort();
    const list = /\*\*Error codes\*\*([\s\S]*?)Mistakes in the model/.exec(README)?.[1] ?? '';
    expect([...list.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]).sort()).toEqual(codes);
  });

  it("gives rlm_answer's optional arguments as the tool takes them", () => {
    const row = /^\| `rlm_answer` \|.*$/m.exec(README)?.[0] ?? '';
    const optional = /Optional arguments: ([^.]+)\./.exec(row)?.[1] ?? '';
    const named = [...optional.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    const main = ['question', 'context', 'paths', 'store'];
    for (const arg of main) expect(row).toContain(`\`${arg}\``);
    expect(named.sort()).toEqual(
      Object.keys(answerInput(DEFAULT_LIMITS).shape)
        .filter((k) => !main.includes(k))
        .sort(),
    );
  });
});

describe('README examples', () => {
  it('the recursion example answers through three sub-RLMs', async () => {
    const r = await cli(
      [
        'answer',
        'List the first sections',
        '--context',
        'memory/SCHEMA.md',
        '--model',
        'scripted:examples/sections.json',
        '--json',
      ],
      { cwd: ROOT },
    );
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ status: 'final', subCalls: 3, maxDepthReached: 1 });
    expect(r.json<{ answer: string }>().answer).toContain('Commits, crashes and concurrency');
  });
});
