import { describe, expect, it } from 'vitest';
import { parseWhen } from '../../../memory/memories/memory-model.ts';
import { caught } from '../../helpers/errors.ts';

describe('parseWhen', () => {
  it('takes ISO dates and times and Nd, and refuses a day that does not exist instead of rolling it over', async () => {
    const now = new Date('2026-03-10T00:00:00Z');
    expect(parseWhen('2026-02-28', 'now').toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(parseWhen('2024-02-29T12:00:00Z', 'now').toISOString()).toBe('2024-02-29T12:00:00.000Z');
    expect(parseWhen('7d', 'since', now).toISOString()).toBe('2026-03-03T00:00:00.000Z');
    for (const bad of ['2026-02-30', '2026-02-29', '2026-13-01', '2026-04-31T10:00:00Z', 'soon']) {
      const err = await caught(Promise.resolve().then(() => parseWhen(bad, '--now')));
      expect(err.code, bad).toBe('BAD_INPUT');
      expect(err.message, bad).toBe(`--now must be an ISO date (2026-01-31) or Nd (7d), got "${bad}"`);
    }
  });
});
