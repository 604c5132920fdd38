import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { writeSession } from '../../../benchmarks/claude-corpus.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { cli } from '../helpers.ts';

const dir = tempDir('rlm-cli-claude-');
const config = join(dir, 'claude-home');
const projects = join(config, 'projects');
const store = join(dir, 'store');
const env = { CLAUDE_CONFIG_DIR: config };
const BIN = fileURLToPath(new URL('../../../bin/rlm.js', import.meta.url));

beforeAll(() => {
  writeSession(projects, '/home/ana/my-app', {
    session: 'sess-login',
    cwd: '/home/ana/my-app',
    branch: 'fix-login',
    summary: 'Flaky login test',
    exchanges: [
      {
        user: 'The login test is flaky on CI',
        assistant: 'It raced the session cookie; awaiting the redirect fixed it.',
        time: '2026-03-02T09:00:00.000Z',
      },
    ],
  });
  writeSession(projects, '/srv/api', {
    session: 'sess-api',
    cwd: '/srv/api',
    exchanges: [
      {
        user: 'Reports are off by one hour',
        assistant: 'Parse the dates as UTC.',
        time: '2026-02-10T10:00:00.000Z',
      },
    ],
  });
});

/**
 * A session of /srv/tz with a subagent run whose times are written without milliseconds, as Claude Code
 * may write them. Returns the session's file.
 */
function sessionWithRun(projectsDir: string): string {
  const file = writeSession(projectsDir, '/srv/tz', {
    session: 'sess-a',
    cwd: '/srv/tz',
    exchanges: [
      {
        user: 'Why does the build fail?',
        assistant: 'A missing import.',
        time: '2026-03-02T10:00:00.000Z',
      },
    ],
  });
  const runs = join(projectsDir, '-srv-tz', 'sess-a', 'subagents');
  mkdirSync(runs, { recursive: true });
  writeFileSync(
    join(runs, 'agent-42.jsonl'),
    [
      {
        type: 'user',
        sessionId: 'sess-a',
        cwd: '/srv/tz',
        timestamp: '2026-03-02T10:05:00Z',
        message: { role: 'user', content: 'Find the zebrafish import' },
      },
      {
        type: 'assistant',
        sessionId: 'sess-a',
        cwd: '/srv/tz',
        timestamp: '2026-03-02T10:06:00Z',
        message: { role: 'assistant', content: [{ type: 'text', text: 'zebrafish.ts, line 3.' }] },
      },
    ]
      .map((l) => `${JSON.stringify(l)}\n`)
      .join(''),
  );
  return file;
}

