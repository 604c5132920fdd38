/**
 * Throughput of text ingestion: token counting and the size / paragraph / lines chunkers over ~40 MB of
 * seeded synthetic prose (Zipf-distributed vocabulary, numbers, punctuation, some code-like lines).
 * Run directly (`node --no-node-snapshot benchmarks/memory-text.ts [MB]`) or through `benchText()`.
 */

import { fileURLToPath } from 'node:url';
import { chunkText } from '../memory/ingest/chunkers/index.ts';
import { clearTokenCache, countTokens } from '../memory/ingest/tokens.ts';

/** Small seeded PRNG (mulberry32) so every run chunks the same text. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES =
  'ka lo mi ne ta ri so ve du pa the and ing er on st qu ch re de tion al an or es ou é ü'.split(' ');

/** About `mb` million characters of mixed paragraphs, deterministic for a given seed. */
function syntheticText(mb: number, seed = 1): string {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const vocab: string[] = [];
  for (let i = 0; i < 50_000; i++) {
    let w = '';
    const n = 1 + Math.floor(rnd() * 4);
    for (let j = 0; j < n; j++) w += pick(SYLLABLES);
    vocab.push(w);
  }
  // Zipf-like: a few words are very common, most are rare.
  const word = () => vocab[Math.floor(rnd() ** 3 * vocab.length)]!;
  const target = mb * 1e6;
  const parts: string[] = [];
  let size = 0;
  while (size < target) {
    let p: string;
    const kind = rnd();
    if (kind < 0.08) {
      const lines: string[] = [];
      for (let i = 0; i < 3 + rnd() * 8; i++) {
        lines.push(`  const ${word()}_${i} = ${word()}(${Math.floor(rnd() * 1000)}, '${word()}');`);
      }
      p = `function ${word()}() {\n${lines.join('\n')}\n}`;
    } else if (kind < 0.12) {
      p = `## ${word()} ${word()}`;
    } else {
      const sentences: string[] = [];
      for (let s = 0; s < 2 + rnd() * 7; s++) {
        const words: string[] = [];
        for (let w = 0; w < 5 + rnd() * 18; w++) {
          const r = rnd();
          words.push(r < 0.04 ? String(Math.floor(rnd() * 100_000)) : r < 0.07 ? `${word()},` : word());
        }
        const first = words[0]!;
        words[0] = first[0]!.toUpperCase() + first.slice(1);
        sentences.push(words.join(' ') + pick(['.', '.', '.', '!', '?', '…']));
      }
      p = sentences.join(' ');
    }
    parts.push(p);
    size += p.length + 2;
  }
  return parts.join('\n\n');
}

function mbPerSecond(chars: number, ms: number): number {
  return Math.round((chars / 1e6 / (ms / 1000)) * 10) / 10;
}

/** Milliseconds of CPU time (user + system) spent in `fn`: steadier than wall time on a shared machine. */
function time(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Measures MB/s (per CPU-second) of countTokens (cold and warm cache) and of chunk+count for size, paragraph and lines. */
export async function benchText(mb = 40): Promise<Record<string, number>> {
  const text = syntheticText(mb);
  const out: Record<string, number> = { textMB: Math.round(text.length / 1e5) / 10 };
  let tokens = 0;
  clearTokenCache();
  out.countTokensColdMBs = mbPerSecond(
    text.length,
    time(() => {
      tokens = countTokens(text);
    }),
  );
  out.countTokensWarmMBs = mbPerSecond(
    text.length,
    time(() => {
      countTokens(text);
    }),
  );
  out.tokensMillions = Math.round(tokens / 1e4) / 100;
  for (const chunker of ['size', 'paragraph', 'lines'] as const) {
    let chunks = 0;
    const ms = time(() => {
      chunks = chunkText(text, chunker).length;
    });
    out[`${chunker}MBs`] = mbPerSecond(text.length, ms);
    out[`${chunker}Chunks`] = chunks;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mb = Number(process.argv[2] ?? 40);
  console.log(JSON.stringify(await benchText(mb), null, 2));
}
