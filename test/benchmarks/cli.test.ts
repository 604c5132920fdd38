import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { benchCommand } from '../../benchmarks/cli.ts';
import { isRlmError } from '../../core/errors.ts';
import type { CliIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import type { Model, ModelResponse } from '../../src/runtime/model.ts';
import { tempDir } from '../helpers/temp.ts';
import { testSandboxFactory } from './helpers/vm-sandbox.ts';
import { assertWellFormed, seriesPerPanel } from './helpers/xml.ts';

function fakeIO(opts: { tty?: boolean; env?: Record<string, string> } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdout: { write: (s: string) => out.push(s), isTTY: false },
    stderr: { write: (s: string) => err.push(s), isTTY: opts.tty === true, columns: 120 },
    stdin: Readable.from([]),
    env: opts.env ?? {},
    cwd: tempDir('rlm-bench-cli-'),
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

const sandboxFactory = testSandboxFactory();
const seams = sandboxFactory ? { sandboxFactory } : {};

const RESULT_KEYS = [
  'suite',
  'task',
  'method',
  'size',
  'score',
  'correct',
  'iterations',
  'subCalls',
  'inputTokens',
  'outputTokens',
  'costUsd',
  'elapsedMs',
];
const SUMMARY_KEYS = ['suite', 'method', 'size', 'accuracy', 'meanScore', 'meanCostUsd', 'medianElapsedMs'];

describe('rlm bench', () => {
  it('prints the CONTRACTS.md object with --json and writes the report files to --out', async () => {
    const { io, stdout } = fakeIO();
    const argv = [
      'sniah',
      'multihop',
      '--model',
      'smoke',
      '--sizes',
      '8k',
      '--n',
      '1',
      '--json',
      '--out',
      'report',
    ];
    expect(await benchCommand(argv, io, seams)).toBe(0);
    const json = JSON.parse(stdout());
    expect(json.suites).toEqual(['sniah', 'multihop']);
    expect(json.model).toBe('smoke');
    expect(json.results).toHaveLength(2 * 4);
    for (const r of json.results) {
      for (const k of RESULT_KEYS) expect(r).toHaveProperty(k);
      expect(typeof r.score).toBe('number');
      expect(typeof r.correct).toBe('boolean');
      expect(r.size).toBe(8192);
    }
    expect(
      json.results
        .filter((r: { method: string }) => r.method === 'rlm')
        .every((r: { correct: boolean }) => r.correct),
    ).toBe(true);
    expect(json.summary).toHaveLength(2 * 4);
    for (const s of json.summary) for (const k of SUMMARY_KEYS) expect(s).toHaveProperty(k);
    const dir = path.join(io.cwd, 'report');
    expect(JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'))).toEqual(json);
    expect(readFileSync(path.join(dir, 'report.md'), 'utf8')).toContain('### multihop');
    const svg = readFileSync(path.join(dir, 'score.svg'), 'utf8');
    assertWellFormed(svg);
    expect(seriesPerPanel(svg)).toEqual({
      sniah: ['rlm', 'rlm-no-sub', 'direct', 'bm25'],
      multihop: ['rlm', 'rlm-no-sub', 'direct', 'bm25'],
    });
    assertWellFormed(readFileSync(path.join(dir, 'cost.svg'), 'utf8'));
  });

  it('prints a summary table by default, draws progress on a terminal, and defaults --out under benchmarks/out', async () => {
    const { io, stdout, stderr } = fakeIO({ tty: true });
    expect(
      await benchCommand(
        ['sniah', '--model', 'smoke', '--methods', 'direct,bm25', '--sizes', '8k', '--n', '1'],
        io,
        seams,
      ),
    ).toBe(0);
    expect(stdout()).toContain('| method | size | mean score |');
    expect(stdout()).toContain('| direct | 8k | 1.000 | 100.0% |');
    expect(stderr()).toContain('\r\x1b[2K[');
    // The smoke policy is free: no cost estimate and no "no price known" warning.
    expect(stderr()).not.toContain('no price known');
    expect(stderr()).not.toContain('estimated cost');
    // The report folder is the last thing said.
    const m = /rlm bench: report written to (.+)\n$/.exec(stderr())!;
    expect(path.isAbsolute(m[1]!)).toBe(true);
    expect(path.relative(io.cwd, m[1]!)).toMatch(/^benchmarks[/\\]out[/\\]\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d$/);
    expect(existsSync(path.join(m[1]!, 'report.md'))).toBe(true);
  });

  it('estimates the cost of a paid model first and stops at --max-cost', async () => {
    let calls = 0;
    const model: Model = {
      spec: 'anthropic:claude-sonnet-4-5',
      async complete(): Promise<ModelResponse> {
        calls++;
        return { text: '1', usage: { inputTokens: 1_000_000, outputTokens: 0 }, model: 'claude-sonnet-4-5' };
      },
    };
    const { io, stdout, stderr } = fakeIO();
    const argv = [
      'oolong',
      '--model',
      model.spec,
      '--methods',
      'direct',
      '--sizes',
      '8k',
      '--n',
      '3',
      '--max-cost',
      '5',
      '--json',
    ];
    expect(await benchCommand(argv, io, { modelFactory: async () => model })).toBe(0);
    expect(stderr()).toMatch(/3 runs; estimated cost ~\$0\.\d\d .*--max-cost \$5\)/);
    expect(stderr()).toContain('remaining tasks skipped');
    const json = JSON.parse(stdout());
    expect(json.stopped).toBe('max_cost');
    expect(json.results.map((r: { status: string }) => r.status)).toEqual(['final', 'final', 'skipped']);
    expect(calls).toBe(2);
  });

  it('rejects bad input as usage errors', async () => {
    const { io } = fakeIO();
    const bad = async (argv: string[], pattern: RegExp) => {
      const err = await benchCommand(argv, io, seams).catch((e: unknown) => e);
      expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
      expect((err as Error).message).toMatch(pattern);
    };
    await bad(['sniah'], /no model/);
    await bad(['haystack', '--model', 'smoke'], /unknown suite 'haystack'/);
    await bad(['--model', 'smoke', '--methods', 'rlm,gpt'], /unknown method 'gpt'/);
    await bad(['--model', 'smoke', '--sizes', '8q'], /bad size/);
    await bad(['--model', 'smoke', '--max-cost', 'lots'], /--max-cost/);
    await bad(['--model', 'nonsense:x'], /unknown model spec/);
    // Flags are named as the help spells them: --n is a long flag of one letter, -k a short one.
    await bad(['--model', 'smoke', '--n', '0'], /^--n must be an integer >= 1, got '0'$/);
    await bad(['--model', 'smoke', '-k', '-2'], /^-k must be an integer >= 1, got '-2'$/);
    const viaMain = fakeIO();
    expect(await main(['bench', 'haystack', '--model', 'smoke'], viaMain.io)).toBe(2);
    expect(viaMain.stderr()).toContain("unknown suite 'haystack'");
    const help = fakeIO();
    expect(await benchCommand(['--help'], help.io)).toBe(0);
    expect(help.stdout()).toContain('--max-cost USD');
  });
});
