import { appendFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { encodeProject, sessionLines, sessionText, writeSession } from '../../benchmarks/claude-corpus.ts';
import { ChunkStore } from '../../memory/files/store.ts';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import type { DocumentRecord } from '../../memory/types.ts';
import { listProjects, recall, timeline } from '../../src/claude/catalog.ts';
import { importClaude } from '../../src/claude/import.ts';
import { caught } from '../helpers/errors.ts';
import { tempDir } from '../helpers/temp.ts';

let dir: string;
let projects: string;
beforeEach(() => {
  dir = tempDir('rlm-claude-');
  projects = join(dir, 'projects');
});

const T0 = '2026-03-02T09:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

/** Two projects (one with dashes in its path), a subagent run, noise, a bad line and a summary. */
function buildTree(): { login: string; api: string } {
  const login = writeSession(projects, '/home/ana/my-app', {
    session: 'sess-login',
    cwd: '/home/ana/my-app',
    branch: 'fix-login',
    model: 'claude-opus-4-1',
    summary: 'Flaky login test fixed',
    noise: true,
    exchanges: [
      {
        user: 'The login test is flaky on CI, can you look?',
        assistant: 'The test raced the session cookie; awaiting the redirect fixed it.',
        time: at(0),
        tool: { name: 'Bash', command: 'npm test -- login', output: 'FAIL login.spec.ts\n'.repeat(50) },
      },
      { user: 'Thanks, commit it please.', assistant: 'Committed as "fix flaky login test".', time: at(5) },
    ],
  });
  const agentDir = join(projects, encodeProject('/home/ana/my-app'), 'sess-login', 'subagents');
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, 'agent-a1.jsonl'),
    sessionText({
      session: 'sess-login',
      cwd: '/home/ana/my-app',
      exchanges: [
        {
          user: 'Search the repo for cookie handling',
          assistant: 'cookie.ts sets SameSite=Lax.',
          time: at(1),
        },
      ],
    }),
  );
  const api = writeSession(projects, '/srv/api', {
    session: 'sess-api',
    cwd: '/srv/api',
    branch: 'main',
    exchanges: [
      {
        user: 'Why are the reports off by one hour?',
        assistant: 'Dates were parsed as local time; parse them as UTC.',
        time: '2026-02-10T10:00:00.000Z',
      },
    ],
  });
  appendFileSync(api, 'this is not json\n');
  return { login, api };
}

