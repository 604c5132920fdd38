import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../core/shell.ts';

describe('shellQuote', () => {
  it('leaves plain words alone and quotes the rest so that sh reads them back unchanged', () => {
    expect(shellQuote('/home/ana/.rlm/claude')).toBe('/home/ana/.rlm/claude');
    expect(shellQuote("/tmp/it's here")).toBe(`'/tmp/it'\\''s here'`);
    const words = ["/tmp/it's here", 'a b', '$HOME', '`x`', 'é/ü', '', '"q"', 'back\\slash'];
    const r = spawnSync('sh', ['-c', `printf '%s\\n' ${words.map(shellQuote).join(' ')}`], {
      encoding: 'utf8',
    });
    expect(r.stdout).toBe(`${words.join('\n')}\n`);
  });
});
