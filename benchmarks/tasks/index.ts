/** The suite registry: suite name → generator. */
import { type CodeqaOptions, generateCodeqa } from './codeqa.ts';
import { generateMultihop } from './multihop.ts';
import { generateOolong } from './oolong.ts';
import { generateOolongPairs } from './oolong-pairs.ts';
import { generateSniah } from './sniah.ts';
import type { BenchTask, GenerateParams, SuiteName } from './types.ts';

export type { BenchTask, GenerateParams, SuiteName } from './types.ts';

/** Options that reach individual generators. */
export interface GeneratorOptions {
  codeqa?: CodeqaOptions;
}

/** Generates task `index` of `suite` at `size` tokens; deterministic for (suite, size, seed, index). */
export function generateTask(suite: SuiteName, p: GenerateParams, opts: GeneratorOptions = {}): BenchTask {
  switch (suite) {
    case 'sniah':
      return generateSniah(p);
    case 'oolong':
      return generateOolong(p);
    case 'oolong-pairs':
      return generateOolongPairs(p);
    case 'multihop':
      return generateMultihop(p);
    case 'codeqa':
      return generateCodeqa(p, opts.codeqa);
  }
}
