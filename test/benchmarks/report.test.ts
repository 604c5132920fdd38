import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderChart } from '../../benchmarks/chart.ts';
import type { BenchReport } from '../../benchmarks/harness.ts';
import type { MethodName } from '../../benchmarks/methods.ts';
import { renderMarkdown, writeReport } from '../../benchmarks/report.ts';
import { type BenchResult, summarize } from '../../benchmarks/summary.ts';
import type { SuiteName } from '../../benchmarks/tasks/types.ts';
import { tempDir } from '../helpers/temp.ts';
import { assertWellFormed, seriesPerPanel } from './helpers/xml.ts';

function result(
  suite: SuiteName,
  method: MethodName,
  size: number,
  score: number,
  extra: Partial<BenchResult> = {},
): BenchResult {
  return {
    suite,
    task: `${suite}-${size}-0`,
    method,
    size,
    score,
    correct: score === 1,
    iterations: 2,
    subCalls: 1,
    inputTokens: 100,
    outputTokens: 10,
    costUsd: 0.01 * score,
    elapsedMs: 100,
    status: 'final',
    answer: 'a <b> & "c" | d',
    expected: 'x',
    contextTokens: size,
    ...extra,
  };
}

const results: BenchResult[] = [
  result('sniah', 'rlm', 8192, 1, { elapsedMs: 10 }),
  result('sniah', 'rlm', 8192, 0, { elapsedMs: 30 }),
  result('sniah', 'rlm', 8192, 1, { elapsedMs: 20 }),
  result('sniah', 'direct', 8192, 1),
  result('sniah', 'rlm', 32768, 1),
  result('sniah', 'direct', 32768, 0.5),
  result('oolong', 'rlm', 8192, 0.75),
  result('oolong', 'direct', 8192, 0),
  result('oolong', 'direct', 32768, 0, { skipped: true, status: 'skipped' }),
];

function report(): BenchReport {
  return {
    suites: ['sniah', 'oolong'],
    model: 'scripted:<smoke>',
    results,
    summary: summarize(results),
    methods: ['rlm', 'direct'],
    sizes: [8192, 32768],
    n: 3,
    seed: 1,
    spentUsd: 0.05,
    stopped: null,
    startedAt: '2025-01-01T00:00:00.000Z',
    elapsedMs: 1234,
  };
}

describe('summary', () => {
  it('aggregates per suite × method × size, excluding skipped tasks', () => {
    const s = summarize(results);
    expect(s[0]).toEqual({
      suite: 'sniah',
      method: 'rlm',
      size: 8192,
      accuracy: 0.6667,
      meanScore: 0.6667,
      meanCostUsd: 0.006667,
      medianElapsedMs: 20,
      tasks: 3,
      skipped: 0,
    });
    expect(s.find((r) => r.suite === 'oolong' && r.size === 32768)).toMatchObject({
      tasks: 0,
      skipped: 1,
      meanScore: 0,
    });
  });
});

describe('charts', () => {
  it('renders well-formed SVG with one series per method in every panel', () => {
    const svg = renderChart(summarize(results), {
      metric: 'meanScore',
      title: 'Score <vs> length',
      yLabel: 'score',
    });
    assertWellFormed(svg);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('Score &lt;vs&gt; length');
    expect(seriesPerPanel(svg)).toEqual({ sniah: ['rlm', 'direct'], oolong: ['rlm', 'direct'] });
    // The sniah/rlm line has two points (8k, 32k); the skipped oolong/direct 32k point is left out.
    const sniahRlm = /data-suite="sniah"[\s\S]*?data-method="rlm">\n<polyline[^>]*points="([^"]+)"/.exec(
      svg,
    )![1]!;
    expect(sniahRlm.split(' ')).toHaveLength(2);
    const oolongDirect =
      /data-suite="oolong"[\s\S]*?data-method="direct">\n<polyline[^>]*points="([^"]+)"/.exec(svg)![1]!;
    expect(oolongDirect.split(' ')).toHaveLength(1);
  });

  it('scales cost charts to the largest cost', () => {
    const svg = renderChart(summarize(results), { metric: 'meanCostUsd', title: 'Cost', yLabel: 'USD' });
    assertWellFormed(svg);
    expect(svg).toContain('$0');
  });
});

describe('writeReport', () => {
  it('writes report.json, report.md and two charts', () => {
    const dir = tempDir('rlm-report-');
    const files = writeReport(path.join(dir, 'nested'), report());
    expect(JSON.parse(readFileSync(files.json, 'utf8'))).toEqual(report());
    const md = readFileSync(files.markdown, 'utf8');
    expect(md).toContain('# rlm benchmark report');
    expect(md).toContain('### sniah');
    expect(md).toContain('| rlm | 8k | 0.667 | 66.7% |');
    expect(md).toContain('(+1 skipped)');
    // Pipes inside answers are escaped so the table stays a table.
    expect(md).toContain('a <b> & "c" \\| d');
    for (const f of [files.scoreChart, files.costChart]) assertWellFormed(readFileSync(f, 'utf8'));
    expect(renderMarkdown({ ...report(), stopped: 'max_cost' })).toContain('stopped early (max_cost)');
  });
});