describe('rlm claude', () => {
  it('ingests the default projects folder (CLAUDE_CONFIG_DIR), then skips unchanged sessions', async () => {
    const r = await cli(['claude', 'ingest', '--store', store, '--json'], { env });
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ files: 2, imported: 2, unchanged: 0, exchanges: 2, notes: [] });
    const again = await cli(['claude', 'ingest', '--store', store], { env });
    expect(again.stdout).toMatch(/^2 session files: 0 imported \(0 new exchanges\), 2 unchanged; store: /);
  });

  it('shows progress on a terminal, and clears it', async () => {
    const r = await cli(['claude', 'ingest', '--store', join(dir, 'tty-store')], { env, tty: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/\] +0% 0\/2 sessions sess-login\.jsonl/);
    expect(r.stderr.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('says so when the projects folder is missing, without failing', async () => {
    const r = await cli(
      ['claude', 'ingest', '--dir', join(dir, 'nowhere'), '--store', join(dir, 'empty-store')],
      {
        env,
      },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/note: .*nowhere: no Claude Code projects folder here; nothing to import/);
  });

  it('refuses a --session file that does not exist, before creating the store', async () => {
    const r = await cli([
      'claude',
      'ingest',
      '--session',
      join(dir, 'nope.jsonl'),
      '--store',
      join(dir, 's2'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--session: no such file: .*nope\.jsonl/);
    expect(existsSync(join(dir, 's2'))).toBe(false);
  });

  it('refuses a --session file that is not a Claude Code session, leaving no store', async () => {
    const passwd = join(dir, 'passwd');
    writeFileSync(passwd, 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/:/bin/false\n');
    const r = await cli(['claude', 'ingest', '--session', passwd, '--store', join(dir, 's3')]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain(
      `${passwd} is not a Claude Code session file: none of its lines is a session record`,
    );
    expect(existsSync(join(dir, 's3'))).toBe(false);
  });

  it('imports a --session with its subagent runs, as a full import does', async () => {
    const other = join(dir, 'claude-home-2', 'projects');
    const file = sessionWithRun(other);
    const s = join(dir, 'session-store');
    const r = await cli(['claude', 'ingest', '--session', file, '--store', s, '--json']);
    expect(r.json()).toMatchObject({ files: 2, imported: 2, exchanges: 2 });
    const t = await cli(['claude', 'timeline', '--store', s, '--json']);
    expect(t.json()).toEqual({
      sessions: [expect.objectContaining({ session: 'sess-a', exchanges: 1, subagents: 1 })],
    });
    const hit = await cli(['claude', 'recall', 'zebrafish', '-k', '1', '--store', s, '--json']);
    expect(hit.json<{ results: unknown[] }>().results).toEqual([
      expect.objectContaining({ session: 'sess-a', project: '/srv/tz', agent: '42' }),
    ]);
    // Again, then a full import: both files are imported already.
    const again = await cli(['claude', 'ingest', '--session', file, '--store', s, '--json']);
    expect(again.json()).toMatchObject({ files: 2, imported: 0, unchanged: 2 });
    const all = await cli(['claude', 'ingest', '--dir', other, '--store', s, '--json']);
    expect(all.json()).toMatchObject({ files: 2, imported: 0, unchanged: 2, documents: 2 });
  });

  it('gives every time of timeline, context and recall in one form, whatever the session files wrote', async () => {
    const other = join(dir, 'claude-home-tz', 'projects');
    sessionWithRun(other);
    const s = join(dir, 'tz-store');
    expect((await cli(['claude', 'ingest', '--dir', other, '--store', s])).code).toBe(0);
    const t = await cli(['claude', 'timeline', '--store', s, '--json']);
    expect(t.json()).toEqual({
      sessions: [
        {
          session: 'sess-a',
          project: '/srv/tz',
          title: 'Why does the build fail?',
          start: '2026-03-02T10:00:00.000Z',
          end: '2026-03-02T10:06:00.000Z',
          exchanges: 1,
          subagents: 1,
        },
      ],
    });
    const c = await cli(['claude', 'context', '--project', '/srv/tz', '--store', s, '--json']);
    expect(c.json<{ sessions: unknown[] }>().sessions).toEqual([
      expect.objectContaining({ start: '2026-03-02T10:00:00.000Z', end: '2026-03-02T10:06:00.000Z' }),
    ]);
    const hit = await cli(['claude', 'recall', 'zebrafish', '-k', '1', '--store', s, '--json']);
    expect(hit.json<{ results: unknown[] }>().results).toEqual([
      expect.objectContaining({ agent: '42', time: '2026-03-02T10:05:00.000Z' }),
    ]);
  });

  it('lists projects and the timeline as JSON', async () => {
    const p = await cli(['claude', 'projects', '--store', store, '--json']);
    expect(
      p.json<{ projects: { project: string; sessions: number }[] }>().projects.map((x) => x.project),
    ).toEqual(['/home/ana/my-app', '/srv/api']);
    const t = await cli(['claude', 'timeline', '--store', store, '--since', '2026-03-01', '--json']);
    expect(t.json()).toEqual({
      sessions: [
        {
          session: 'sess-login',
          project: '/home/ana/my-app',
          title: 'Flaky login test',
          start: '2026-03-02T09:00:00.000Z',
          end: '2026-03-02T09:00:05.000Z',
          exchanges: 1,
          subagents: 0,
        },
      ],
    });
    const text = await cli(['claude', 'timeline', '--store', store, '--project', 'api']);
    expect(text.stdout).toBe(
      '2026-02-10 10:00 → 2026-02-10 10:00  1 exchange  /srv/api  Reports are off by one hour\n',
    );
  });

  it('recalls exchanges across projects, and rejects bad filters as usage errors', async () => {
    const r = await cli(['claude', 'recall', 'flaky login cookie', '--store', store, '-k', '1', '--json']);
    expect(r.code).toBe(0);
    const [hit] = r.json<{ results: Record<string, unknown>[] }>().results;
    expect(hit).toMatchObject({
      session: 'sess-login',
      project: '/home/ana/my-app',
      time: '2026-03-02T09:00:00.000Z',
    });
    expect(hit!.text).toContain('awaiting the redirect');
    const bad = await cli(['claude', 'recall', 'x', '--store', store, '--since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since must be an ISO date/);
    const none = await cli(['claude', 'recall', 'x', '--store', store, '--project', 'nope']);
    expect(none.code).toBe(2);
  });

  it('answers over the matching sessions with --answer (scripted model)', async () => {
    const rules = join(dir, 'rules.json');
    writeFileSync(
      rules,
      JSON.stringify({
        rules: [
          {
            depth: 0,
            match: 'how did I fix',
            reply:
              "Let me look.\n```repl\nconst hit = grep('awaiting the redirect')[0];\nFINAL(hit ? 'By awaiting the redirect.' : 'not found');\n```",
          },
        ],
      }),
    );
    const r = await cli([
      'claude',
      'recall',
      'how did I fix the flaky login test',
      '--store',
      store,
      '--answer',
      '--model',
      `scripted:${rules}`,
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      answer: 'By awaiting the redirect.',
      status: 'final',
      sessions: ['sess-login'],
    });
    // The `rlm answer --json` object (CONTRACTS.md), plus the sessions.
    expect(Object.keys(r.json()).sort()).toEqual(
      [
        'answer',
        'elapsedMs',
        'iterations',
        'maxDepthReached',
        'sessions',
        'status',
        'subCalls',
        'usage',
      ].sort(),
    );
  });

  it('forgets nothing when last segments name several projects, listing them', async () => {
    const cfg = join(dir, 'two-apps');
    for (const [cwd, session] of [
      ['/home/ana/work/app', 'sess-work'],
      ['/home/ana/play/app', 'sess-play'],
    ] as const)
      writeSession(join(cfg, 'projects'), cwd, {
        session,
        cwd,
        exchanges: [
          { user: 'Why is it slow?', assistant: 'An index was missing.', time: '2026-03-02T09:00:00.000Z' },
        ],
      });
    const copy = join(dir, 'two-apps-store');
    await cli(['claude', 'ingest', '--store', copy], { env: { CLAUDE_CONFIG_DIR: cfg } });
    const r = await cli(['claude', 'forget', '--project', 'app', '--store', copy]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "rlm: 'app' matches 2 projects (/home/ana/play/app, /home/ana/work/app); give the one to forget by its path, nothing was deleted [BAD_INPUT]\n",
    );
    expect(
      (await cli(['claude', 'projects', '--store', copy, '--json'])).json<{ projects: unknown[] }>().projects,
    ).toHaveLength(2);
    const one = await cli(['claude', 'forget', '--project', 'work/app', '--store', copy, '--json']);
    expect(one.json()).toMatchObject({ projects: ['/home/ana/work/app'], sessions: 1 });
  });

  it('forgets a project', async () => {
    const copy = join(dir, 'forget-store');
    await cli(['claude', 'ingest', '--store', copy], { env });
    const r = await cli(['claude', 'forget', '--project', '/srv/api', '--store', copy, '--json']);
    expect(r.json()).toEqual({ projects: ['/srv/api'], sessions: 1, documents: 1 });
    const p = await cli(['claude', 'projects', '--store', copy, '--json']);
    expect(p.json<{ projects: { project: string }[] }>().projects.map((x) => x.project)).toEqual([
      '/home/ana/my-app',
    ]);
    expect((await cli(['claude', 'recall', 'reports hour', '--store', copy, '--json'])).json()).toEqual({
      results: [],
    });
  });

  it('installs and removes hooks, keeping other settings and hooks, idempotently', async () => {
    const settings = join(config, 'settings.json');
    const theirs = { type: 'command', command: 'echo bye' };
    writeFileSync(
      settings,
      JSON.stringify({
        model: 'opus',
        hooks: { SessionEnd: [{ hooks: [theirs] }], Stop: [{ hooks: [theirs] }] },
      }),
    );
    for (let i = 0; i < 2; i++) {
      const r = await cli(['claude', 'hooks', 'install', '--store', store, '--json'], { env });
      expect(r.code).toBe(0);
    }
    const installed = JSON.parse(readFileSync(settings, 'utf8'));
    // Absolute paths of this Node and of rlm's bin: no `rlm` on PATH or recent default `node` needed.
    const log = join(config, 'rlm-hook.log');
    const command =
      `exec 3<&0; { ${process.execPath} ${BIN} claude ingest --hook --store ${store} --log ${log} <&3 2>>${log} || ` +
      `{ s=$?; printf '%s error: the rlm hook could not start (exit %s); run rlm claude hooks install again\\n' ` +
      `"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$s" >>${log}; }; } >/dev/null 2>&1 &`;
    expect(installed).toEqual({
      model: 'opus',
      hooks: {
        SessionEnd: [{ hooks: [theirs] }, { hooks: [{ type: 'command', command, timeout: 10 }] }],
        Stop: [{ hooks: [theirs] }],
        PreCompact: [{ hooks: [{ type: 'command', command, timeout: 10 }] }],
      },
    });
    expect(readdirSync(config).filter((f) => f !== 'settings.json' && f !== 'projects')).toEqual([]);
    const removed = await cli(['claude', 'hooks', 'remove', '--json'], { env });
    expect(removed.json()).toEqual({ settings, removed: 2 });
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({
      model: 'opus',
      hooks: { SessionEnd: [{ hooks: [theirs] }], Stop: [{ hooks: [theirs] }] },
    });
  });

  it('prints the hook command, and takes another way to start rlm with --rlm', async () => {
    const settings = join(dir, 'rlm-flag-settings.json');
    const r = await cli([
      'claude',
      'hooks',
      'install',
      '--settings',
      settings,
      '--store',
      store,
      '--rlm',
      'npx rlm',
    ]);
    expect(r.stdout).toMatch(
      /^installed SessionEnd and PreCompact hooks in .*:\n {2}exec 3<&0; \{ npx rlm claude ingest --hook /,
    );
    const hooks = JSON.parse(readFileSync(settings, 'utf8')).hooks;
    expect(hooks.SessionEnd[0].hooks[0].command).toMatch(
      /^exec 3<&0; \{ npx rlm claude ingest --hook --store /,
    );
  });

  it('keeps the settings file private and writes through a symlink to it (settings kept with dotfiles)', async () => {
    const dotfiles = join(dir, 'dotfiles');
    mkdirSync(dotfiles, { recursive: true });
    const real = join(dotfiles, 'claude-settings.json');
    writeFileSync(real, JSON.stringify({ env: { ANTHROPIC_API_KEY: 'sk-secret' } }));
    chmodSync(real, 0o600);
    const link = join(dir, 'linked-settings.json');
    symlinkSync(real, link);
    for (const verb of ['install', 'remove']) {
      const r = await cli(['claude', 'hooks', verb, '--settings', link, '--store', store]);
      expect(r.code, r.stderr).toBe(0);
      expect(lstatSync(link).isSymbolicLink(), verb).toBe(true);
      expect(statSync(real).mode & 0o777, verb).toBe(0o600);
    }
    expect(JSON.parse(readFileSync(real, 'utf8'))).toEqual({ env: { ANTHROPIC_API_KEY: 'sk-secret' } });
    const fresh = join(dir, 'fresh-settings.json');
    expect((await cli(['claude', 'hooks', 'install', '--settings', fresh, '--store', store])).code).toBe(0);
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
  });

  it('prints the hook command of a PostgreSQL store without its password, which the settings keep', async () => {
    const settings = join(dir, 'pg-settings.json');
    const url = 'postgres://ana:s3cret@127.0.0.1:1/rlm?schema=cc';
    const args = ['claude', 'hooks', 'install', '--settings', settings, '--store', url];
    for (const json of [false, true]) {
      const r = await cli(json ? [...args, '--json'] : args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('ana:***@127.0.0.1:1');
      expect(r.stdout).not.toContain('s3cret');
    }
    expect(readFileSync(settings, 'utf8')).toContain('s3cret');
  });

  it('refuses to touch a settings file that is not valid JSON', async () => {
    const settings = join(dir, 'broken-settings.json');
    writeFileSync(settings, '{ "model": ');
    const r = await cli(['claude', 'hooks', 'install', '--settings', settings, '--store', store]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not valid JSON; fix it first/);
    expect(readFileSync(settings, 'utf8')).toBe('{ "model": ');
  });

  it('refuses to replace a hooks entry of the user that is not in the form Claude Code reads', async () => {
    for (const [name, text, entry] of [
      ['s3.json', '{"hooks":{"SessionEnd":"oops"}}', '"hooks.SessionEnd" is not a list of hook groups'],
      ['s4.json', '{"hooks":{"PreCompact":{"a":1}}}', '"hooks.PreCompact" is not a list of hook groups'],
      ['s5.json', '{"hooks":["x"]}', '"hooks" is not an object'],
    ] as const) {
      const settings = join(dir, name);
      writeFileSync(settings, text);
      const r = await cli(['claude', 'hooks', 'install', '--settings', settings, '--store', store]);
      expect(r.code, name).toBe(2);
      expect(r.stderr).toBe(`rlm: ${settings}: ${entry}; fix it first (nothing was changed) [BAD_INPUT]\n`);
      expect(readFileSync(settings, 'utf8')).toBe(text);
    }
  });

  it('runs as a hook: silent, exit 0, the session imported in the background', async () => {
    const hookStore = join(dir, 'hook-store');
    const log = join(dir, 'hook.log');
    const transcript = join(projects, '-srv-api', 'sess-api.jsonl');
    const r = await cli(['claude', 'ingest', '--hook', '--store', hookStore, '--log', log], {
      stdin: JSON.stringify({
        session_id: 'sess-api',
        transcript_path: transcript,
        hook_event_name: 'SessionEnd',
      }),
      // The transcript is in this Claude Code's projects folder, the one place the hook takes one from.
      env,
    });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // The background import is done once its session is in the store and it has let go of the store.
    let sessions = 0;
    while (sessions === 0 || existsSync(join(hookStore, 'write.lock'))) {
      if (existsSync(log)) break; // it failed: the assertions below say how
      await new Promise((done) => setTimeout(done, 200));
      if (!existsSync(join(hookStore, 'rlm-store.json'))) continue;
      const s = await ChunkStore.open(hookStore);
      sessions = s.documents().length;
      await s.close();
    }
    expect(sessions).toBe(1);
    expect(existsSync(log)).toBe(false);
  });

  it('as a hook, takes a PostgreSQL URL for a URL: no folder of that name, and no password in the log', async () => {
    const cwd = join(dir, 'url-hook-project');
    mkdirSync(cwd, { recursive: true });
    const log = join(dir, 'url-hook.log');
    // Port 1 refuses: the import fails, and says so in the log, naming the store with its password hidden.
    const url = 'postgres://ana:s3cret@127.0.0.1:1/rlm?schema=cc';
    const r = await cli(['claude', 'ingest', '--hook', '--store', url, '--log', log], {
      stdin: JSON.stringify({
        session_id: 'sess-api',
        transcript_path: join(projects, '-srv-api', 'sess-api.jsonl'),
      }),
      env,
      cwd,
    });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const deadline = Date.now() + 60_000;
    while (!existsSync(log) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    const text = readFileSync(log, 'utf8');
    expect(text).toContain('error: importing');
    expect(text).toContain('postgres://ana:***@127.0.0.1:1/rlm?schema=cc');
    expect(text).not.toContain('s3cret');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('as a hook, refuses a transcript_path outside the projects folder: one line in the log, no store', async () => {
    const log = join(dir, 'outside-hook.log');
    const outside = join(dir, 'elsewhere', 'sess-api.jsonl');
    mkdirSync(dirname(outside));
    copyFileSync(join(projects, '-srv-api', 'sess-api.jsonl'), outside);
    // A link in the projects folder to a file elsewhere is elsewhere too.
    const link = join(projects, '-srv-api', 'linked.jsonl');
    symlinkSync(outside, link);
    // The projects folder is shared by the other tests, whose imports must not meet the link.
    onTestFinished(() => rmSync(link, { force: true }));
    for (const path of [outside, link, '/etc/passwd']) {
      const r = await cli(
        ['claude', 'ingest', '--hook', '--store', join(dir, 'outside-store'), '--log', log],
        {
          stdin: JSON.stringify({
            session_id: 'x',
            transcript_path: path,
            cwd: dir,
            hook_event_name: 'SessionEnd',
          }),
          env,
        },
      );
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines.map((l) => l.replace(/^\S+Z /, ''))).toEqual(
      [outside, link, '/etc/passwd'].map(
        (p) =>
          `error: transcript_path ${p} is not in ${projects}, where Claude Code keeps sessions; not imported`,
      ),
    );
    expect(existsSync(join(dir, 'outside-store'))).toBe(false);
  });

  it('as a hook, logs bad input instead of failing', async () => {
    const log = join(dir, 'bad-hook.log');
    const r = await cli(['claude', 'ingest', '--hook', '--store', join(dir, 'x'), '--log', log], {
      stdin: 'not json',
    });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(log, 'utf8')).toMatch(/error: .*JSON/);
  });

  it('gives the session-start context: text, --json, and nothing when nothing is known', async () => {
    const ctxStore = join(dir, 'context-store');
    await cli(['claude', 'ingest', '--store', ctxStore], { env });
    await cli([
      'remember',
      'Deploys go through make ship.',
      '--topic',
      'deploy',
      '--tags',
      'project:/home/ana/my-app',
      '--store',
      ctxStore,
    ]);
    const text = await cli(['claude', 'context', '--project', '/home/ana/my-app', '--store', ctxStore]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^## What rlm remembers about this project \(\/home\/ana\/my-app\)\n/);
    expect(text.stdout).toContain('] Deploys go through make ship. (mem-');
    expect(text.stdout).toContain(' · 1 exchange · Flaky login test\n');
    const json = await cli([
      'claude',
      'context',
      '--project',
      '/home/ana/my-app',
      '--max-tokens',
      '60',
      '--json',
      '--store',
      ctxStore,
    ]);
    expect(json.json<{ tokens: number; text: string }>().tokens).toBeLessThanOrEqual(60);
    const none = await cli(['claude', 'context', '--project', '/elsewhere', '--store', ctxStore]);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'rlm: nothing remembered about /elsewhere\n' });
    // The commands' overview names the budget flag as `claude context --help` does.
    expect((await cli(['claude', '--help'])).stdout).toContain('context [--project DIR] [--max-tokens N]');
    // Something remembered that does not fit the budget is not "nothing remembered".
    const tight = ['claude', 'context', '--project', '/home/ana/my-app', '--store', ctxStore];
    for (const r of [
      await cli([...tight, '--max-tokens', '10']),
      await cli(tight, { env: { RLM_CONTEXT_TOKENS: '10' } }),
    ])
      expect(r).toMatchObject({
        code: 0,
        stdout: '',
        stderr: 'rlm: nothing rlm remembers about /home/ana/my-app fits in 10 tokens (--max-tokens N)\n',
      });
    const bad = await cli(['claude', 'context', '--store', ctxStore], {
      env: { RLM_CONTEXT_TOKENS: 'lots' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("RLM_CONTEXT_TOKENS must be an integer >= 1, got 'lots'");
  });

  it('as a SessionStart hook: the project from the input, the starting session left out, never failing', async () => {
    const ctxStore = join(dir, 'context-store');
    const log = join(dir, 'context-hook.log');
    const run = (input: string, extra: Record<string, string> = {}, store = ctxStore) =>
      cli(['claude', 'context', '--hook', '--store', store, '--log', log], { stdin: input, env: extra });
    const hook = await run(
      JSON.stringify({ cwd: '/home/ana/my-app', session_id: 'other', source: 'startup' }),
    );
    expect(hook).toMatchObject({ code: 0, stderr: '' });
    expect(hook.stdout).toContain('Flaky login test');
    const resumed = await run(JSON.stringify({ cwd: '/home/ana/my-app', session_id: 'sess-login' }));
    expect(resumed.stdout).not.toContain('Flaky login test');
    expect(resumed.stdout).toContain('Deploys go through make ship.');
    // No store yet: nothing remembered, nothing wrong.
    expect(await run(JSON.stringify({ cwd: '/x' }), {}, join(dir, 'no-store'))).toMatchObject({
      code: 0,
      stdout: '',
    });
    expect(existsSync(log)).toBe(false);
    // Inside a Claude Code that rlm runs as a model: nothing at all.
    expect(await run(JSON.stringify({ cwd: '/home/ana/my-app' }), { RLM_MODEL_CALL: '1' })).toMatchObject({
      code: 0,
      stdout: '',
    });
    expect(await run('not json')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await run('{}', { RLM_CONTEXT_TOKENS: '0' })).toMatchObject({ code: 0, stdout: '' });
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\S+ error: session start context: .*JSON/);
    expect(lines[1]).toMatch(
      /^\S+ error: session start context: RLM_CONTEXT_TOKENS must be an integer >= 1, got '0' \[BAD_INPUT\]$/,
    );
  });

  it('as a SessionEnd hook inside a Claude Code that rlm runs as a model, imports nothing', async () => {
    const quiet = join(dir, 'model-call-store');
    const log = join(dir, 'model-call.log');
    const r = await cli(['claude', 'ingest', '--hook', '--store', quiet, '--log', log], {
      // Input a hook would log as wrong: with the marker, it is not even read.
      stdin: '{}',
      env: { RLM_MODEL_CALL: '1' },
    });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(quiet)).toBe(false);
    expect(existsSync(log)).toBe(false);
  });
});
