/**
 * Which literal a grep pattern's every match must contain: the PostgreSQL store asks its trigram index
 * for the chunks holding it, so a wrong answer would hide matches. No server needed.
 */
import { describe, expect, it } from 'vitest';
import { requiredLiteral } from '../../../memory/postgres/grep.ts';

describe('requiredLiteral', () => {
  it('takes the longest plain run that every match contains', () => {
    expect(requiredLiteral('quark\\w+', false)).toBe('quark');
    expect(requiredLiteral('ERR-\\d{4}: disk', false)).toBe(': disk');
    expect(requiredLiteral('foo\\.bar', false)).toBe('foo.bar');
    expect(requiredLiteral('abc[xyz]defgh', false)).toBe('defgh');
    expect(requiredLiteral('(a+)+$', true)).toBe('(a+)+$');
  });

  it('leaves out what a match may lack: optional characters, groups, alternations, short runs', () => {
    expect(requiredLiteral('colou?r', false)).toBe('colo');
    expect(requiredLiteral('colours?', false)).toBe('colour');
    expect(requiredLiteral('ab*cdef', false)).toBe('cdef');
    expect(requiredLiteral('(optional)?word', false)).toBe('word');
    expect(requiredLiteral('cat|dog', false)).toBe(null);
    expect(requiredLiteral('x{2,}yz', false)).toBe(null);
    expect(requiredLiteral('ab', false)).toBe(null);
    expect(requiredLiteral('\\bcall\\(', false)).toBe('call(');
  });

  it('leaves the body of an escape out: hex, unicode, octal, control, property and named escapes', () => {
    expect(requiredLiteral('\\x45RR-00', false)).toBe('RR-00');
    expect(requiredLiteral('\\u0045RR-00', false)).toBe('RR-00');
    expect(requiredLiteral('\\u{45}RR-00', false)).toBe('RR-00');
    expect(requiredLiteral('\\105RR-00', false)).toBe('RR-00');
    expect(requiredLiteral('\\cJ## Section', false)).toBe('## Section');
    expect(requiredLiteral('\\p{Lu}rror code', false)).toBe('rror code');
    expect(requiredLiteral('(?<w>ab)\\k<w>cdef', false)).toBe('cdef');
    expect(requiredLiteral('\\x4', false)).toBe(null);
  });

  it('finds a match in every text the literal test keeps', () => {
    const patterns = [
      'quark\\w+',
      'colours?',
      'ab*cdef',
      '(optional)?word',
      '\\bcall\\(',
      'x\\.y+z',
      '\\x45RR-00',
      '\\u0045RR-00',
      '\\105RR-00',
      '\\cJ## Section',
    ];
    const texts = [
      'quarkbeam',
      'colour',
      'colours',
      'acdef',
      'abbbcdef',
      'word',
      'optionalword',
      'call(',
      'x.yyz',
      'ERR-0042',
      'top\n## Section 2',
    ];
    for (const p of patterns) {
      const lit = requiredLiteral(p, false);
      for (const t of texts)
        if (new RegExp(p).test(t) && lit !== null) expect(t, `${p} on ${t}`).toContain(lit);
    }
  });
});
