/**
 * Every way to delete something, checked the way a user would: afterwards no command finds the text
 * (recall, search, grep, peek by chunk and document id, ls, stats, links), and no file of the store holds
 * the text or the deleted ids (segments shared with other documents, the memory journal, vectors,
 * access stats, old generations).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { writeSession } from '../../benchmarks/claude-corpus.ts';
import { ChunkStore } from '../../memory/files/store.ts';
import { filesHolding } from '../helpers/files-holding.ts';
import { connect } from '../mcp/helpers/connect.ts';
import { cli } from './helpers.ts';

const SECRET = 'zanzibarquokka';

function temp(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rlm-delete-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * What still finds `secret` or the deleted `ids` in the store: one entry per command (or file) that does.
 * `survivor` is a chunk of a document that stays, whose links must not lead to the deleted ones.
 */
async function stillFindable(
  store: string,
  secret: string,
  ids: string[],
  opts: { survivor?: string } = {},
): Promise<string[]> {
  const found: string[] = [];
  const run = async (args: string[]) => cli([...args, '--store', store]);
  const recall = await run(['recall', secret, '--archived', '--json']);
  if (recall.stdout.includes(secret)) found.push('recall');
  const search = await run(['search', secret, '--json']);
  if (search.stdout.includes(secret) || ids.some((id) => search.stdout.includes(id))) found.push('search');
  const grep = await run(['grep', '-F', secret, '--json']);
  if (grep.stdout.includes(secret)) found.push('grep');
  for (const id of ids.flatMap((d) => [d, `${d}:0`])) {
    const peek = await run(['peek', id]);
    if (peek.code === 0 || peek.stdout.includes(secret)) found.push(`peek ${id}`);
    const links = await run(['links', id]);
    if (links.code === 0) found.push(`links ${id}`);
  }
  const ls = await run(['ls', '--json']);
  if (ids.some((id) => ls.stdout.includes(`"${id}"`))) found.push('ls');
  if (opts.survivor) {
    const links = await run(['links', opts.survivor, '--json']);
    if (ids.some((id) => links.stdout.includes(id))) found.push(`links ${opts.survivor}`);
  }
  for (const f of filesHolding(store, [secret, ...ids])) found.push(`file ${f}`);
  return found;
}

