/**
 * A CLI user sees rlm's own lines only. The Anthropic SDK warns on stderr (console.warn) when a request
 * names a deprecated model; through the `rlm` command that notice shows only with RLM_DEBUG.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeServer, sendJson, startFakeServer } from '../runtime/providers/fake-server.ts';

const launcher = fileURLToPath(new URL('../mcp/helpers/launch.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// A model the installed SDK lists as deprecated (its messages.create warns for it).
const DEPRECATED = 'claude-sonnet-4-5';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function rlm(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('library noise', () => {
  it('keeps the SDK deprecation notice off a CLI user’s terminal, and shows it with RLM_DEBUG', async () => {
    server = await startFakeServer((_req, _i, res) =>
      sendJson(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: DEPRECATED,
        content: [{ type: 'text', text: 'FINAL(2)' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 3 },
      }),
    );
    const args = [
      'answer',
      'Which schema version?',
      '--context',
      'memory/SCHEMA.md',
      '--model',
      `anthropic:${DEPRECATED}`,
    ];
    const env = { ANTHROPIC_API_KEY: 'sk-ant-test-0123456789', ANTHROPIC_BASE_URL: server.url };

    const quiet = await rlm(args, env);
    expect(quiet.stdout).toBe('2\n');
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toMatch(/^rlm: final · 1 iteration /m);
    expect(quiet.stderr).not.toMatch(/deprecated/i);

    const debug = await rlm(args, { ...env, RLM_DEBUG: '1' });
    expect(debug.stdout).toBe('2\n');
    expect(debug.stderr).toMatch(new RegExp(`The model '${DEPRECATED}' is deprecated`));
  }, 60_000);
});
