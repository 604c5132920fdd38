import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { tempDir } from '../helpers/temp.ts';
import { scripted } from './helpers/rules.ts';

const dir = tempDir('rlm-mcp-cli-');
const launcher = fileURLToPath(new URL('./helpers/launch.ts', import.meta.url));

function io(): CliIO & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    stdin: new PassThrough(),
    env: {},
    cwd: dir,
    out: () => out,
    err: () => err,
  };
}

describe('rlm serve (command line)', () => {
  it('prints help on stdout', async () => {
    const t = io();
    expect(await main(['serve', '--help'], t)).toBe(0);
    expect(t.out()).toMatch(/^usage: rlm serve/);
    expect(t.out()).toContain('RLM_MCP_TOKEN');
  });

  it('rejects bad flags as usage errors', async () => {
    const cases: [string[], RegExp][] = [
      [['--transport', 'tcp'], /--transport must be stdio or http, got 'tcp'/],
      [['--port', '80'], /--port and --host need --transport http/],
      [['--transport', 'http', '--port', 'x'], /--port must be an integer/],
      [['--transport', 'http', '--port', '70000'], /--port must be at most 65535/],
      [['extra'], /unexpected argument 'extra'/],
      [['--max-sessions', '3'], /--max-sessions, --idle-minutes and --max-body-mb need --transport http/],
      [['--transport', 'http', '--max-body-mb', '0'], /--max-body-mb must be an integer >= 1/],
      [['--max-runs', '0'], /--max-runs must be an integer >= 1, got '0'/],
    ];
    for (const [args, message] of cases) {
      const t = io();
      expect(await main(['serve', ...args], t), args.join(' ')).toBe(2);
      expect(t.err()).toMatch(message);
      expect(t.out()).toBe('');
    }
  });

  it('serves HTTP on loopback from a subprocess and stops cleanly on SIGTERM', async () => {
    const model = scripted(dir, 'cli-http.json', [{ depth: 0, reply: 'FINAL(over http)' }]);
    const child = spawn(
      process.execPath,
      ['--no-node-snapshot', launcher, 'serve', '--transport', 'http', '--port', '0', '--max-sessions', '1'],
      {
        env: { PATH: process.env.PATH, RLM_MODEL: model },
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString('utf8');
          const m = /MCP over HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        child.once('exit', () => reject(new Error(`server exited: ${stderr}`)));
      });
      const client = new Client({ name: 'cli-test', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const r = await client.callTool({ name: 'rlm_answer', arguments: { question: 'q', context: 'c' } });
      expect(r.structuredContent).toMatchObject({ answer: 'over http', status: 'final' });
      const second = new Client({ name: 'cli-test-2', version: '0' });
      await expect(second.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow(
        /too many sessions \(the limit is 1\)/,
      );
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toContain('rlm serve: stopping');
  });
});