describe('importClaude', () => {
  it('imports projects, sessions and subagent runs with their metadata, dropping noise', async () => {
    buildTree();
    const store = new MemoryChunkStore();
    const r = await importClaude(store, { projectsDir: projects });
    expect(r).toMatchObject({ files: 3, imported: 3, unchanged: 0, exchanges: 4 });
    expect(r.notes).toContainEqual({
      path: join(projects, '-srv-api', 'sess-api.jsonl'),
      note: 'line 3 is not JSON; skipped',
    });
    const hits = await store.search('login cookie redirect', { k: 10 });
    const chunk = (await store.getChunk(hits[0]!.id))!;
    expect(chunk.tags).toEqual(
      expect.arrayContaining([
        'claude',
        'session:sess-login',
        'project:/home/ana/my-app',
        'branch:fix-login',
        'model:claude-opus-4-1',
        'role:exchange',
      ]),
    );
    expect(chunk.time).toBe(at(0));
    expect(chunk.text).toMatch(/^User: The login test is flaky/);
    expect(chunk.text).toContain('[tool: Bash npm test -- login]');
    expect(chunk.text).not.toContain('FAIL login.spec.ts');
    expect(chunk.text).not.toMatch(/hook_progress|queue-operation|\[tool result\]/);
    const agent = (await store.search('SameSite cookie.ts', { k: 1 }))[0]!;
    expect(agent.tags).toEqual(expect.arrayContaining(['agent:a1', 'subagent', 'session:sess-login']));
  });

  it('takes the project path from cwd even with dashes, and decodes the folder name only without one', async () => {
    buildTree();
    writeSession(projects, '/opt/legacy', {
      session: 'sess-old',
      exchanges: [
        {
          user: '<command-name>/init</command-name>\n<command-args>hello there</command-args>',
          assistant: 'hi',
          time: at(-600),
        },
      ],
    });
    const store = new MemoryChunkStore();
    await importClaude(store, { projectsDir: projects });
    expect((await listProjects(store)).map((p) => p.project).sort()).toEqual([
      '/home/ana/my-app',
      '/opt/legacy',
      '/srv/api',
    ]);
    expect((await timeline(store, { project: 'legacy' }))[0]!.title).toBe('/init hello there');
  });

  it('lists projects and a timeline with titles, times and counts', async () => {
    buildTree();
    const store = new MemoryChunkStore();
    await importClaude(store, { projectsDir: projects });
    expect(await listProjects(store)).toEqual([
      {
        project: '/home/ana/my-app',
        sessions: 1,
        exchanges: 2,
        first: at(0),
        last: '2026-03-02T09:05:05.000Z',
      },
      {
        project: '/srv/api',
        sessions: 1,
        exchanges: 1,
        first: '2026-02-10T10:00:00.000Z',
        last: '2026-02-10T10:00:05.000Z',
      },
    ]);
    const t = await timeline(store);
    expect(t.map((s) => [s.session, s.title, s.exchanges, s.subagents])).toEqual([
      ['sess-api', 'Why are the reports off by one hour?', 1, 0],
      ['sess-login', 'Flaky login test fixed', 2, 1],
    ]);
    expect(t[1]!.start).toBe(at(0));
    expect((await timeline(store, { project: 'my-app' })).map((s) => s.session)).toEqual(['sess-login']);
    expect((await timeline(store, { since: '2026-03-01' })).map((s) => s.session)).toEqual(['sess-login']);
    expect((await timeline(store, { until: '2026-02-10' })).map((s) => s.session)).toEqual(['sess-api']);
    await expect(timeline(store, { project: 'nope' })).rejects.toThrow(/no imported project matches 'nope'/);
    await expect(timeline(store, { since: 'last week' })).rejects.toThrow(/--since must be an ISO date/);
    // A day that does not exist is refused, not rolled over to March.
    await expect(timeline(store, { until: '2026-02-30' })).rejects.toThrow(/--until must be an ISO date/);
  });

  it('recalls the best exchanges with session, project, time and text, within filters', async () => {
    buildTree();
    const store = new MemoryChunkStore();
    await importClaude(store, { projectsDir: projects });
    const r = await recall(store, 'how did I fix the flaky login test', { k: 2 });
    expect(r.results.map((h) => h.time).sort()).toEqual([at(0), at(5)]);
    const first = r.results.find((h) => h.time === at(0))!;
    expect(first).toMatchObject({
      session: 'sess-login',
      project: '/home/ana/my-app',
      time: at(0),
      branch: 'fix-login',
      model: 'claude-opus-4-1',
      agent: null,
    });
    expect(first.text).toContain('awaiting the redirect');
    expect(r.sessions).toEqual(['sess-login']);
    expect(
      (await recall(store, 'login test', { project: '/srv/api' })).results.every(
        (h) => h.project === '/srv/api',
      ),
    ).toBe(true);
    expect((await recall(store, 'login', { until: '2026-02-28' })).results).toEqual([]);
  });

  it('skips unchanged sessions and adds only the new exchanges of a grown one', async () => {
    const { login } = buildTree();
    const store = await ChunkStore.open(join(dir, 'store'), { create: true });
    await importClaude(store, { projectsDir: projects });
    const before = store.documents().length;
    const again = await importClaude(store, { projectsDir: projects });
    expect(again).toMatchObject({ imported: 0, unchanged: 3, exchanges: 0 });
    expect(store.documents().length).toBe(before);

    const more = sessionLines({
      session: 'sess-login',
      cwd: '/home/ana/my-app',
      exchanges: [
        {
          user: 'Now the logout button is broken',
          assistant: 'The handler lost its binding; fixed.',
          time: at(30),
        },
      ],
    });
    appendFileSync(login, `${more.join('\n')}\n`);
    const grown = await importClaude(store, { projectsDir: projects });
    expect(grown).toMatchObject({ imported: 1, unchanged: 2, rewritten: 0, exchanges: 1 });
    expect(store.documents().length).toBe(before + 1);
    const t = (await timeline(store, { project: '/home/ana/my-app' }))[0]!;
    expect(t).toMatchObject({ exchanges: 3, end: expect.stringMatching(/^2026-03-02T09:30/) });
    const hit = (await recall(store, 'logout button', { k: 1 })).results[0]!;
    expect(hit.text).toMatch(/^User: Now the logout button is broken/);
    await store.close();

    // A rewritten file (its start changed) is imported again from scratch, replacing its parts.
    writeSession(projects, '/home/ana/my-app', {
      session: 'sess-login',
      cwd: '/home/ana/my-app',
      exchanges: [{ user: 'A brand new start about caching', assistant: 'ok', time: at(60) }],
    });
    const reopened = await ChunkStore.open(join(dir, 'store'));
    const rewritten = await importClaude(reopened, { projectsDir: projects });
    expect(rewritten).toMatchObject({ rewritten: 1, imported: 1 });
    expect((await timeline(reopened, { project: 'my-app' }))[0]).toMatchObject({
      exchanges: 1,
      title: 'A brand new start about caching',
    });
    expect((await recall(reopened, 'logout button')).results.filter((h) => h.agent === null)).toEqual([]);
    await reopened.close();
  });

  it('imports a shortened file again from scratch, keeping its unchanged first part', async () => {
    const exchanges = Array.from({ length: 30 }, (_, i) => ({
      user: `question ${i} about item${i}`,
      assistant: `answer ${i} ${'filler text '.repeat(40)}`,
      time: at(i),
    }));
    const file = writeSession(projects, '/srv/cut', { session: 'cut', cwd: '/srv/cut', exchanges });
    const store = new MemoryChunkStore();
    await importClaude(store, { projectsDir: projects, partChars: 6000 });
    writeSession(projects, '/srv/cut', {
      session: 'cut',
      cwd: '/srv/cut',
      exchanges: exchanges.slice(0, 12),
    });
    const r = await importClaude(store, { projectsDir: projects, partChars: 6000 });
    expect(r).toMatchObject({ rewritten: 1, imported: 1 });
    expect((await timeline(store))[0]).toMatchObject({ session: 'cut', exchanges: 12 });
    expect((await recall(store, 'item3', { k: 1 })).results[0]!.text).toMatch(
      /^User: question 3 about item3/,
    );
    expect((await recall(store, 'item20')).results).toEqual([]);
    expect(store.documents().every((d) => d.path === file)).toBe(true);
  });

  it('leaves an unfinished last line for the next import', async () => {
    const file = writeSession(projects, '/srv/api', {
      session: 's1',
      cwd: '/srv/api',
      exchanges: [{ user: 'first question', assistant: 'first answer', time: at(0) }],
    });
    const [next] = sessionLines({
      session: 's1',
      cwd: '/srv/api',
      exchanges: [{ user: 'second question about queues', assistant: 'second answer', time: at(1) }],
    });
    appendFileSync(file, next!.slice(0, 40));
    const store = new MemoryChunkStore();
    const r1 = await importClaude(store, { projectsDir: projects });
    expect(r1.exchanges).toBe(1);
    expect(r1.notes).toEqual([{ path: file, note: expect.stringMatching(/line 3 is incomplete/) }]);
    appendFileSync(file, `${next!.slice(40)}\n`);
    const r2 = await importClaude(store, { projectsDir: projects });
    expect(r2).toMatchObject({ imported: 1, exchanges: 1, notes: [] });
    expect((await recall(store, 'queues')).results[0]!.text).toContain('second question about queues');
  });

  it('reports a missing or empty projects folder and unreadable files, importing the rest', async () => {
    const store = new MemoryChunkStore();
    const missing = await importClaude(store, { projectsDir: join(dir, 'nowhere') });
    expect(missing).toMatchObject({ files: 0, imported: 0 });
    expect(missing.notes[0]!.note).toMatch(/no Claude Code projects folder/);
    mkdirSync(projects);
    const empty = await importClaude(store, { projectsDir: projects });
    expect(empty.notes[0]!.note).toMatch(/no session files found/);
    buildTree();
    symlinkSync(join(dir, 'gone.jsonl'), join(projects, '-srv-api', 'broken.jsonl'));
    const r = await importClaude(store, { projectsDir: projects });
    expect(r.imported).toBe(3);
    expect(r.notes).toContainEqual({
      path: join(projects, '-srv-api', 'broken.jsonl'),
      note: 'unreadable: ENOENT',
    });
  });

  it('leaves out, with a note, files of the projects folder that hold no session record', async () => {
    const store = new MemoryChunkStore();
    buildTree();
    const garbage = join(projects, '-srv-api', 'garbage.jsonl');
    const empty = join(projects, '-srv-api', 'empty.jsonl');
    writeFileSync(garbage, '{"hello": "world"}\nnot json\n');
    writeFileSync(empty, '');
    const r = await importClaude(store, { projectsDir: projects });
    expect(r).toMatchObject({ files: 3, imported: 3 });
    for (const path of [garbage, empty])
      expect(r.notes).toContainEqual({
        path,
        note: 'not a Claude Code session (no line is a session record); skipped',
      });
    expect((await timeline(store)).map((s) => s.title)).not.toContain('(no messages)');
  });

  it('treats agent-*.jsonl beside the sessions (older Claude Code) as subagent runs of their session', async () => {
    buildTree();
    writeFileSync(
      join(projects, '-srv-api', 'agent-old1.jsonl'),
      sessionText({
        session: 'sess-api',
        cwd: '/srv/api',
        exchanges: [
          { user: '<command-name>/grep</command-name> timezone', assistant: 'found tz.ts', time: at(2) },
        ],
      }),
    );
    const store = new MemoryChunkStore();
    await importClaude(store, { projectsDir: projects });
    const api = await timeline(store, { project: '/srv/api' });
    expect(api).toEqual([expect.objectContaining({ session: 'sess-api', exchanges: 1, subagents: 1 })]);
    const hit = (await recall(store, 'tz.ts', { k: 1 })).results[0]!;
    expect(hit).toMatchObject({ session: 'sess-api', agent: 'old1' });
  });

  it('imports one session file given directly', async () => {
    const { api } = buildTree();
    const store = new MemoryChunkStore();
    const r = await importClaude(store, { sessions: [api] });
    expect(r).toMatchObject({ files: 1, imported: 1 });
    expect((await listProjects(store)).map((p) => p.project)).toEqual(['/srv/api']);
  });

  it('imports a session given directly with its subagent runs: the documents of a full import, once', async () => {
    const { login } = buildTree();
    const full = new MemoryChunkStore();
    await importClaude(full, { projectsDir: projects });
    const fullLogin = full.documents().filter((d) => d.meta?.session === 'sess-login');
    expect(fullLogin.map((d) => d.meta?.agent ?? null).sort()).toEqual(['a1', null]);

    const store = await ChunkStore.open(join(dir, 'store'), { create: true });
    const one = await importClaude(store, { sessions: [login] });
    expect(one).toMatchObject({ files: 2, imported: 2, exchanges: 3 });
    const strip = (docs: DocumentRecord[]) =>
      docs.map(({ id, path, meta }) => ({ id, path, meta })).sort((a, b) => a.id.localeCompare(b.id));
    expect(strip(store.documents())).toEqual(strip(fullLogin));
    expect(await timeline(store)).toEqual([
      expect.objectContaining({ session: 'sess-login', exchanges: 2, subagents: 1 }),
    ]);
    expect((await recall(store, 'SameSite cookie.ts', { k: 1 })).results[0]).toMatchObject({
      session: 'sess-login',
      agent: 'a1',
    });
    // Again, and then a full import: nothing new for this session, nothing twice.
    expect(await importClaude(store, { sessions: [login] })).toMatchObject({ imported: 0, unchanged: 2 });
    expect(await importClaude(store, { projectsDir: projects })).toMatchObject({ imported: 1, unchanged: 2 });
    expect(strip(store.documents())).toEqual(strip(full.documents()));
    // Given as well, a run is imported once.
    const both = new MemoryChunkStore();
    const agent = join(
      projects,
      encodeProject('/home/ana/my-app'),
      'sess-login',
      'subagents',
      'agent-a1.jsonl',
    );
    expect(await importClaude(both, { sessions: [login, agent] })).toMatchObject({ files: 2, imported: 2 });
    await store.close();
  });

  it('imports with a session given directly the older runs beside it that name it, and no others', async () => {
    const { api } = buildTree();
    const folder = join(projects, '-srv-api');
    const run = (session: string, words: string) =>
      sessionText({ session, cwd: '/srv/api', exchanges: [{ user: words, assistant: 'ok', time: at(2) }] });
    writeFileSync(join(folder, 'agent-mine.jsonl'), run('sess-api', 'look for timezone helpers'));
    writeFileSync(join(folder, 'agent-theirs.jsonl'), run('sess-other', 'look for cache helpers'));
    mkdirSync(join(folder, 'subagents'));
    writeFileSync(join(folder, 'subagents', 'agent-deep.jsonl'), run('sess-api', 'look for clock helpers'));
    const store = new MemoryChunkStore();
    const r = await importClaude(store, { sessions: [api] });
    expect(r).toMatchObject({ files: 3, imported: 3 });
    expect(
      store
        .documents()
        .map((d) => d.meta?.agent ?? null)
        .sort(),
    ).toEqual(['deep', 'mine', null]);
    expect(await timeline(store)).toEqual([expect.objectContaining({ session: 'sess-api', subagents: 2 })]);
  });

  it('refuses a file given directly that is not a session, writing nothing', async () => {
    buildTree();
    const passwd = join(dir, 'passwd');
    writeFileSync(passwd, 'root:x:0:0:root:/root:/bin/bash\n');
    const store = new MemoryChunkStore();
    const err = await caught(importClaude(store, { sessions: [passwd] }));
    expect(err).toMatchObject({
      code: 'BAD_INPUT',
      message: expect.stringContaining('not a Claude Code session'),
    });
    expect(store.documents()).toEqual([]);
  });

  it('takes the earliest and latest times of a session, whatever their order, and leaves out times of no real year', async () => {
    const folder = join(projects, encodeProject('/srv/odd'));
    mkdirSync(folder, { recursive: true });
    writeSession(projects, '/srv/odd', {
      session: 'sess-odd',
      cwd: '/srv/odd',
      exchanges: [
        { user: 'second question', assistant: 'ok', time: '2026-03-02T11:00:00.000Z' },
        { user: 'first question', assistant: 'ok', time: '2026-03-02T09:00:00.000Z' },
        { user: 'bogus clock', assistant: 'ok', time: '+200000-09-13T00:00:00.000Z' },
        { user: 'before year 0', assistant: 'ok', time: '-000001-01-01T00:00:00.000Z' },
      ],
    });
    const store = new MemoryChunkStore();
    await importClaude(store, { projectsDir: projects });
    const [s] = await timeline(store);
    expect(s!.start).toBe('2026-03-02T09:00:00.000Z');
    expect(s!.end?.startsWith('2026-03-02T11:00:0')).toBe(true);
  });

  it('keeps every time as toISOString writes it, whatever form the session file used', async () => {
    const folder = join(projects, encodeProject('/srv/tz'));
    mkdirSync(join(folder, 'sess-tz', 'subagents'), { recursive: true });
    const spec = (user: string, time: string) => ({
      session: 'sess-tz',
      cwd: '/srv/tz',
      exchanges: [{ user, assistant: 'ok', time }],
    });
    // Seconds without milliseconds, and an offset: both are the same instants as the .000Z forms.
    writeFileSync(
      join(folder, 'sess-tz.jsonl'),
      sessionText(spec('main question about clocks', '2026-03-02T10:00:00.000Z')).replaceAll('.000Z', 'Z'),
    );
    writeFileSync(
      join(folder, 'sess-tz', 'subagents', 'agent-7.jsonl'),
      sessionText(spec('subagent question about clocks', '2026-03-02T10:06:00.000Z')).replaceAll(
        '.000Z',
        '+00:00',
      ),
    );
    const store = new MemoryChunkStore();
    await importClaude(store, { projectsDir: projects });
    expect(await timeline(store)).toEqual([
      expect.objectContaining({ start: '2026-03-02T10:00:00.000Z', end: '2026-03-02T10:06:05.000Z' }),
    ]);
    expect(await listProjects(store)).toEqual([
      expect.objectContaining({ first: '2026-03-02T10:00:00.000Z', last: '2026-03-02T10:06:05.000Z' }),
    ]);
    const times = (await recall(store, 'question about clocks', { k: 2 })).results.map((h) => h.time).sort();
    expect(times).toEqual(['2026-03-02T10:00:00.000Z', '2026-03-02T10:06:00.000Z']);
    // Stored so too, for every reader of the store, not only the catalog.
    expect(
      store
        .documents()
        .flatMap((d) => [d.meta?.first, d.meta?.last])
        .sort(),
    ).toEqual([
      '2026-03-02T10:00:00.000Z',
      '2026-03-02T10:00:05.000Z',
      '2026-03-02T10:06:00.000Z',
      '2026-03-02T10:06:05.000Z',
    ]);
    const hit = (await store.search('subagent question about clocks', { k: 1 }))[0]!;
    expect((await store.getChunk(hit.id))!.time).toBe('2026-03-02T10:06:00.000Z');
  });

  it('splits a big session into parts at exchange boundaries, each committed whole', async () => {
    const exchanges = Array.from({ length: 40 }, (_, i) => ({
      user: `question ${i} about topic${i}`,
      assistant: `answer ${i} ${'lorem ipsum '.repeat(50)}`,
      time: at(i),
    }));
    writeSession(projects, '/srv/big', { session: 'big', cwd: '/srv/big', exchanges });
    const store = new MemoryChunkStore();
    const r = await importClaude(store, { projectsDir: projects, partChars: 4000, segmentChars: 8000 });
    expect(r.exchanges).toBe(40);
    expect(store.documents().length).toBeGreaterThan(5);
    expect((await timeline(store))[0]).toMatchObject({ exchanges: 40, title: 'question 0 about topic0' });
    const hit = (await recall(store, 'topic37', { k: 1 })).results[0]!;
    expect(hit.text).toMatch(/^User: question 37 about topic37/);
  });
});
