/**
 * `sniah` — single needle in a haystack, after rlm-minimal: lines of 3–8 words from a small vocabulary
 * and one line "The magic number is NNNNNNN" at a random depth. Scored by exact match of the 7 digits.
 */
import { Rng } from '../rng.ts';
import { contextTokens, LineBuilder, sizeLabel } from './text.ts';
import type { BenchTask, GenerateParams } from './types.ts';

/** The filler vocabulary: plain words that never spell a number. */
const VOCAB = [
  'apple',
  'river',
  'stone',
  'cloud',
  'window',
  'garden',
  'silver',
  'paper',
  'orange',
  'music',
  'forest',
  'candle',
  'bridge',
  'yellow',
  'winter',
  'summer',
  'pencil',
  'rocket',
  'butter',
  'planet',
  'mirror',
  'castle',
  'tiger',
  'violet',
  'shadow',
  'harbor',
  'meadow',
  'copper',
  'feather',
  'lantern',
  'quiet',
  'gentle',
  'rapid',
  'hollow',
  'bright',
  'ancient',
  'simple',
  'distant',
  'narrow',
  'golden',
] as const;

const SNIAH_QUESTION = 'What is the magic number?';

/** A sniah task plus where the needle went (for tests and reports). */
export interface SniahTask extends BenchTask {
  meta: { needleLine: number; depth: number };
}

/** Generates one sniah instance of about `size` tokens. */
export function generateSniah(p: GenerateParams): SniahTask {
  const rng = new Rng(`sniah/${p.seed}/${p.size}/${p.index}`);
  const answer = String(rng.int(1_000_000, 9_999_999));
  const depth = Math.round(rng.next() * 1000) / 1000;
  const needle = `The magic number is ${answer}`;
  const b = new LineBuilder();
  let needleLine = -1;
  // Leave room for the needle itself so the text stays at or under the target.
  const budget = p.size - 8;
  while (b.tokens < budget || needleLine < 0) {
    if (needleLine < 0 && b.tokens >= depth * budget) {
      needleLine = b.lines;
      b.push(needle);
      continue;
    }
    const n = rng.int(3, 8);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(rng.pick(VOCAB));
    b.push(words.join(' '));
  }
  const context = b.finish();
  return {
    suite: 'sniah',
    id: `sniah-${sizeLabel(p.size)}-${p.index}`,
    size: p.size,
    question: SNIAH_QUESTION,
    context,
    contextTokens: contextTokens(context),
    gold: { kind: 'exact', answer },
    meta: { needleLine, depth },
  };
}
