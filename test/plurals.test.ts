/**
 * Counts in messages agree with their number ("1 iteration", "2 iterations"): a count printed before a
 * plural noun goes through `plural()` (core/plural.ts) or names a limit, which is never one of a kind.
 * Benchmarks print large measured figures, and the prompts' wording belongs to their tests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { plural } from '../core/plural.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NOUNS =
  'iterations|turns|sub-calls|calls|sessions|exchanges|documents|chunks|links|tokens|files|memories|matches|' +
  'segments|hooks|paths|attempts|embeddings|parts|sources|summaries|lines|projects|results|blocks|runs|chars';
/** A template's `${count} nouns` (not a fraction `${done}/${total} files`, read as a whole). */
const COUNT = new RegExp(`(?<!/)\\$\\{([^{}]+)\\} (${NOUNS})\\b`, 'g');
/** Expressions that are limits or sizes set by configuration, not counts of things found. */
const LIMIT = /limit|max|MAX_|LIMIT|DEFAULT|BATCH|FANOUT/i;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

describe('plurals', () => {
  it('plural() agrees with its number', () => {
    expect(plural(1, 'iteration')).toBe('1 iteration');
    expect(plural(0, 'iteration')).toBe('0 iterations');
    expect(plural(2, 'memory', 'memories')).toBe('2 memories');
  });

  it('no message prints a count before a plural noun without plural()', () => {
    const found: string[] = [];
    for (const dir of ['core', 'memory', 'src'])
      for (const file of sources(path.join(ROOT, dir))) {
        if (file.includes(`${path.sep}prompts${path.sep}`)) continue;
        for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) {
          for (const m of line.matchAll(COUNT))
            if (!LIMIT.test(m[1]!)) found.push(`${path.relative(ROOT, file)}:${i + 1}: ${m[0]}`);
        }
      }
    expect(found).toEqual([]);
  });
});
