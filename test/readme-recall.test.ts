/**
 * The README's recipe for recall by meaning, run as written against a loopback stand-in for Ollama that
 * embeds by concept (words about language land on one axis, about databases on another): without an
 * embedder recall matches words and says so; with the recipe's embedder it finds the memory by meaning.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cli } from './cli/helpers.ts';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const CONCEPTS = [
  ['language', 'french', 'english', 'replies', 'answers'],
  ['database', 'postgresql', 'billing', 'locks'],
];
/** nomic-embed-text's length: the store checks what the server returns against it. */
const DIMS = 768;

function conceptVector(text: string): number[] {
  const words = text.toLowerCase().split(/\W+/);
  const v = new Array<number>(DIMS).fill(0);
  CONCEPTS.forEach((group, i) => {
    for (const w of words) if (group.includes(w)) v[i]! += 1;
  });
  v[DIMS - 1] = 0.01; // never the zero vector
  return v;
}

async function fakeOllama(): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { input } = JSON.parse(body) as { input: string[] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: conceptVector(t) })) }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  onTestFinished(() => new Promise<void>((ok) => server.close(() => ok())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** The shell lines of the first ```sh block after `heading`. */
function block(heading: string): string[] {
  const at = README.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  return /```sh\n([\s\S]*?)```/.exec(README.slice(at))![1]!.trim().split('\n');
}

/** A README line as arguments: `rlm` dropped, its comment cut, the example store replaced. */
function args(line: string, store: string): string[] {
  const code = line.replace(/\s+#.*$/, '').replace(/^rlm /, '');
  return [...code.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => (m[1] ?? m[2]!).replace('~/.rlm/work', store));
}

describe('README: recall by meaning', () => {
  it('without an embedder recall matches words and says so; the README recipe makes it find meaning', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rlm-readme-recall-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const store = path.join(dir, 'work');
    const env = { OLLAMA_BASE_URL: await fakeOllama() };
    for (const line of block('## Memories').filter((l) => l.includes('rlm remember'))) {
      const [text] = line.startsWith('echo') ? [/^echo "([^"]*)"/.exec(line)![1]!] : [];
      const r = text
        ? await cli(['remember', '-', ...args(line.split('|')[1]!.trim(), store).slice(2)], { stdin: text })
        : await cli(args(line, store));
      expect(r.code, r.stderr).toBe(0);
    }
    const recipe = block('### Recall by words, or by meaning').filter((l) => l.startsWith('rlm '));
    const recall = recipe.find((l) => l.startsWith('rlm recall'))!;
    expect(recall).toContain('what language should replies be in');

    const words = await cli([...args(recall, store), '--json'], { env });
    expect(words.code).toBe(0);
    expect(words.stdout).not.toContain('answers in French');
    expect(words.stderr).toMatch(/recall matches words.*no embedder.*rlm recall --help/);

    for (const line of recipe.filter((l) => !l.startsWith('rlm recall'))) {
      const r = await cli(args(line, store), { env });
      expect(r.code, `${line}: ${r.stderr}`).toBe(0);
    }
    const meaning = await cli([...args(recall, store), '--json'], { env });
    expect(meaning.code, meaning.stderr).toBe(0);
    expect(meaning.json<{ results: { text: string }[] }>().results[0]?.text).toBe(
      'The user wants answers in French',
    );
  });
});
