import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { leftoverError } from './run-temp.ts';

const fileLevel = tempDir('rlm-file-level-');
let madeInTest = '';

describe('the run temp folder', () => {
  it('is where tests make their folders, apart from the machine temp folder', () => {
    expect(basename(tmpdir())).toMatch(/^rlm-test-run-/);
    expect(dirname(fileLevel)).toBe(tmpdir());
  });

  it('fails the run naming what was left in it, and only then', () => {
    expect(leftoverError('/tmp/rlm-test-run-x', [])).toBeNull();
    const error = leftoverError('/tmp/rlm-test-run-x', ['rlm-test-a1', 'rlm-shot-b2']);
    expect(error?.message).toMatch(
      /^the test run left 2 entries in its temp folder \/tmp\/rlm-test-run-x: rlm-test-a1, rlm-shot-b2\./,
    );
    const many = leftoverError(
      '/t',
      Array.from({ length: 25 }, (_, i) => `f${i}`),
    );
    expect(many?.message).toContain('f19 and 5 more.');
  });
});

describe('tempDir', () => {
  it('makes an empty folder for a test, removed when the test ends', () => {
    madeInTest = tempDir();
    writeFileSync(join(madeInTest, 'file'), 'x');
    expect(existsSync(madeInTest)).toBe(true);
  });

  it('has removed the folder of the test before, and keeps a file-level folder for the whole file', () => {
    expect(madeInTest).not.toBe('');
    expect(existsSync(madeInTest)).toBe(false);
    expect(existsSync(fileLevel)).toBe(true);
  });
});
