import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { smokeRules } from '../../../benchmarks/policies/smoke.ts';
import { countTokens } from '../../../memory/ingest/tokens.ts';
import type { ModelRequest } from '../../../src/runtime/model.ts';
import {
  ScriptedModel,
  type ScriptRule,
  scriptRulesSchema,
} from '../../../src/runtime/providers/scripted.ts';
import { caught, thrown } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';

const EXAMPLES = join(import.meta.dirname, '../../../examples');

const tmp = tempDir('rlm-scripted-');

function call(text: string, depth = 0, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { system: 'sys', messages: [{ role: 'user', content: text }], depth, ...extra };
}

describe('ScriptedModel', () => {
  it('takes the first matching rule in order', async () => {
    const model = new ScriptedModel({
      rules: [{ match: 'apple', reply: 'A' }, { match: 'app', reply: 'B' }, { reply: 'C' }],
    });
    expect((await model.complete(call('apple pie'))).text).toBe('A');
    expect((await model.complete(call('application'))).text).toBe('B');
    expect((await model.complete(call('zzz'))).text).toBe('C');
  });

  it('filters by depth', async () => {
    const model = new ScriptedModel([
      { depth: 1, reply: 'sub' },
      { depth: 0, reply: 'root' },
    ]);
    expect((await model.complete(call('x', 0))).text).toBe('root');
    expect((await model.complete(call('x', 1))).text).toBe('sub');
    expect((await caught(model.complete(call('x', 2)))).code).toBe('SCRIPT_EXHAUSTED');
  });

  it('honours times, then falls through; state is per instance', async () => {
    const rules: ScriptRule[] = [
      { reply: 'once', times: 1 },
      { reply: 'twice', times: 2 },
    ];
    const model = new ScriptedModel({ rules });
    const replies: string[] = [];
    for (let i = 0; i < 3; i++) replies.push((await model.complete(call('q'))).text);
    expect(replies).toEqual(['once', 'twice', 'twice']);
    expect((await caught(model.complete(call('q')))).code).toBe('SCRIPT_EXHAUSTED');

    const fresh = new ScriptedModel({ rules });
    expect((await fresh.complete(call('q'))).text).toBe('once');
  });

  it('substitutes $1..$9 and matches across lines (s flag) against the last user message', async () => {
    const model = new ScriptedModel([
      { match: 'name: (\\w+).*age: (\\d+)(x)?', reply: '$2 years, $1$3 ($9)' },
    ]);
    const res = await model.complete({
      system: '',
      messages: [
        { role: 'user', content: 'name: ignored age: 0' },
        { role: 'assistant', content: 'name: nope age: 1' },
        { role: 'user', content: 'name: Ada\nage: 36' },
        { role: 'assistant', content: 'trailing assistant turn' },
      ],
      depth: 0,
    });
    expect(res.text).toBe('36 years, Ada ()');
  });

  it('names the depth and the first 80 characters of the message when exhausted', async () => {
    const model = new ScriptedModel([{ match: 'never', reply: 'x' }]);
    const long = `${'a'.repeat(80)}TAIL`;
    const err = await caught(model.complete(call(long, 3)));
    expect(err.code).toBe('SCRIPT_EXHAUSTED');
    expect(err.message).toContain('depth 3');
    expect(err.message).toContain('a'.repeat(80));
    expect(err.message).not.toContain('TAIL');
  });

  it('counts usage with the tokenizer', async () => {
    const model = new ScriptedModel([{ reply: 'four five six' }], {
      countTokens: (t) => t.split(/\s+/).length,
    });
    const res = await model.complete(call('one two three'));
    // "sys\none two three" → 4 words with the injected counter
    expect(res.usage).toEqual({ inputTokens: 4, outputTokens: 3 });
    const defaultCounter = new ScriptedModel([{ reply: 'a reply of some length' }]);
    const usage = (await defaultCounter.complete(call('a question of some length'))).usage;
    expect(usage.inputTokens).toBe(countTokens('sys\na question of some length'));
    expect(usage.outputTokens).toBe(countTokens('a reply of some length'));
    expect(usage.outputTokens).toBeGreaterThan(0);
  });

  it('sleeps delayMs, and an abort cuts the sleep short', async () => {
    const model = new ScriptedModel([{ reply: 'late', delayMs: 60_000 }]);
    const ctl = new AbortController();
    // complete() starts its sleep before it returns: this abort comes during the sleep.
    const pending = model.complete(call('q', 0, { signal: ctl.signal }));
    ctl.abort();
    expect((await caught(pending)).code).toBe('ABORTED');
  });

  it('loads a rules file', async () => {
    const file = join(tmp, 'rules.json');
    writeFileSync(
      file,
      JSON.stringify({ rules: [{ depth: 0, match: '^Q: (.*)$', reply: 'FINAL($1)', times: 1 }] }),
    );
    const model = ScriptedModel.fromFile(file);
    expect(model.spec).toBe(`scripted:${file}`);
    expect((await model.complete(call('Q: hi'))).text).toBe('FINAL(hi)');
  });

  it('rejects a missing file, bad JSON and bad rules as BAD_INPUT naming file and rule', () => {
    const missing = thrown(() => ScriptedModel.fromFile(join(tmp, 'nope.json')));
    expect(missing.code).toBe('BAD_INPUT');
    expect(missing.message).toContain('nope.json');

    const badJson = join(tmp, 'bad.json');
    writeFileSync(badJson, '{"rules": [');
    const e1 = thrown(() => ScriptedModel.fromFile(badJson));
    expect(e1.code).toBe('BAD_INPUT');
    expect(e1.message).toContain('bad.json');

    const badRegex = join(tmp, 'regex.json');
    writeFileSync(badRegex, JSON.stringify({ rules: [{ reply: 'ok' }, { match: '(unclosed', reply: 'x' }] }));
    const e2 = thrown(() => ScriptedModel.fromFile(badRegex));
    expect(e2.code).toBe('BAD_INPUT');
    expect(e2.message).toContain('regex.json rule 1');
    expect(e2.details.rule).toBe(1);

    for (const rules of [
      [{ match: 'x' }],
      [{ reply: 'x', depth: -1 }],
      [{ reply: 'x', times: 1.5 }],
      [{ reply: 'x', delayMs: 'slow' }],
      ['not an object'],
    ]) {
      expect(thrown(() => new ScriptedModel({ rules } as never)).code).toBe('BAD_INPUT');
    }
    expect(thrown(() => new ScriptedModel({ nope: [] } as never)).message).toContain('expected {"rules"');
  });

  it('names a misspelt field instead of ignoring it, and says which rule and field are wrong', () => {
    const typo = thrown(
      () => new ScriptedModel([{ reply: 'a' }, { reply: 'b', time: 1 }] as never, { source: 'r.json' }),
    );
    expect(typo.code).toBe('BAD_INPUT');
    expect(typo.message).toBe(
      'r.json rule 1: unknown field "time" (known: depth, match, reply, times, delayMs)',
    );
    expect(typo.details.rule).toBe(1);
    const times = thrown(() => new ScriptedModel([{ reply: 'b', times: -2 }], { source: 'r.json' }));
    expect(times.message).toBe('r.json rule 0: "times" must be a non-negative integer');
    const regex = thrown(() => new ScriptedModel([{ reply: 'b', match: '(' }], { source: 'r.json' }));
    expect(regex.message).toMatch(/^r\.json rule 0: bad regex: /);
  });

  it('accepts every rules file the project ships (examples, the benchmark smoke policy) under the one schema', () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      expect(
        scriptRulesSchema().safeParse(JSON.parse(readFileSync(join(EXAMPLES, f), 'utf8'))).success,
        f,
      ).toBe(true);
    }
    expect(scriptRulesSchema().safeParse(smokeRules()).success).toBe(true);
  });
});