async function ok(args: string[], o: Parameters<typeof cli>[1] = {}) {
  const r = await cli(args, o);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

async function remember(store: string, text: string, ...more: string[]): Promise<string> {
  return (await ok(['remember', text, '--store', store, ...more])).stdout.trim();
}

async function stats(store: string): Promise<{ documents: number; chunks: number }> {
  return (await ok(['stats', '--store', store, '--json'])).json();
}

describe('rlm rm', () => {
  it('deletes a memory just remembered (still in the journal): the case from the issue', async () => {
    const store = path.join(temp(), 's');
    const keep = await remember(store, 'The user likes tea in the morning.');
    const id = await remember(store, `temporary fact about kiwis ${SECRET}`);
    const r = await ok(['rm', id, '--store', store, '--json']);
    expect(r.json()).toEqual({ removed: true, ids: [id], summaries: [], restored: [] });
    expect(await stillFindable(store, SECRET, [id])).toEqual([]);
    expect(await stats(store)).toMatchObject({ documents: 1, chunks: 1 });
    expect((await ok(['recall', 'tea', '--store', store, '--json'])).stdout).toContain(keep);
  });

  it('deletes a memory folded into a segment it shares with other memories', async () => {
    const store = path.join(temp(), 's');
    const keep = await remember(store, 'Deploys happen on Tuesdays after the standup.');
    const id = await remember(store, `kiwis again ${SECRET}, and Tuesdays too`);
    await ok(['decay', '--store', store]); // folds the journal into one segment holding both
    await ok(['peek', `${id}:0`, '--store', store]); // an access: a line in access.log
    await ok(['rm', id, '--store', store]);
    expect(await stillFindable(store, SECRET, [id], { survivor: `${keep}:0` })).toEqual([]);
    expect((await ok(['peek', keep, '--store', store])).stdout).toContain('Deploys happen on Tuesdays');
  });

  it('deletes a document that shares its segment (and its related_to links) with another, by id and by path', async () => {
    const dir = temp();
    const notes = path.join(dir, 'notes');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(notes);
    const shared = 'harbour lantern copper meadow falcon orchard glacier compass';
    writeFileSync(path.join(notes, 'keep.md'), `# Keep\n\n${shared} stays here.\n`);
    writeFileSync(path.join(notes, 'gone.md'), `# Gone\n\n${shared} and ${SECRET} leave.\n`);
    writeFileSync(path.join(notes, 'also.md'), `# Also\n\n${shared} and ${SECRET} leave too.\n`);
    const store = path.join(dir, 's');
    await ok(['ingest', notes, '--store', store, '--embedder', 'hash']);
    const docs = (await ok(['ls', '--store', store, '--json'])).json<{
      documents: { id: string; path: string }[];
    }>().documents;
    const idOf = (name: string) => docs.find((d) => d.path.endsWith(name))!.id;
    const keep = idOf('keep.md');
    await ok(['link', keep, idOf('gone.md'), '--type', 'supports', '--store', store]);
    await ok(['rm', idOf('gone.md'), '--store', store]);
    await ok(['rm', 'notes/also.md', '--store', store], { cwd: dir });
    expect(
      await stillFindable(store, SECRET, [idOf('gone.md'), idOf('also.md')], { survivor: `${keep}:0` }),
    ).toEqual([]);
    expect(await stats(store)).toMatchObject({ documents: 1 });
    expect((await ok(['search', 'lantern', '--store', store, '--json'])).stdout).toContain(keep);
  });

  it('refuses an unknown id, deleting nothing', async () => {
    const store = path.join(temp(), 's');
    const id = await remember(store, 'A fact that stays.');
    const r = await cli(['rm', 'mem-nope', '--store', store]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no document mem-nope/);
    expect((await ok(['peek', id, '--store', store])).stdout).toContain('A fact that stays.');
  });
});

describe('rlm forget', () => {
  it('deletes journaled and folded memories, archived ones included', async () => {
    const store = path.join(temp(), 's');
    const keep = await remember(store, 'Lunch is at noon.');
    const folded = await remember(
      store,
      `an old note on ${SECRET} gardens`,
      '--importance',
      'low',
      '--now',
      '2025-01-01',
    );
    await ok(['decay', '--store', store, '--now', '2025-12-01']); // folds, and archives the low one
    const journaled = await remember(store, `a fresh note on ${SECRET} bridges`);
    const r = await ok(['forget', folded, journaled, '--store', store, '--json']);
    expect(r.json()).toEqual({ forgotten: 2, ids: [folded, journaled], summaries: [], restored: [] });
    expect(await stillFindable(store, SECRET, [folded, journaled], { survivor: `${keep}:0` })).toEqual([]);
  });

  it('deletes a summary written from a forgotten memory, and brings its other sources back', async () => {
    const dir = temp();
    const store = path.join(dir, 's');
    const a = await remember(store, `The API key rotates monthly; old one was ${SECRET}.`, '--topic', 'ops');
    const b = await remember(store, 'Backups run nightly at 2am.', '--topic', 'ops');
    const rules = path.join(dir, 'summary.json');
    writeFileSync(
      rules,
      JSON.stringify({ rules: [{ reply: `Ops: key ${SECRET} rotates monthly; backups nightly.` }] }),
    );
    const c = await ok(['consolidate', 'ops', '--model', `scripted:${rules}`, '--store', store, '--json']);
    const summary = c.json<{ summary: string }>().summary;
    const r = await ok(['forget', a, '--store', store, '--json']);
    expect(r.json()).toEqual({ forgotten: 2, ids: [a, summary], summaries: [summary], restored: [b] });
    expect(await stillFindable(store, SECRET, [a, summary], { survivor: `${b}:0` })).toEqual([]);
    // The other source is active again, not lost in the archive.
    expect((await ok(['recall', 'backups', '--store', store, '--json'])).stdout).toContain(b);
    const human = await ok(['forget', b, '--store', store]);
    expect(human.stderr).toBe('rlm: forgot 1 memory\n');
  });

  it('deletes a summary itself; its sources stay archived', async () => {
    const dir = temp();
    const store = path.join(dir, 's');
    const a = await remember(store, 'Reviews need two approvals.', '--topic', 'team');
    const b = await remember(store, 'Standup is at 9:30.', '--topic', 'team');
    const rules = path.join(dir, 'summary.json');
    writeFileSync(
      rules,
      JSON.stringify({ rules: [{ reply: `Team ${SECRET}: two approvals, standup 9:30.` }] }),
    );
    const summary = (
      await ok(['consolidate', 'team', '--model', `scripted:${rules}`, '--store', store, '--json'])
    ).json<{ summary: string }>().summary;
    await ok(['forget', summary, '--store', store]);
    expect(await stillFindable(store, SECRET, [summary], { survivor: `${a}:0` })).toEqual([]);
    const archived = (await ok(['recall', 'approvals standup', '--archived', '--store', store, '--json']))
      .stdout;
    expect(archived).toContain(a);
    expect(archived).toContain(b);
  });
});

describe('rlm claude forget and rlm ingest --prune', () => {
  it('claude forget deletes a project’s sessions, including from segments shared with other projects', async () => {
    const dir = temp();
    const projects = path.join(dir, 'claude', 'projects');
    writeSession(projects, '/home/ana/secret-app', {
      session: 'sess-secret',
      cwd: '/home/ana/secret-app',
      exchanges: [
        { user: `What is ${SECRET}?`, assistant: 'A made-up word.', time: '2026-03-02T09:00:00.000Z' },
      ],
    });
    writeSession(projects, '/srv/shop', {
      session: 'sess-shop',
      cwd: '/srv/shop',
      exchanges: [
        {
          user: 'The cart total is wrong',
          assistant: 'Round once, at the end.',
          time: '2026-02-11T11:00:00.000Z',
        },
      ],
    });
    const store = path.join(dir, 's');
    await ok(['claude', 'ingest', '--store', store], {
      env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') },
    });
    const opened = await ChunkStore.open(store);
    const gone = opened
      .documents()
      .filter((d) => d.meta?.project === '/home/ana/secret-app')
      .map((d) => d.id);
    await opened.close();
    expect(gone.length).toBeGreaterThan(0);
    await ok(['claude', 'forget', '--project', 'secret-app', '--store', store]);
    expect(await stillFindable(store, SECRET, gone)).toEqual([]);
    expect((await ok(['claude', 'projects', '--store', store, '--json'])).stdout).toContain('/srv/shop');
  });

  it('ingest --prune deletes the documents of vanished files', async () => {
    const dir = temp();
    const notes = path.join(dir, 'notes');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(notes);
    writeFileSync(path.join(notes, 'keep.txt'), 'This file stays.\n');
    writeFileSync(path.join(notes, 'gone.txt'), `This file goes: ${SECRET}.\n`);
    const store = path.join(dir, 's');
    await ok(['ingest', notes, '--store', store]);
    const id = (await ok(['ls', '--store', store, '--json']))
      .json<{ documents: { id: string; path: string }[] }>()
      .documents.find((d) => d.path.endsWith('gone.txt'))!.id;
    rmSync(path.join(notes, 'gone.txt'));
    const r = await ok(['ingest', notes, '--store', store, '--prune', '--json']);
    expect(r.json()).toMatchObject({ removed: 1 });
    expect(await stillFindable(store, SECRET, [id])).toEqual([]);
  });
});

describe('MCP rlm_forget', () => {
  it('deletes a journaled memory for good', async () => {
    const store = path.join(temp(), 's');
    const keep = await remember(store, 'The office closes at six.');
    const id = await remember(store, `mcp ${SECRET} memory`);
    const s = await connect({ defaults: { store } });
    const r = await s.call('rlm_forget', { ids: [id] });
    await s.close();
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ forgotten: 1, ids: [id], summaries: [], restored: [] });
    expect(await stillFindable(store, SECRET, [id], { survivor: `${keep}:0` })).toEqual([]);
  });
});
