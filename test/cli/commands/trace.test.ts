import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../../src/runtime/result.ts';
import { tempDir } from '../../helpers/temp.ts';
import { FnModel, lastUser, repl } from '../../runtime/helpers/fake-model.ts';
import { setup } from '../../runtime/helpers/setup.ts';
import { cli } from '../helpers.ts';

const LONG_OUTPUT = Array.from({ length: 12 }, (_, i) => `row ${i}: ${'v'.repeat(150)}`).join('\n');

/** Two runs in one file: the first prints a long multi-line output and asks one sub-call. */
async function twoRuns(): Promise<{ root: string; file: string; ids: string[] }> {
  const root = tempDir();
  const file = path.join(root, 'run.jsonl');
  const model = new FnModel((req) => {
    const last = lastUser(req);
    if (req.depth > 0) return 'sub says hi';
    if (last.includes('[block')) return 'FINAL("done")';
    return repl(
      `const rows = ${JSON.stringify(LONG_OUTPUT)}\nprint(rows)\nprint(await llm_query("a sub question"))`,
    );
  });
  const { rlm } = setup(model, { trace: file, maxDepth: 1 });
  const a = await rlm.answer({ question: 'First question?', context: 'c' });
  const b = await rlm.answer({ question: 'Second question?', context: 'c' });
  return { root, file, ids: [a.runId as string, b.runId as string] };
}

describe('rlm trace', () => {
  it('says what each time measures: the whole call, and the run the tree and timeline show', async () => {
    const { file, ids } = await twoRuns();
    // As measured by a real run: 2.6 s in all, of which the run itself (from run_start) 689 ms.
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; t: number; result?: { elapsedMs: number } });
    for (const e of lines)
      if (e.type === 'run_end') {
        e.t = 689;
        e.result!.elapsedMs = 2600;
      }
    writeFileSync(file, `${lines.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const show = await cli(['trace', 'show', file, '--run', ids[0]!]);
    expect(show.stdout.split('\n')[0]).toMatch(
      /^run [0-9a-f-]{8} · \S+ · final · 2 turns · 1 sub-call · depth 1 · 2\.6s in all \(run 689ms\) · /,
    );
    const html = await cli(['trace', 'html', file, '--out', '-']);
    const data = JSON.parse(
      /<script type="application\/json" id="rlm-data">([^<]*)</.exec(html.stdout)![1]!,
    ) as {
      runs: { times: unknown }[];
    };
    expect(data.runs[0]!.times).toEqual({ totalMs: 2600, runMs: 689, setupMs: 1911 });
    // The page labels them: the whole call, the part before the run, and the run (the root node too).
    for (const label of ["'total time'", "'before the run'", "'run time'", "'run '"])
      expect(html.stdout).toContain(label);
  });

  it('show cuts texts to one line by default and prints them whole with --full', async () => {
    const { file } = await twoRuns();
    const short = await cli(['trace', 'show', file]);
    expect(short.code).toBe(0);
    expect(short.stdout).not.toContain('row 11');
    expect(Math.max(...short.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(120);
    const full = await cli(['trace', 'show', file, '--full']);
    expect(full.code).toBe(0);
    for (const line of LONG_OUTPUT.split('\n')) expect(full.stdout).toContain(line);
    expect(full.stdout).toMatch(/^ +block 1:\n +const rows = /m);
    expect(full.stdout).toMatch(/^ +print\(await llm_query\("a sub question"\)\)$/m);
  });

  it('--run picks one run by id or prefix, and names the runs when none matches', async () => {
    const { file, ids } = await twoRuns();
    const one = await cli(['trace', 'show', file, '--run', (ids[1] as string).slice(0, 8)]);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('Q: Second question?');
    expect(one.stdout).not.toContain('First question?');
    const none = await cli(['trace', 'show', file, '--run', 'zzz']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no run zzz in this trace (runs: ${ids[0]}, ${ids[1]})`);
  });

  it('--json prints the parsed tree of each run', async () => {
    const { file, ids } = await twoRuns();
    const r = await cli(['trace', 'show', file, '--json']);
    expect(r.code).toBe(0);
    const runs = r.json<Trajectory[]>();
    expect(runs.map((t) => t.run)).toEqual(ids);
    const first = runs[0] as Trajectory;
    expect(first.question).toBe('First question?');
    expect(first.result?.answer).toBe('done');
    const block = first.root.turns[0]?.blocks[0];
    expect(block?.output?.stdout).toBe(`${LONG_OUTPUT}\nsub says hi`);
    expect(block?.subcalls.map((s) => [s.id, s.depth, s.kind, s.prompt, s.answer])).toEqual([
      ['s1', 1, 'leaf', 'a sub question', 'sub says hi'],
    ]);
    const only = await cli(['trace', 'show', file, '--json', '--run', ids[0] as string]);
    expect(only.json<Trajectory[]>().map((t) => t.run)).toEqual([ids[0]]);
  });

  it('html writes one page beside the trace, or where --out says, or to stdout', async () => {
    const { root, file, ids } = await twoRuns();
    const r = await cli(['trace', 'html', file]);
    expect(r.code).toBe(0);
    const page = path.join(root, 'run.html');
    expect(r.stderr).toBe(`rlm: wrote ${page}\n`);
    const html = readFileSync(page, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('First question?');
    expect(html).toContain('Second question?');
    const out = await cli(['trace', 'html', 'run.jsonl', '--out', 'one.html', '--run', ids[1] as string], {
      cwd: root,
    });
    expect(out.code).toBe(0);
    const one = readFileSync(path.join(root, 'one.html'), 'utf8');
    expect(one).toContain('Second question?');
    expect(one).not.toContain('First question?');
    const piped = await cli(['trace', 'html', file, '--out', '-']);
    expect(piped.stdout).toBe(html);
  });

  it('refuses bad usage with exit 2', async () => {
    const { root, file } = await twoRuns();
    writeFileSync(path.join(root, 'not.jsonl'), 'hello\n');
    const cases: [string[], RegExp][] = [
      [['trace', 'print', file], /usage: rlm trace show FILE \| rlm trace html FILE/],
      [['trace', 'html', file, '--full'], /--full and --json are for show/],
      [['trace', 'show', file, '--out', 'x.html'], /--out is for html/],
      [['trace', 'html', path.join(root, 'not.jsonl')], /is not an rlm trace/],
      [['trace', 'html', file, '--out', file], /would overwrite the trace .*run\.jsonl; give --out F/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });

  it('html names the page it cannot write and why, not a temp file', async () => {
    const { root, file } = await twoRuns();
    writeFileSync(path.join(root, 'file'), 'x');
    const missing = path.join(root, 'missing', 'x.html');
    const underFile = path.join(root, 'file', 'x.html');
    for (const [out, why] of [
      [missing, `its folder ${path.join(root, 'missing')} does not exist`],
      [underFile, `${path.join(root, 'file')} is a file, not a folder`],
    ] as const) {
      const r = await cli(['trace', 'html', file, '--out', out]);
      expect(r.code, out).toBe(2);
      expect(r.stderr).toBe(`rlm: trace html: cannot write ${out}: ${why} [BAD_INPUT]\n`);
    }
    expect(readdirSync(root).sort()).toEqual(['file', 'run.jsonl']);
  });
});
