import { existsSync, rmSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { inside, makeFolderSync } from '../../core/paths.ts';
import { tempDir } from '../helpers/temp.ts';

describe('inside', () => {
  it('compares whole path segments', () => {
    expect(inside('/a/b', '/a')).toBe(true);
    expect(inside('/a', '/a')).toBe(true);
    expect(inside('/ab', '/a')).toBe(false);
    expect(inside('/a/..b', '/a')).toBe(true);
    expect(inside('/', '/a')).toBe(false);
  });
});

describe('makeFolderSync', () => {
  it('makes a folder and its parents', () => {
    const dir = path.join(tempDir(), 'a', 'b');
    makeFolderSync(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  it('refuses /proc, /sys and /dev, also through a link, and makes nothing', () => {
    const root = tempDir();
    symlinkSync('/proc/self', path.join(root, 'me'));
    for (const dir of ['/proc/rlm-test/x', '/sys/rlm-test', '/dev/rlm-test', path.join(root, 'me', 'x')])
      expect(() => makeFolderSync(dir)).toThrow(/is in \/proc, \/sys or \/dev, where rlm makes no folder/);
    expect(existsSync('/dev/rlm-test')).toBe(false);
  });

  it('makes folders in /dev/shm, the memory-backed folder some keep stores in', () => {
    const dir = path.join('/dev/shm', `rlm-test-${process.pid}`, 'x');
    onTestFinished(() => rmSync(path.dirname(dir), { recursive: true, force: true }));
    makeFolderSync(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
  });
});
