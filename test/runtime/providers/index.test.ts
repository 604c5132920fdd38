import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AnthropicModel,
  ClaudeCodeModel,
  createModel,
  OpenAIModel,
  parseModelSpec,
  ScriptedModel,
} from '../../../src/runtime/providers/index.ts';
import { thrown } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';

const tmp = tempDir('rlm-providers-');
const FAKE_BIN = resolve(import.meta.dirname, '../../fixtures/providers/bin');
const FAKE_CLAUDE = join(FAKE_BIN, 'claude');

const UNKNOWN =
  /^unknown model spec ".*" — use anthropic:MODEL, openai:MODEL, claude-code\[:MODEL\], scripted:FILE, replay:TRACE\.jsonl or relay:DIR$/;

describe('parseModelSpec', () => {
  it('splits provider and model', () => {
    expect(parseModelSpec('anthropic:claude-sonnet-4-5')).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
    });
    expect(parseModelSpec('openai:qwen2.5:7b')).toEqual({ provider: 'openai', model: 'qwen2.5:7b' });
    expect(parseModelSpec('claude-code')).toEqual({ provider: 'claude-code', model: undefined });
    expect(parseModelSpec('claude-code:opus')).toEqual({ provider: 'claude-code', model: 'opus' });
    expect(parseModelSpec('scripted:./rules.json')).toEqual({ provider: 'scripted', model: './rules.json' });
  });

  it.each(['gpt-4o', 'foo:bar', 'anthropic:', 'openai', 'scripted: ', ''])(
    'rejects %j as BAD_INPUT',
    (spec) => {
      const err = thrown(() => parseModelSpec(spec));
      expect(err.code).toBe('BAD_INPUT');
      expect(err.message).toMatch(UNKNOWN);
    },
  );
});

describe('createModel', () => {
  it('builds an anthropic model, failing fast without a key (env is the one passed in)', () => {
    const err = thrown(() => createModel('anthropic:claude-haiku-4-5', { env: {} }));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toBe('ANTHROPIC_API_KEY is not set (needed by anthropic:claude-haiku-4-5)');
    const model = createModel('anthropic:claude-haiku-4-5', { env: { ANTHROPIC_API_KEY: 'k' } });
    expect(model).toBeInstanceOf(AnthropicModel);
    expect(model.spec).toBe('anthropic:claude-haiku-4-5');
  });

  it('needs an OpenAI key for api.openai.com but not for a local server', () => {
    const err = thrown(() => createModel('openai:gpt-4o', { env: {} }));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toBe('OPENAI_API_KEY is not set (needed by openai:gpt-4o)');
    expect(createModel('openai:gpt-4o', { env: { OPENAI_API_KEY: 'k' } })).toBeInstanceOf(OpenAIModel);
    for (const base of ['http://127.0.0.1:8080/v1', 'http://localhost:11434/v1']) {
      expect(createModel('openai:llama', { env: { OPENAI_BASE_URL: base } })).toBeInstanceOf(OpenAIModel);
    }
    expect(thrown(() => createModel('openai:x', { env: { OPENAI_BASE_URL: 'not a url' } })).code).toBe(
      'BAD_INPUT',
    );
  });

  it('sends openai requests to OPENAI_BASE_URL through the injected fetch', async () => {
    const urls: string[] = [];
    const fake: typeof fetch = async (url) => {
      urls.push(String(url));
      return new Response(JSON.stringify({ choices: [{ message: { content: 'hi' } }] }), { status: 200 });
    };
    const model = createModel('openai:llama', {
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/' },
      fetch: fake,
    });
    expect(
      (await model.complete({ system: '', messages: [{ role: 'user', content: 'q' }], depth: 0 })).text,
    ).toBe('hi');
    expect(urls).toEqual(['http://127.0.0.1:9/v1/chat/completions']);
  });

  it('builds claude-code and scripted models', () => {
    expect(createModel('claude-code:sonnet', { env: { PATH: FAKE_BIN } })).toBeInstanceOf(ClaudeCodeModel);
    expect(createModel('claude-code', { env: { PATH: `${tmp}${delimiter}${FAKE_BIN}` } })).toBeInstanceOf(
      ClaudeCodeModel,
    );
    expect(createModel('claude-code:sonnet', { env: { CLAUDE_CODE_PATH: FAKE_CLAUDE } })).toBeInstanceOf(
      ClaudeCodeModel,
    );
    const file = join(tmp, 'r.json');
    writeFileSync(file, JSON.stringify({ rules: [{ reply: 'x' }] }));
    const scripted = createModel(`scripted:${file}`);
    expect(scripted).toBeInstanceOf(ScriptedModel);
    expect(scripted.spec).toBe(`scripted:${file}`);
    expect(thrown(() => createModel(`scripted:${join(tmp, 'missing.json')}`)).code).toBe('BAD_INPUT');
  });

  it('fails claude-code at creation when no claude CLI can be found', () => {
    const notFound = 'the claude CLI was not found on PATH — install Claude Code or set CLAUDE_CODE_PATH';
    // Neither a directory named claude nor a file that is not executable counts.
    const dirs = join(tmp, 'no-claude');
    mkdirSync(join(dirs, 'claude'), { recursive: true });
    const plain = join(tmp, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'claude'), '#!/bin/sh\n');
    chmodSync(join(plain, 'claude'), 0o644);
    for (const env of [{}, { PATH: '' }, { PATH: `${dirs}${delimiter}${plain}` }]) {
      const err = thrown(() => createModel('claude-code:sonnet', { env }));
      expect(err.code).toBe('BAD_INPUT');
      expect(err.message).toBe(notFound);
    }
    for (const bad of [join(tmp, 'missing-claude'), join(plain, 'claude'), dirs]) {
      const err = thrown(() =>
        createModel('claude-code', { env: { PATH: FAKE_BIN, CLAUDE_CODE_PATH: bad } }),
      );
      expect(err.code).toBe('BAD_INPUT');
      expect(err.message).toContain(`CLAUDE_CODE_PATH is not an executable file: ${bad}`);
    }
  });

  it('rejects unknown specs', () => {
    expect(thrown(() => createModel('gemini:pro', { env: {} })).message).toMatch(UNKNOWN);
  });
});
