import { describe, expect, it } from 'vitest';
import { withoutHostPaths } from '../../core/host-paths.ts';

describe('withoutHostPaths', () => {
  it('replaces absolute, home and relative paths, POSIX or Windows', () => {
    for (const [text, shown] of [
      ['cannot read /home/alice/work/rules.json: ENOENT', 'cannot read <path>: ENOENT'],
      ['store C:\\Users\\alice\\store is locked', 'store <path> is locked'],
      ['trace ~/traces/run.jsonl has no reply', 'trace <path> has no reply'],
      ['see ./examples/rules.json and ../up/x', 'see <path> and <path>'],
      ['scripted:/tmp/r/rules.json: no rule matches', 'scripted:<path>: no rule matches'],
      // After file://, after a JSON escape, and glued to a word when it has three segments or more.
      ['at file:///home/alice/proj/src/x.js:10:5', 'at file://<path>:10:5'],
      [JSON.stringify('see\n/home/alice/secret/keys.txt'), '"see\\n<path>"'],
      ['x/home/alice/secret', 'x<path>'],
    ]) {
      expect(withoutHostPaths(text as string)).toBe(shown);
    }
  });

  it('leaves ordinary text alone: ratios, versions, a lone slash, words with slashes, escaped line ends', () => {
    const text = 'limit 1/2 of v1.2.3, and/or 3 km/h; a /tmp alone; e.g. x./y';
    expect(withoutHostPaths(text)).toBe(text);
    // A prompt quoted in a sub-call's error, as JSON: its words and its escapes stay as they are.
    const quoted = JSON.stringify('allow read/write/exec on it.\n\n--- then this');
    expect(withoutHostPaths(`no rule matches ${quoted}`)).toBe(`no rule matches ${quoted}`);
    expect(withoutHostPaths('see \\\\server\\share\\x and /srv/a')).toBe('see <path> and <path>');
  });

  it('puts what model code may see in place of the known host strings, longest first', () => {
    const known: Array<[string, string]> = [
      ['examples/rules.json', 'rules.json'],
      ['scripted:examples/rules.json', 'scripted:rules.json'],
    ];
    expect(withoutHostPaths('use scripted:examples/rules.json (examples/rules.json)', known)).toBe(
      'use scripted:rules.json (rules.json)',
    );
  });
});
