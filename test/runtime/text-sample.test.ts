import { describe, expect, it } from 'vitest';
import { sampleText } from '../../src/runtime/text-sample.ts';

describe('sampleText', () => {
  it('finds the record separator of a dpkg status file: blank lines, records starting Package:', () => {
    const records = Array.from(
      { length: 50 },
      (_, i) =>
        `Package: pkg${i}\nStatus: install ok installed\nPriority: optional\nVersion: 1.${i}\nDescription: tool ${i}\n more about it\n`,
    );
    const s = sampleText(records.join('\n'));
    expect(s.lines).toEqual([
      'Package: pkg0',
      'Status: install ok installed',
      'Priority: optional',
      'Version: 1.0',
      'Description: tool 0',
    ]);
    expect(s.blankRuns).toBe(49);
    // On a tie, the field the records start with comes first.
    expect(s.starts.map((x) => x.start)).toEqual(['Package:', 'Status:', 'Priority:']);
    expect(s.starts[0]?.lines).toBe(50);
  });

  it('finds the recurring lines of a changelog: its signature lines and bullets', () => {
    const entries = Array.from(
      { length: 30 },
      (_, i) =>
        `tzdata (2024a-${i}) unstable; urgency=medium\n\n  * New upstream release.\n  * Fix ${i}.\n\n -- Jane Doe <jane@example.org>  Mon, 01 Jan 2024 10:00:00 +0000\n`,
    );
    const s = sampleText(entries.join('\n'));
    expect(s.starts).toEqual([
      { start: '  * ', lines: 60 },
      { start: 'tzdata ', lines: 30 },
      { start: ' -- ', lines: 30 },
    ]);
  });

  it('measures only the beginning of a large text, ending on a whole line, and cuts long lines', () => {
    const text = `${'x'.repeat(500)}\n${'line\n'.repeat(200_000)}`;
    const s = sampleText(text);
    expect(s.window).toBeLessThan(text.length);
    expect(text[s.window - 1]).toBe('\n');
    expect(s.lines[0]).toHaveLength(120);
    expect(s.lines[0]?.endsWith('…')).toBe(true);
    expect(sampleText('short').window).toBe(5);
  });
});
