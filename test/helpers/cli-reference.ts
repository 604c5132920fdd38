/**
 * The README's command reference, generated from what `rlm <command> --help` prints, so the two cannot
 * drift: `npm run docs:cli` rewrites it, and test/cli/help.test.ts fails when it differs. Edit the help
 * texts (src/cli/commands/), then regenerate.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cli } from '../cli/helpers.ts';

export const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const START =
  '<!-- cli-reference: generated from `rlm <command> --help` by `npm run docs:cli`; edit the help texts, not this -->';
const END = '<!-- cli-reference end -->';

/** A command or subcommand with a help text of its own. */
interface Help {
  command: string[];
  summary: string;
  text: string;
}

/** Commands and summaries as `rlm --help` lists them. */
export async function commands(): Promise<{ name: string; summary: string }[]> {
  const usage = (await cli(['--help'])).stdout;
  return [...usage.matchAll(/^ {2}([a-z]+) +(.+)$/gm)].map((m) => ({ name: m[1]!, summary: m[2]! }));
}

/** Every help text, in `rlm --help` order (`claude hooks` has its own, after `claude`). */
async function helpTexts(): Promise<Help[]> {
  const out: Help[] = [];
  for (const { name, summary } of await commands()) {
    out.push({ command: [name], summary, text: (await cli([name, '--help'])).stdout });
    if (name === 'claude') {
      const text = (await cli(['claude', 'hooks', '--help'])).stdout;
      out.push({ command: ['claude', 'hooks'], summary: 'install or remove the Claude Code hooks', text });
    }
  }
  return out;
}

/** The reference section as the README holds it, markers included. */
export async function cliReference(): Promise<string> {
  const parts = [START, '', 'Every command takes `--help`; this is what each prints.', ''];
  for (const h of await helpTexts()) {
    parts.push(
      `<details><summary><code>rlm ${h.command.join(' ')}</code>: ${h.summary}</summary>`,
      '',
      '```text',
      h.text.trimEnd(),
      '```',
      '',
      '</details>',
      '',
    );
  }
  parts.push(END);
  return parts.join('\n');
}

/** The README's current reference section, markers included ('' when it has none). */
export function readmeReference(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  return start === -1 || end === -1 ? '' : readme.slice(start, end + END.length);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, 'utf8');
  const current = readmeReference(readme);
  if (current === '') throw new Error(`README.md has no ${START} … ${END} section to fill`);
  writeFileSync(README, readme.replace(current, await cliReference()));
}
