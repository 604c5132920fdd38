import { describe, expect, it } from 'vitest';
import { compilePattern, isIgnored, parseIgnore } from '../../../memory/ingest/ignore.ts';

const set = (text: string) => [{ base: '/r', rules: parseIgnore(text) }];

describe('.gitignore patterns', () => {
  it('matches names at any depth, anchored paths, folders only and globs', () => {
    const s = set('# comment\n\n*.log\n/build\ndocs/draft-*.md\ncache/\n**/tmp/**\n');
    expect(isIgnored(s, '/r/a.log', false)).toBe(true);
    expect(isIgnored(s, '/r/x/y/b.log', false)).toBe(true);
    expect(isIgnored(s, '/r/build', true)).toBe(true);
    expect(isIgnored(s, '/r/src/build', true)).toBe(false);
    expect(isIgnored(s, '/r/docs/draft-1.md', false)).toBe(true);
    expect(isIgnored(s, '/r/other/docs/draft-1.md', false)).toBe(false);
    expect(isIgnored(s, '/r/x/cache', true)).toBe(true);
    expect(isIgnored(s, '/r/x/cache', false)).toBe(false);
    expect(isIgnored(s, '/r/a/tmp/z.txt', false)).toBe(true);
    expect(isIgnored(s, '/r/readme.md', false)).toBe(false);
    expect(isIgnored(s, '/elsewhere/a.log', false)).toBe(false);
  });

  it('lets a later negation re-include, and an inner file override an outer one', () => {
    const outer = { base: '/r', rules: parseIgnore('*.md\n!keep.md\n') };
    expect(isIgnored([outer], '/r/a.md', false)).toBe(true);
    expect(isIgnored([outer], '/r/keep.md', false)).toBe(false);
    const inner = { base: '/r/sub', rules: parseIgnore('!a.md\n') };
    expect(isIgnored([outer, inner], '/r/sub/a.md', false)).toBe(false);
    expect(isIgnored([outer, inner], '/r/a.md', false)).toBe(true);
  });

  it('handles character classes, ? and escapes', () => {
    const s = set('file[0-9].txt\n?.c\n\\#notes\nx[!a].y\n');
    expect(isIgnored(s, '/r/file7.txt', false)).toBe(true);
    expect(isIgnored(s, '/r/filex.txt', false)).toBe(false);
    expect(isIgnored(s, '/r/a.c', false)).toBe(true);
    expect(isIgnored(s, '/r/ab.c', false)).toBe(false);
    expect(isIgnored(s, '/r/#notes', false)).toBe(true);
    expect(isIgnored(s, '/r/xb.y', false)).toBe(true);
    expect(isIgnored(s, '/r/xa.y', false)).toBe(false);
    expect(compilePattern('   ')).toBeNull();
  });
});
