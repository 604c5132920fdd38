/**
 * `--help` and the README agree, for every command and option: each help text names every flag its
 * command accepts and no other; the README's command reference is generated from the help texts; every
 * `rlm CMD … --flag` the README shows is a flag CMD accepts; the README's `--json` tables say what the
 * help texts say; and the forms shared by several commands (model specs, embedder specs, the
 * $RLM_STORE fallback, the MCP tools) are named in full wherever they apply.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { takeDeclaredFlags } from '../../src/cli/args.ts';
import { EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from '../../src/cli/io.ts';
import { TOOL_NAMES } from '../../src/mcp/server.ts';
import { cliReference, commands, README, readmeReference } from '../helpers/cli-reference.ts';
import { cli } from './helpers.ts';

const readme = readFileSync(README, 'utf8');
const CLAUDE_SUBCOMMANDS = ['ingest', 'projects', 'timeline', 'recall', 'forget', 'hooks', 'context'];
/** The claude subcommands with a help text of their own. */
const OWN_HELP = ['claude hooks', 'claude context'];
/** A flag: `--long-name`, or `-x`. */
const FLAG = /(?<![\w-])(?:--[a-z][a-z-]*|-[A-Za-z](?![\w-]))/g;

/** Flags accepted by each command (`claude recall` and the like as their own), and its help text. */
const accepted = new Map<string, { flags: readonly string[]; help: string }>();

beforeAll(async () => {
  for (const { name } of await commands()) {
    const subs = name === 'claude' ? CLAUDE_SUBCOMMANDS.map((s) => [name, s]) : [[name]];
    for (const command of subs) {
      takeDeclaredFlags();
      const help = (await cli([...command, '--help'])).stdout;
      const flags = takeDeclaredFlags();
      expect(flags, `rlm ${command.join(' ')} parses its flags`).not.toBeNull();
      accepted.set(command.join(' '), { flags: flags!, help });
    }
  }
}, 120_000);

/** The command a mention `rlm claude recall …` or `rlm search …` names, as the map keys it. */
function commandOf(words: string[]): string | undefined {
  const [first, second] = words;
  if (first === 'claude' && second !== undefined && CLAUDE_SUBCOMMANDS.includes(second))
    return `claude ${second}`;
  return first !== undefined && accepted.has(first) ? first : undefined;
}

/**
 * Every `rlm CMD … --flag` in `text`: the flags after `rlm CMD` up to the end of its line, of the inline
 * code span it is in, or of a shell separator (`|`, `;`, `#`).
 */
function mentions(text: string): { command: string; flag: string; where: string }[] {
  const out: { command: string; flag: string; where: string }[] = [];
  for (const m of text.matchAll(/\brlm ((?:[a-z][a-z-]* ?){1,2})([^\n`|;#]*)/g)) {
    const command = commandOf(m[1]!.trim().split(' '));
    if (command === undefined) continue;
    for (const f of (m[1]! + m[2]!).matchAll(FLAG)) out.push({ command, flag: f[0], where: m[0].trim() });
  }
  return out;
}

/** The first `{…}` after `from` in `text`, braces balanced, whitespace squeezed. */
function shapeAfter(text: string, from: RegExp): string | undefined {
  const at = text.search(from);
  if (at === -1) return undefined;
  const open = text.indexOf('{', at);
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(open, i + 1).replace(/\s+/g, ' ');
  }
  return undefined;
}

describe('rlm --help', () => {
  it('names every exit code and --version', async () => {
    const usage = (await cli(['--help'])).stdout;
    for (const code of [EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED])
      expect(usage).toMatch(new RegExp(`\\b${code} [a-z]`));
    expect(usage).toContain('--version');
    expect((await cli(['--version'])).code).toBe(0);
  });
});

describe('each command’s --help', () => {
  it('names every flag the command accepts, and only those', () => {
    const problems: string[] = [];
    for (const [command, { flags, help }] of accepted) {
      // Flags another command takes that a help text names on purpose (`rlm repair --embedder SPEC`).
      let own = help;
      for (const m of mentions(help)) if (m.command !== command) own = own.replace(m.where, '');
      const named = new Set([...own.matchAll(FLAG)].map((m) => m[0]));
      // The claude subcommands share one help text: it names the flags of all of them.
      const shared = command.startsWith('claude ') && !OWN_HELP.includes(command);
      const allowed = shared
        ? [...accepted].filter(([c]) => c.startsWith('claude ')).flatMap(([, a]) => a.flags)
        : flags;
      const long = flags.filter((f) => f.startsWith('--') && f !== '--help');
      for (const f of long) {
        const short = flags[flags.indexOf(f) + 1];
        const known = named.has(f) || (short !== undefined && !short.startsWith('--') && named.has(short));
        if (!known) problems.push(`rlm ${command} --help does not name ${f}`);
      }
      for (const f of named)
        if (!allowed.includes(f)) problems.push(`rlm ${command} --help names ${f}, which it does not accept`);
    }
    expect(problems).toEqual([]);
  });

  it('says where --store comes from when it is not given, names every model and embedder form', () => {
    const problems: string[] = [];
    for (const [command, { flags, help }] of accepted) {
      if (flags.includes('--store') && !help.includes('$RLM_STORE'))
        problems.push(`rlm ${command}: --store without the $RLM_STORE fallback`);
      if (flags.includes('--model'))
        for (const form of ['anthropic:', 'openai:', 'claude-code', 'scripted:', 'replay:', 'relay:'])
          if (!help.includes(form)) problems.push(`rlm ${command}: --model without ${form}`);
      if (flags.includes('--embedder'))
        for (const form of ['hash', 'openai:', 'ollama:', 'http(s)://HOST/v1#MODEL'])
          if (!help.includes(form)) problems.push(`rlm ${command}: --embedder without ${form}`);
    }
    expect(problems).toEqual([]);
  });

  it('serve names every MCP tool; grep gives --limit’s default and maximum', () => {
    const serve = accepted.get('serve')!.help;
    for (const tool of TOOL_NAMES) expect(serve, tool).toMatch(new RegExp(`\\b${tool}\\b`));
    expect(accepted.get('grep')!.help).toMatch(/--limit N +[^\n]*default 100[^\n]*at most 100,000/);
  });
});

describe('the README', () => {
  it('holds the command reference generated from --help (npm run docs:cli rewrites it)', async () => {
    expect(readmeReference(readme)).toBe(await cliReference());
  });

  it('shows only flags its commands accept', () => {
    const bad = mentions(readme)
      .filter((m) => !accepted.get(m.command)!.flags.includes(m.flag))
      .map((m) => `${m.flag} in: ${m.where}`);
    expect(bad).toEqual([]);
  });

  it('gives each --json shape as the command’s --help does', () => {
    const rows = [...readme.matchAll(/^\| `([a-z]+)` \| (.*)\|$/gm)].filter((r) => accepted.has(r[1]!));
    expect(rows.length).toBeGreaterThan(15);
    const problems: string[] = [];
    for (const [, command, cell] of rows) {
      const inReadme = shapeAfter(cell!, /`\{/);
      const inHelp = shapeAfter(accepted.get(command!)!.help, /--json\s+prints?\b/);
      if (inReadme !== inHelp) problems.push(`${command}: README ${inReadme} vs --help ${inHelp}`);
    }
    expect(problems).toEqual([]);
  });
});
