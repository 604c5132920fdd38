/**
 * The id `rlm remember` prints, a document id from `rlm ls` and a file's path work wherever a chunk id
 * does (peek, links, link), and mean the whole document.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cli } from './helpers.ts';

function temp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rlm-ids-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function ok(args: string[], cwd?: string) {
  const r = await cli(args, cwd === undefined ? {} : { cwd });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

describe('ids in rlm peek, links and link', () => {
  it('a memory id works as its chunk id does', async () => {
    const store = path.join(temp(), 's');
    const a = (await ok(['remember', 'The user wants answers in French.', '--store', store])).stdout.trim();
    const b = (await ok(['remember', 'Replies should be short.', '--store', store])).stdout.trim();
    expect((await ok(['peek', a, '--store', store])).stdout).toBe('The user wants answers in French.\n');
    const json = (await ok(['peek', a, '--store', store, '--json'])).json();
    expect(json).toMatchObject({ id: a, document: a, text: 'The user wants answers in French.', links: [] });
    const linked = await ok(['link', a, b, '--type', 'supports', '--store', store, '--json']);
    expect(linked.json()).toEqual({ from: `${a}:0`, to: `${b}:0`, type: 'supports', strength: 1 });
    expect((await ok(['links', b, '--store', store, '--json'])).json()).toEqual({
      id: b,
      path: null,
      links: [{ from: `${a}:0`, to: `${b}:0`, type: 'supports', strength: 1 }],
    });
    expect(
      (await ok(['links', `${b}:0`, '--store', store, '--json'])).json<{ links: unknown[] }>().links,
    ).toHaveLength(1);
    const removed = await ok(['link', a, b, '--type', 'supports', '--remove', '--store', store, '--json']);
    expect(removed.json()).toEqual({ removed: true });
  });

  it('a document id or a path prints the whole document; its links are those that leave it', async () => {
    const dir = temp();
    mkdirSync(path.join(dir, 'notes'));
    const text = Array.from(
      { length: 40 },
      (_, i) => `## Part ${i}\n\n${'Copper lanterns glow over the meadow harbour. '.repeat(12)}\n`,
    ).join('\n');
    writeFileSync(path.join(dir, 'notes', 'long.md'), text);
    writeFileSync(
      path.join(dir, 'notes', 'other.md'),
      '# Other\n\nCopper lanterns glow over the meadow harbour.\n',
    );
    const store = path.join(dir, 's');
    await ok(['ingest', 'notes', '--store', store], dir);
    const docs = (await ok(['ls', '--store', store, '--json'])).json<{
      documents: { id: string; path: string; chunks: number }[];
    }>().documents;
    const long = docs.find((d) => d.path.endsWith('long.md'))!;
    expect(long.chunks).toBeGreaterThan(1);
    const byId = await ok(['peek', long.id, '--store', store], dir);
    expect(byId.stdout).toBe(text.endsWith('\n') ? text : `${text}\n`);
    expect(byId.stderr).toMatch(
      new RegExp(`^${long.id}  notes/long\\.md  ${long.chunks} chunks  \\d+ tokens\\n$`),
    );
    expect((await ok(['peek', 'notes/long.md', '--store', store], dir)).stdout).toBe(byId.stdout);
    const links = (await ok(['links', long.id, '--store', store, '--json'])).json<{
      links: { from: string; to: string; type: string }[];
    }>().links;
    expect(links.length).toBeGreaterThan(0);
    // Only links that leave the document: none from one of its chunks to another.
    for (const l of links) expect([l.from, l.to].some((end) => !end.startsWith(`${long.id}:`))).toBe(true);
  });

  it('an unknown id names the forms accepted', async () => {
    const store = path.join(temp(), 's');
    await ok(['remember', 'Something.', '--store', store]);
    for (const command of [['peek'], ['links'], ['link', 'mem-x', '--type', 'supports']]) {
      const r = await cli([...command.slice(0, 1), 'mem-nope', ...command.slice(1), '--store', store]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^rlm: no chunk or document with id mem-nope: give a chunk id \(DOCUMENT:N\), a document id, a memory id \(mem-…\) or the path a file was ingested from .*\[NOT_FOUND\]\n$/,
      );
    }
  });
});
