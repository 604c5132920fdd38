import { promises as fs, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { tempDir } from '../../helpers/temp.ts';
import { cli } from '../helpers.ts';

async function journal(dir: string): Promise<string[]> {
  const m = JSON.parse(await fs.readFile(path.join(dir, 'rlm-store.json'), 'utf8'));
  return (await fs.readFile(path.join(dir, m.memory.journal), 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean);
}

describe('rlm remember / recall / topics / forget', () => {
  it('remembers from an argument and stdin, recalls with filters, lists topics, forgets', async () => {
    const store = path.join(tempDir(), 'store');
    const a = await cli([
      'remember',
      'Use pnpm, not npm, in the web repo',
      '--topic',
      'tooling',
      '--importance',
      'high',
      '--tags',
      'js,web',
      '--store',
      store,
      '--json',
    ]);
    expect(a.code, a.stderr).toBe(0);
    const { id, topic, importance } = a.json<{ id: string; topic: string; importance: string }>();
    expect({ topic, importance }).toEqual({ topic: 'tooling', importance: 'high' });
    const b = await cli(['remember', '-', '--store', store], {
      stdin: 'The user prefers short answers in French.\n',
    });
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/^mem-\S+\n$/);

    const r = await cli(['recall', 'pnpm or npm?', '--store', store, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const results = r.json<{ results: { id: string; text: string; weight: number; score: number }[] }>()
      .results;
    expect(results[0]).toMatchObject({
      id,
      text: 'Use pnpm, not npm, in the web repo',
      topic: 'tooling',
      importance: 'high',
      tags: ['js', 'web'],
    });
    expect(Object.keys(results[0]!).sort()).toEqual([
      'archived',
      'created',
      'id',
      'importance',
      'score',
      'tags',
      'text',
      'topic',
      'weight',
    ]);
    expect(
      (await cli(['recall', 'answers', '--topic', 'tooling', '--store', store, '--json'])).json(),
    ).toEqual({ results: [] });
    const human = await cli(['recall', 'pnpm', '--store', store]);
    expect(human.stdout).toContain(`${id}  `);
    expect(human.stdout).toContain('[tooling, high, weight');

    const t = await cli(['topics', '--store', store, '--json']);
    expect(t.json()).toEqual({
      topics: [
        { topic: 'general', memories: 1, archived: 0 },
        { topic: 'tooling', memories: 1, archived: 0 },
      ],
    });

    const f = await cli(['forget', id, '--store', store, '--json']);
    expect(f.json()).toEqual({ forgotten: 1, ids: [id], summaries: [], restored: [] });
    const again = await cli(['forget', id, '--store', store]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no memory with id .* \[NOT_FOUND\]/);
  });

  it('takes a topic of 200 characters, emoji included (one each, not two UTF-16 units)', async () => {
    const store = path.join(tempDir(), 'store');
    const r = await cli(['remember', 'x', '--topic', '🦘'.repeat(200), '--store', store, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json<{ topic: string }>().topic).toBe('🦘'.repeat(200));
  });

  it.each([
    [['remember', 'x', '--importance', 'urgent'], /unknown importance "urgent"/],
    [['remember', ''], /text is empty/],
    [['remember', 'x', '--topic', 'y'.repeat(201)], /topic is 201 characters/],
    // Characters as a person counts them: 201 emoji are 201, not 402.
    [['remember', 'x', '--topic', '🦘'.repeat(201)], /topic is 201 characters/],
    [['remember', 'x', '--decay-rate', 'fast'], /--decay-rate must be a number/],
    [['recall', 'x', '--since', 'yesterday'], /--since must be an ISO date/],
    [['remember', 'x', '--tags', ''], /--tags: a tag is empty or only spaces/],
    [['remember', 'x', '--tags', 'a, ,b'], /--tags: a tag is empty or only spaces, got 'a,,b'/],
    [['recall', 'x', '--tags', 'a,'], /--tags: a tag is empty or only spaces/],
  ])('bad input %# gives one line, exit 2, and writes nothing', async (args, message) => {
    const store = path.join(tempDir(), 'store');
    await cli(['remember', 'first', '--store', store]);
    const r = await cli([...args, '--store', store]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(await journal(store)).toHaveLength(1);
  });

  it('leaves the line ends that end stdin out of the memory, and keeps its line breaks', async () => {
    const store = path.join(tempDir(), 'store');
    const text = async (stdin: string) => {
      const r = await cli(['remember', '-', '--store', store, '--json'], { stdin });
      expect(r.code, r.stderr).toBe(0);
      const peek = await cli(['peek', r.json<{ id: string }>().id, '--store', store, '--json']);
      return peek.json<{ text: string }>().text;
    };
    expect(await text('The user prefers short answers in French.\n')).toBe(
      'The user prefers short answers in French.',
    );
    expect(await text('one\ntwo\r\n\n')).toBe('one\ntwo');
  });

  it('refuses a text over 1 MiB from stdin', async () => {
    const store = path.join(tempDir(), 'store');
    const r = await cli(['remember', '-', '--store', store], { stdin: 'a'.repeat(1024 * 1024 + 10) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/at most 1048576 \(1 MiB\)/);
    await expect(fs.access(path.join(store, 'rlm-store.json'))).rejects.toThrow();
  });
});

describe('rlm decay / restore / consolidate', () => {
  it('decays with --now and settings flags, restores, and --archived finds archived ones', async () => {
    const store = path.join(tempDir(), 'store');
    const remember = async (text: string, importance: string) =>
      (
        await cli([
          'remember',
          text,
          '--importance',
          importance,
          '--now',
          '2026-01-01',
          '--store',
          store,
          '--json',
        ])
      ).json<{ id: string }>().id;
    const low = await remember('temporary build flag', 'low');
    const critical = await remember('the build must stay reproducible', 'critical');
    const d = await cli(['decay', '--now', '2026-01-20', '--store', store, '--json']);
    expect(d.json()).toEqual({ decayed: 1, archived: 0, ids: [] });
    const d2 = await cli([
      'decay',
      '--now',
      '2026-01-20',
      '--multipliers',
      'low=4',
      '--store',
      store,
      '--json',
    ]);
    expect(d2.stderr).toContain('memory settings');
    expect(d2.json()).toEqual({ decayed: 1, archived: 1, ids: [low] });
    const r = await cli(['recall', 'build', '--now', '2026-01-20', '--store', store, '--json']);
    expect(r.json<{ results: unknown[] }>().results).toHaveLength(1);
    const all = await cli([
      'recall',
      'build',
      '--archived',
      '--now',
      '2026-01-20',
      '--store',
      store,
      '--json',
    ]);
    expect(
      all.json<{ results: { id: string; archived: boolean }[] }>().results.find((x) => x.id === low)
        ?.archived,
    ).toBe(true);
    // A memory that was not archived is not claimed as restored.
    const restore = ['restore', '--now', '2026-01-20', '--store', store];
    expect((await cli([...restore, low, critical, '--json'])).json()).toEqual({
      restored: [low],
      notArchived: [critical],
    });
    const again = await cli([...restore, low]);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`rlm: restored 0\nrlm: 1 memory not archived: ${low}\n`);
    const s = await ChunkStore.open(store);
    expect(s.memorySettings().multipliers.low).toBe(4);
    await s.close();
  });

  it('consolidates a topic with a scripted model: summary linked to sources, sources archived', async () => {
    const dir = tempDir();
    const store = path.join(dir, 'store');
    const rules = path.join(dir, 'rules.json');
    writeFileSync(
      rules,
      JSON.stringify({
        rules: [
          {
            match: 'Topic: deploy[\\s\\S]*blue-green',
            reply: "Sure! Here's the summary:\n\nDeploys are blue-green, on Tuesdays.",
          },
        ],
      }),
    );
    const ids: string[] = [];
    for (const text of ['deploys happen on Tuesdays', 'we deploy blue-green']) {
      ids.push(
        (await cli(['remember', text, '--topic', 'deploy', '--store', store, '--json'])).json<{
          id: string;
        }>().id,
      );
    }
    const c = await cli([
      'consolidate',
      'deploy',
      '--model',
      `scripted:${rules}`,
      '--store',
      store,
      '--json',
    ]);
    expect(c.code, c.stderr).toBe(0);
    const { summary, text, archived } = c.json<{ summary: string; text: string; archived: string[] }>();
    expect(Object.keys(c.json()).sort()).toEqual(['archived', 'summary', 'text']);
    expect(summary).toMatch(/^mem-/);
    expect(text).toBe('Deploys are blue-green, on Tuesdays.');
    expect(archived.sort()).toEqual([...ids].sort());
    const links = await cli(['links', `${summary}:0`, '--type', 'summarizes', '--store', store, '--json']);
    expect(
      links
        .json<{ links: { to: string }[] }>()
        .links.map((l) => l.to)
        .sort(),
    ).toEqual(ids.map((i) => `${i}:0`).sort());
    const r = await cli(['recall', 'deploy', '--store', store, '--json']);
    expect(r.json<{ results: { id: string; text: string }[] }>().results).toEqual([
      expect.objectContaining({ id: summary, text: 'Deploys are blue-green, on Tuesdays.' }),
    ]);
    expect((await cli(['consolidate', 'deploy', '--store', store])).code).toBe(2);
  });

  it('consolidates automatically past the threshold when a model is set', async () => {
    const dir = tempDir();
    const store = path.join(dir, 'store');
    const rules = path.join(dir, 'rules.json');
    writeFileSync(rules, JSON.stringify({ rules: [{ reply: 'three notes about cats' }] }));
    await cli([
      'remember',
      'cat one',
      '--topic',
      'cats',
      '--consolidate-threshold',
      '2',
      '--auto-consolidate',
      `scripted:${rules}`,
      '--store',
      store,
    ]);
    await cli(['remember', 'cat two', '--topic', 'cats', '--store', store]);
    const third = await cli(['remember', 'cat three', '--topic', 'cats', '--store', store, '--json']);
    const auto = third.json<{ consolidated: { summary: string; text: string; archived: string[] } }>()
      .consolidated;
    expect(auto.archived).toHaveLength(3);
    expect(auto.text).toBe('three notes about cats');
    expect((await cli(['topics', '--store', store, '--json'])).json()).toEqual({
      topics: [{ topic: 'cats', memories: 1, archived: 3 }],
    });
  });

  it('--auto-consolidate checks its spec when saved and keeps a model file absolute', async () => {
    const dir = tempDir();
    const store = path.join(dir, 'store');
    const remember = (text: string, spec: string) =>
      cli(['remember', text, '--topic', 'cats', '--auto-consolidate', spec, '--store', store], { cwd: dir });
    const bogus = await remember('cat zero', 'bogus');
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/^rlm: unknown model spec "bogus"/);
    const missing = await remember('cat zero', 'scripted:nope.json');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `--auto-consolidate scripted:nope.json: ${path.join(dir, 'nope.json')} does not exist`,
    );
    writeFileSync(
      path.join(dir, 'summ.json'),
      JSON.stringify({ rules: [{ reply: 'two notes about cats' }] }),
    );
    const saved = await remember('cat one', 'scripted:summ.json');
    expect(saved.code, saved.stderr).toBe(0);
    // Nothing was stored by the refused ones: the threshold of 2 is passed by the third memory.
    expect((await cli(['decay', '--consolidate-threshold', '2', '--store', store])).code).toBe(0);
    // Used from another folder, the relative name given still names the same file.
    const elsewhere = tempDir();
    await cli(['remember', 'cat two', '--topic', 'cats', '--store', store], { cwd: elsewhere });
    const second = await cli(['remember', 'cat three', '--topic', 'cats', '--store', store, '--json'], {
      cwd: elsewhere,
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.json<{ consolidated: { text: string } }>().consolidated.text).toBe('two notes about cats');
  });

  it('keeps the memory when automatic consolidation fails, saying so: exit 0, consolidationError', async () => {
    const dir = tempDir();
    const store = path.join(dir, 'store');
    const rules = path.join(dir, 'rules.json');
    // A model whose one rule never matches: it has no reply to give.
    writeFileSync(rules, JSON.stringify({ rules: [{ match: 'no such prompt', reply: 'x' }] }));
    const first = ['remember', 'cat one', '--topic', 'cats', '--consolidate-threshold', '2'];
    await cli([...first, '--auto-consolidate', `scripted:${rules}`, '--store', store]);
    await cli(['remember', 'cat two', '--topic', 'cats', '--store', store]);
    const second = await cli(['remember', 'cat three', '--topic', 'cats', '--store', store, '--json']);
    expect(second.code, second.stderr).toBe(0);
    const out = second.json<{ id: string; consolidationError: { code: string; message: string } }>();
    expect(out.consolidationError.code).toBe('SCRIPT_EXHAUSTED');
    expect(second.stderr).toContain(
      'rlm: warning: automatic consolidation of "cats" failed, the memory is stored',
    );
    const topics = await cli(['topics', '--store', store, '--json']);
    expect(topics.json()).toEqual({ topics: [{ topic: 'cats', memories: 3, archived: 0 }] });
  });

  it('--help of each command names its flags', async () => {
    for (const [cmd, flag] of [
      ['remember', '--importance'],
      ['recall', '--since'],
      ['forget', 'ID'],
      ['topics', '--json'],
      ['decay', '--prune-threshold'],
      ['restore', 'ID'],
      ['consolidate', '--model'],
    ]) {
      const r = await cli([cmd!, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(flag);
    }
    expect((await cli(['--help'])).stdout).toMatch(/remember\s+store a memory/);
  });
});
