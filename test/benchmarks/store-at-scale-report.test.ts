import { describe, expect, it } from 'vitest';
import { describeStoreAtScale } from '../../benchmarks/store-at-scale-report.ts';

/** Ingest figures only: the rest of the section prints n/a. */
const ingest = {
  baselineRssMB: 120,
  'mid.rssMB': 250,
  'mid.cpuMs': 30_000,
  'mid.segmentMB': 6.5,
  'huge.rssMB': 270,
  'huge.cpuMs': 300_000,
  'huge.segmentMB': 8,
  'huge.loadAverage': 2,
};

const row = (lines: string[], start: string) => lines.find((l) => l.startsWith(start)) ?? '';

describe('describeStoreAtScale', () => {
  it('judges ingest memory against the largest segment each ingest wrote', () => {
    const lines = describeStoreAtScale(ingest);
    const memory = row(lines, '| ingest memory above that fixed part');
    expect(memory).toContain('its chunk file: 6.5 / 8.0 MB');
    expect(memory).toContain('130 / 150 MB: 20× / 19×');
    expect(memory).toContain('**misses target**');
    const met = describeStoreAtScale({ ...ingest, 'mid.segmentMB': 70, 'huge.segmentMB': 80 });
    expect(row(met, '| ingest memory above that fixed part')).toContain('meets target');
    // One of the two over 2× is a miss.
    const half = describeStoreAtScale({ ...ingest, 'mid.segmentMB': 70 });
    expect(row(half, '| ingest memory above that fixed part')).toContain('**misses target**');
  });

  it('says whether the 1 GB figure was measured in this run or kept from an earlier one', () => {
    const fresh = row(describeStoreAtScale(ingest), '| `rlm ingest` of 1 GB');
    expect(fresh).toContain('measured in this run, at load 2.0');
    expect(fresh).toContain('1.08× the 100 MB ingest');
    const kept = row(
      describeStoreAtScale({
        ...ingest,
        'huge.cached': 1,
        'huge.measuredAt': Date.UTC(2026, 10, 29, 12, 30),
      }),
      '| `rlm ingest` of 1 GB',
    );
    expect(kept).toContain('kept from a run of 2026-11-29 12:30 UTC (RLM_BENCH_STORE_DIR)');
    const old = row(describeStoreAtScale({ ...ingest, 'huge.cached': 1 }), '| `rlm ingest` of 1 GB');
    expect(old).toContain('kept from a run before this one');
  });

  it("reports the MCP server's rlm_ingest beside the CLI's", () => {
    const served = row(
      describeStoreAtScale({
        ...ingest,
        'served.rssMB': 341.6,
        'served.ms': 20_900,
        'served.serverMB': 150.4,
        'served.baselineRssMB': 158.2,
        'served.afterMB': 279,
      }),
      '| `rlm_ingest` of the same 100 MB',
    );
    expect(served).toContain('| 342 MB (20.9 s), 150 MB, 158 MB, 279 MB |');
    // Without /proc the figures are unknown, and say so.
    expect(row(describeStoreAtScale(ingest), '| `rlm_ingest` of the same 100 MB')).toContain(
      'n/a MB (n/a s)',
    );
  });
});
