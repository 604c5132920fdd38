/** The BENCHMARKS.md section of `npm run bench -- scale` (store-at-scale.ts): its figures against the issue's goals. */
import os from 'node:os';

type Figures = Record<string, number>;

const fmt = (n: number | undefined, digits = 2) =>
  n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(digits);
const verdict = (ok: boolean) => (ok ? 'meets target' : '**misses target**');
const int = (n: number | undefined) => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'));

export function describeStoreAtScale(f: Figures): string[] {
  const cold = (name: string, target: number) => {
    const big = (k: string) => f[`bigCli.${name}.${k}`];
    const small = (k: string) => f[`smallCli.${name}.${k}`];
    const cpu = (big('cpuMs') ?? NaN) / (small('cpuMs') ?? NaN);
    const wall = (big('ms') ?? NaN) / (small('ms') ?? NaN);
    return `| cold \`rlm ${name}\` | ${fmt(big('ms'), 0)} ms wall, ${fmt(big('cpuMs'), 0)} ms CPU, ${fmt(big('rssMB'), 0)} MB | ${fmt(small('ms'), 0)} ms wall, ${fmt(small('cpuMs'), 0)} ms CPU, ${fmt(small('rssMB'), 0)} MB | ${fmt(cpu)}× CPU, ${fmt(wall)}× wall | ≤ ${target}×: ${verdict(cpu <= target)} |`;
  };
  const mcp = (name: string, label: string, target: number) =>
    `| MCP server, store open: ${label}, p50 / p95 (first call) | ${fmt(f[`bigMcp.${name}.p50`])} / ${fmt(f[`bigMcp.${name}.p95`])} ms (${fmt(f[`bigMcp.${name}.firstMs`], 0)} ms) | ${fmt(f[`smallMcp.${name}.p50`])} / ${fmt(f[`smallMcp.${name}.p95`])} ms | | ${target > 0 ? `p50 < ${target} ms: ${verdict((f[`bigMcp.${name}.p50`] ?? Infinity) < target)}` : ''} |`;
  const flat = (f['huge.rssMB'] ?? NaN) / (f['mid.rssMB'] ?? NaN);
  const working = (f['mid.rssMB'] ?? NaN) - (f.baselineRssMB ?? NaN);
  const workingHuge = (f['huge.rssMB'] ?? NaN) - (f.baselineRssMB ?? NaN);
  const segment = f['mid.segmentMB'] ?? NaN;
  const segmentHuge = f['huge.segmentMB'] ?? NaN;
  const measuredAt = f['huge.measuredAt'];
  const hugeWhen =
    f['huge.cached'] === undefined
      ? 'measured in this run'
      : `kept from a run ${measuredAt === undefined ? 'before this one' : `of ${new Date(measuredAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`} (RLM_BENCH_STORE_DIR)`;
  const mbWall = (f.corpusMB ?? NaN) / ((f['big.ingestMs'] ?? NaN) / 1000);
  const mbCpu = (f.corpusMB ?? NaN) / ((f['big.ingestCpuMs'] ?? NaN) / 1000);
  const disk = (f['disk.totalMB'] ?? NaN) / (f.textMB ?? NaN);
  const other =
    (f['disk.totalMB'] ?? 0) -
    (f['disk.chunksMB'] ?? 0) -
    (f['disk.bm25MB'] ?? 0) -
    (f['disk.linksMB'] ?? 0) -
    (f['disk.documentsMB'] ?? 0);
  const loaded = (f.loadAverage ?? 0) > 1.5;
  return [
    `Two stores built in the run from generated stand-ins for \`/usr/share/doc\` (changelogs, READMEs, copyright`,
    `files; a vocabulary that grows with the corpus): ${int(f['big.tokens'])} tokens (${fmt(f.textMB, 0)} MB of text, ${int(f['big.documents'])} documents, ${int(f['big.chunks'])} chunks, ${int(f['big.links'])} links, ${int(f['bigMcp.segments'])} segments)`,
    `and ${int(f['small.tokens'])} tokens (${int(f['small.chunks'])} chunks). Commands run as a user runs them, each in its own process under`,
    "`/usr/bin/time` (the compiled CLI; wall time includes Node's start; CPU is user + system; RSS is the kernel's peak),",
    'medians of three. The ratio goals are judged on CPU time, which the machine\u2019s other load disturbs least.',
    loaded
      ? `**The machine was shared while this ran (1-minute load average ${fmt(f.loadAverage, 1)} before, ${fmt(f.loadAfter, 1)} after, on ${os.cpus().length} cores): wall times are inflated; CPU times and RSS are the steadier figures.**`
      : `1-minute load average ${fmt(f.loadAverage, 1)} before the run, ${fmt(f.loadAfter, 1)} after, on ${os.cpus().length} cores.`,
    '',
    '| figure | 100M-token store | 3M-token store | ratio | target |',
    '|---|---|---|---|---|',
    cold('peek', 2),
    cold('links', 2),
    cold('stats', 2),
    cold('search', 3),
    `| cold \`rlm peek\` peak RSS | ${fmt(f['bigCli.peek.rssMB'], 0)} MB | | | < 200 MB: ${verdict((f['bigCli.peek.rssMB'] ?? Infinity) < 200)} |`,
    `| cold \`rlm remember\` | ${fmt(f['bigCli.remember.ms'], 0)} ms wall, ${fmt(f['bigCli.remember.cpuMs'], 0)} ms CPU, ${fmt(f['bigCli.remember.rssMB'], 0)} MB | ${fmt(f['smallCli.remember.ms'], 0)} ms wall, ${fmt(f['smallCli.remember.cpuMs'], 0)} ms CPU | ${fmt((f['bigCli.remember.cpuMs'] ?? NaN) / (f['smallCli.remember.cpuMs'] ?? NaN))}× CPU | |`,
    mcp('peek', '`rlm_peek` of a chunk (text and links)', 10),
    mcp('links', 'the links of a chunk (`neighbors`)', 10),
    mcp('search', '`rlm_search`, 1–3 words', 20),
    mcp('searchTypo', '`rlm_search` with a misspelt word', 0),
    '',
    '| figure | value | target |',
    '|---|---|---|',
    `| \`rlm ingest\` of 100 MB: peak RSS (CPU), median of three runs (their peaks from / to) | ${fmt(f['mid.rssMB'], 0)} MB (${fmt((f['mid.cpuMs'] ?? NaN) / 1000, 1)} s; ${fmt(f['mid.rssMinMB'], 0)} / ${fmt(f['mid.rssMaxMB'], 0)} MB) | |`,
    `| \`rlm ingest\` of 1 GB: peak RSS (CPU; ${hugeWhen}, at load ${fmt(f['huge.loadAverage'], 1)}) | ${fmt(f['huge.rssMB'], 0)} MB (${fmt((f['huge.cpuMs'] ?? NaN) / 1000, 1)} s), ${fmt(flat)}× the 100 MB ingest | the same for both (≤ 1.1×): ${verdict(flat <= 1.1)} |`,
    `| fixed part of any ingest's RSS (Node, modules, tokenizer: a one-line file) | ${fmt(f.baselineRssMB, 0)} MB | |`,
    `| \`rlm_ingest\` of the same 100 MB in an \`rlm serve\` of its own (the ingest runs in a child process): peak RSS of any of its processes (wall), the server's own peak, its fixed part (after a one-line file), what it holds after the call | ${fmt(f['served.rssMB'], 0)} MB (${fmt((f['served.ms'] ?? NaN) / 1000, 1)} s), ${fmt(f['served.serverMB'], 0)} MB, ${fmt(f['served.baselineRssMB'], 0)} MB, ${fmt(f['served.afterMB'], 0)} MB | |`,
    `| ingest memory above that fixed part, 100 MB / 1 GB, against the largest segment's text (its chunk file: ${fmt(segment, 1)} / ${fmt(segmentHuge, 1)} MB) | ${fmt(working, 0)} / ${fmt(workingHuge, 0)} MB: ${fmt(working / segment, 0)}× / ${fmt(workingHuge / segmentHuge, 0)}× | ≤ 2×: ${verdict(working <= 2 * segment && workingHuge <= 2 * segmentHuge)} |`,
    `| \`rlm ingest\` of ${fmt(f.corpusMB, 0)} MB (the big store): wall / CPU / peak RSS, medians of three runs | ${fmt((f['big.ingestMs'] ?? NaN) / 1000, 1)} s / ${fmt((f['big.ingestCpuMs'] ?? NaN) / 1000, 1)} s / ${fmt(f['big.ingestRssMB'], 0)} MB | |`,
    `| ingest throughput on it, by wall time (by CPU time) | ${fmt(mbWall, 1)} MB/s (${fmt(mbCpu, 1)} MB/s) | ≥ 4.6 MB/s: ${verdict(Math.max(mbWall, mbCpu) >= 4.6)}${mbWall < 4.6 && mbCpu >= 4.6 ? ' on CPU time' : ''} |`,
    `| store on disk for ${fmt(f.textMB, 0)} MB of text | ${fmt(f['disk.totalMB'], 0)} MB (${fmt(disk)}×) | ≤ 2×: ${verdict(disk <= 2)} |`,
    `| of which: chunk files (the text, with a header per segment) / BM25 / links / documents / other | ${fmt(f['disk.chunksMB'], 0)} / ${fmt(f['disk.bm25MB'], 0)} / ${fmt(f['disk.linksMB'], 0)} / ${fmt(f['disk.documentsMB'], 1)} / ${fmt(other, 1)} MB | |`,
    `| \`rlm repair\`, healthy store (every file checked against its CRCs): wall / CPU / peak RSS | ${fmt((f['repair.ms'] ?? NaN) / 1000, 1)} s / ${fmt((f['repair.cpuMs'] ?? NaN) / 1000, 1)} s / ${fmt(f['repair.rssMB'], 0)} MB | < 1 min: ${verdict((f['repair.ms'] ?? Infinity) < 60_000)} |`,
    `| \`rlm repair\`, one BM25 and one links file damaged: wall / CPU / peak RSS | ${fmt((f['repairDamaged.ms'] ?? NaN) / 1000, 1)} s / ${fmt((f['repairDamaged.cpuMs'] ?? NaN) / 1000, 1)} s / ${fmt(f['repairDamaged.rssMB'], 0)} MB | < 1 min: ${verdict((f['repairDamaged.ms'] ?? Infinity) < 60_000)} |`,
    '',
    'A cold command reads the manifest, the documents file and only the segment files it needs: `peek` and',
    '`links` the chunk\u2019s segment and one small group of links from each segment that links into it, `stats`',
    'the counts the manifest keeps, `search` a dictionary block and a postings list per query term and segment',
    '(memory/SCHEMA.md, schema 3). The fixed part of every command (Node, modules) is most of the small',
    'store\u2019s time. An ingest holds two batches of about a segment each (one being indexed, linked and',
    'written on its thread while a worker thread chunks and classifies the next), the link window (the newest',
    'segments covering at least 65,536 chunks) and memos of bounded size: none of it grows with the store.',
    '',
    'How the memory goal is read. "Peak RSS under 2\u00d7 the largest segment\u2019s text" cannot hold of the whole',
    'process: Node, the modules and the tokenizer alone (the fixed part above) are many times a segment (4 MiB of',
    'text or more: a batch closes after the document that fills it). It',
    'is read as the memory an ingest adds above that fixed part, and that misses: besides the two batches in',
    'flight (text, records, index and files, a few times 4 MiB each) and the chunking thread (its own heap,',
    'tokenizer memo and classifier patterns), an ingest keeps structures whose size is',
    'set by constants, not by the segment: the link window (each of its 65,536 chunks\u2019 signature, and the',
    'document frequency of every term of its segments: some 40 MB live on these corpora), the analyzer\u2019s and',
    'the tokenizer\u2019s memos (about 10 MB each), V8\u2019s young generation (two 8 MiB semi-spaces) and the headroom',
    'of a 10% heap growth step. None of these grows with the input. What does grow is the catalog of',
    'documents, which every commit and every skip-unchanged lookup needs: an ingest packs the records it',
    'commits into bytes outside the JavaScript heap, in a compact form (about 0.15 KB each with their index:',
    'some 5 MB for the 36,000 documents of the 1 GB corpus; memory/engine/catalog.ts, record-codec.ts). On',
    'Linux the CLI runs its batch commands with one malloc arena (bin/lib/batch-malloc.js): with one a thread,',
    'the holes left by blocks freed on the chunking, I/O and collector threads stayed resident and grew with',
    'the run. The part of the goal that is met or not is therefore the',
    'ratio of the 1 GB peak to the 100 MB one. `rlm serve` keeps its heap the same way while an `rlm_ingest`',
    'runs and gives V8 its defaults back after (core/batch-heap.ts); it runs with glibc\u2019s default arenas,',
    'and its fixed part holds the MCP SDK and the runtime as well.',
  ];
}
