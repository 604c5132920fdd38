import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { cli } from './helpers.ts';

function setup(rules: unknown) {
  const root = tempDir();
  const doc = path.join(root, 'haystack.txt');
  const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} of filler text about rivers and stones`);
  lines.splice(1234, 0, 'The magic number is 4817263');
  writeFileSync(doc, `${lines.join('\n')}\n`);
  const rulesFile = path.join(root, 'rules.json');
  writeFileSync(rulesFile, JSON.stringify(rules));
  return { root, doc, rulesFile };
}

const SOLVER = {
  rules: [
    {
      depth: 0,
      match: 'magic number',
      reply:
        "Let me search.\n```repl\nconst hits = grep('magic number is (\\\\d+)');\nprint(hits.length);\nFINAL(hits[0].text.match(/\\d{7}/)[0]);\n```",
    },
  ],
};

/** `rlm answer` asking SOLVER's question over `doc`. */
function solverArgs(doc: string, rulesFile: string): string[] {
  return ['answer', 'What is the magic number?', '--context', doc, '--model', `scripted:${rulesFile}`];
}

describe('rlm answer', () => {
  it('answers over a file with a scripted model through the real sandbox, and prints the CONTRACTS.md JSON', async () => {
    const { doc, rulesFile, root } = setup(SOLVER);
    const trace = path.join(root, 'trace.jsonl');
    const r = await cli([
      'answer',
      'What is the magic number?',
      '--context',
      doc,
      '--model',
      `scripted:${rulesFile}`,
      '--trace',
      trace,
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = r.json();
    expect(Object.keys(out).sort()).toEqual([
      'answer',
      'elapsedMs',
      'iterations',
      'maxDepthReached',
      'runId',
      'status',
      'subCalls',
      'trace',
      'usage',
    ]);
    expect(out).toMatchObject({
      trace,
      answer: '4817263',
      status: 'final',
      iterations: 1,
      subCalls: 0,
      maxDepthReached: 0,
    });
    expect((out.usage as { inputTokens: number }).inputTokens).toBeGreaterThan(100);
    const events = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['run_start', 'model_call', 'block', 'output', 'final']),
    );
    // The id finds the run in the trace.
    expect(new Set(events.map((e) => (e as { run?: string }).run))).toEqual(new Set([out.runId]));

    // The default level records the requests; --trace-level summary leaves them out.
    expect(events.filter((e) => e.type === 'model_request')).toHaveLength(1);
    const small = path.join(root, 'small.jsonl');
    const args = solverArgs(doc, rulesFile);
    expect((await cli([...args, '--trace', small, '--trace-level', 'summary'])).code).toBe(0);
    const smallTypes = readFileSync(small, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(smallTypes).toContain('model_call');
    expect(smallTypes).not.toContain('model_request');

    const shown = await cli(['trace', 'show', trace]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('4817263');
  });

  it('prints the answer on stdout and a summary on stderr without --json', async () => {
    const { doc, rulesFile } = setup(SOLVER);
    const r = await cli([
      'answer',
      'What is the magic number?',
      '--context',
      doc,
      '--model',
      `scripted:${rulesFile}`,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('4817263\n');
    expect(r.stderr).toMatch(/^rlm: final · 1 iteration · 0 sub-calls/);
  });

  it('says on stderr what a folder given as --context left out, as the model is told', async () => {
    const { root, rulesFile } = setup(SOLVER);
    const folder = path.join(root, 'folder');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'haystack.txt'), 'The magic number is 4817263\n');
    writeFileSync(path.join(folder, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
    writeFileSync(path.join(folder, '.hidden.md'), 'not read');
    const r = await cli([
      'answer',
      'What is the magic number?',
      '--context',
      folder,
      '--model',
      `scripted:${rulesFile}`,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('4817263\n');
    expect(r.stderr).toMatch(
      /^rlm: note: left out of the context: 1 binary file \(image\.png\), 1 hidden path\n/,
    );
  });

  it('exits 1 with the best partial answer when the iterations run out', async () => {
    const { doc, rulesFile } = setup({ rules: [{ reply: '```repl\nprint("still looking")\n```' }] });
    const r = await cli([
      'answer',
      'What is the magic number?',
      '--context',
      doc,
      '--model',
      `scripted:${rulesFile}`,
      '--max-iterations',
      '2',
      '--json',
    ]);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ status: 'max_iterations', iterations: 2 });
  });

  it('refuses bad input with one clear line and exit 2 before doing anything', async () => {
    const { doc, rulesFile, root } = setup(SOLVER);
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['answer', '  ', '--context', doc, '--model', `scripted:${rulesFile}`], {}, /the question is empty/],
      [
        ['answer', 'q', '--context', path.join(root, 'nope.txt'), '--model', `scripted:${rulesFile}`],
        {},
        /no such file or directory: .*nope\.txt/,
      ],
      [['answer', 'q', '--context', doc, '--model', 'gemini:pro'], {}, /unknown model spec "gemini:pro"/],
      [
        ['answer', 'q', '--context', doc, '--model', 'anthropic:claude-sonnet-4-5'],
        {},
        /ANTHROPIC_API_KEY is not set/,
      ],
      [['answer', 'q', '--context', doc], {}, /no model: pass --model SPEC or set RLM_MODEL/],
      [['answer', 'q', '--model', `scripted:${rulesFile}`], {}, /give --context PATH or --store DIR/],
      [
        ['answer', 'q', '--context', doc, '--model', `scripted:${rulesFile}`, '--max-depth', 'x'],
        {},
        /--max-depth must be an integer/,
      ],
      [
        ['answer', 'q', '--context', doc, '--model', `scripted:${rulesFile}`],
        { RLM_MAX_ITERATIONS: 'abc' },
        /RLM_MAX_ITERATIONS/,
      ],
      [
        ['answer', 'q', '--context', doc, '--model', `scripted:${rulesFile}`, '--trace-level', 'all'],
        {},
        /--trace-level must be summary or full, got 'all'/,
      ],
    ];
    for (const [args, env, message] of cases) {
      const trace = path.join(root, `t-${Math.random()}.jsonl`);
      const r = await cli([...args, '--trace', trace], { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  });

  it('refuses a trace file whose folder does not exist, from --trace or RLM_TRACE, as trace html --out does', async () => {
    const { doc, rulesFile, root } = setup(SOLVER);
    const trace = path.join(root, 'missing', 'dir', 't.jsonl');
    const args = solverArgs(doc, rulesFile);
    const message = `rlm: cannot open trace file ${trace}: its folder ${path.join(root, 'missing')} does not exist [BAD_INPUT]\n`;
    for (const r of [
      await cli([...args, '--trace', trace]),
      await cli(args, { env: { RLM_TRACE: trace } }),
    ]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(message);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(path.join(root, 'missing'))).toBe(false);
  });

  it('uses RLM_MODEL and reads the question from stdin with -', async () => {
    const { doc, rulesFile } = setup(SOLVER);
    const r = await cli(['answer', '-', '--context', doc], {
      env: { RLM_MODEL: `scripted:${rulesFile}` },
      stdin: 'What is the magic number?\n',
    });
    expect(r.stdout).toBe('4817263\n');
  });

  it("keeps the model's last prose off stdout when the run ends in an error", async () => {
    const { doc, rulesFile } = setup({
      rules: [{ reply: 'The magic number is surely 42.\n```repl\nthrow new Error("nope")\n```' }],
    });
    const r = await cli([
      'answer',
      'What is the magic number?',
      '--context',
      doc,
      '--model',
      `scripted:${rulesFile}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/rlm: error ·/);
    expect(r.stderr).toMatch(/the model's last reply \(not an answer\):\nThe magic number is surely 42\./);
  });

  it('reads a question from stdin whose UTF-8 characters are split across reads', async () => {
    const { doc, rulesFile } = setup({ rules: [{ depth: 0, match: 'café', reply: 'FINAL(ok café)' }] });
    const bytes = Buffer.from('Où est le café ?', 'utf8');
    const cut = bytes.length - 3; // between the two bytes of é
    const r = await cli(['answer', '-', '--context', doc, '--model', `scripted:${rulesFile}`], {
      stdin: [bytes.subarray(0, cut), bytes.subarray(cut)],
    });
    expect(r.stderr).not.toMatch(/SCRIPT_EXHAUSTED/);
    expect(r.stdout).toBe('ok café\n');
  });
});
