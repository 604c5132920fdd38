import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RlmError } from '../../core/errors.ts';
import { type CliIO, EXIT_INTERRUPTED, readStdin, stdoutColor } from '../../src/cli/io.ts';
import { main, quietOnClosedPipe, reportError } from '../../src/cli/main.ts';
import { tempDir } from '../helpers/temp.ts';
import { cli } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function io(stdin: Readable, env: Record<string, string> = {}, tty = false): CliIO {
  return {
    stdout: { write: () => true, isTTY: tty },
    stderr: { write: () => true },
    stdin,
    env,
    cwd: '/',
  };
}

describe('CLI input and output', () => {
  it('reads stdin as UTF-8 even when a character is split across two reads', async () => {
    const bytes = Buffer.from('Où est le café ? 日本', 'utf8');
    const cut = bytes.indexOf(Buffer.from('é', 'utf8')) + 1; // inside the two bytes of é
    const text = await readStdin(io(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)])));
    expect(text).toBe('Où est le café ? 日本');
  });

  it('colours stdout only on a terminal and never with NO_COLOR', () => {
    expect(stdoutColor(io(Readable.from([]), {}, true))).toBe(true);
    expect(stdoutColor(io(Readable.from([]), { NO_COLOR: '1' }, true))).toBe(false);
    expect(stdoutColor(io(Readable.from([]), {}, false))).toBe(false);
  });

  it('exits 130 when a command was interrupted (ABORTED), as shells report Ctrl-C', () => {
    let err = '';
    const code = reportError(new RlmError('ABORTED', 'ingest was cancelled'), {
      ...io(Readable.from([])),
      stderr: { write: (s: string) => (err += s) },
    });
    expect(code).toBe(EXIT_INTERRUPTED);
    expect(code).toBe(130);
    expect(err).toBe('rlm: ingest was cancelled [ABORTED]\n');
  });

  it('says a file it may not read or write is ACCESS_DENIED, whichever step met it, exit 1', () => {
    let err = '';
    const denied = Object.assign(new Error("EACCES: permission denied, open '/srv/x'"), {
      code: 'EACCES',
      path: '/srv/x',
      syscall: 'open',
    });
    const code = reportError(denied, {
      ...io(Readable.from([])),
      stderr: { write: (s: string) => (err += s) },
    });
    expect(code).toBe(1);
    expect(err).toBe(
      'rlm: /srv/x: permission denied (EACCES); check its owner and mode (ls -l) [ACCESS_DENIED]\n',
    );
  });

  it('turns EPIPE on its streams into a quiet exit 0 and rethrows anything else', () => {
    const stream = new EventEmitter();
    const exits: number[] = [];
    quietOnClosedPipe(stream, (c) => exits.push(c));
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(exits).toEqual([0]);
    expect(() => stream.emit('error', Object.assign(new Error('boom'), { code: 'EIO' }))).toThrow('boom');
  });

  it('`rlm grep ... | head -1` prints one line, no stack trace, and exits 0', async () => {
    const root = tempDir();
    const file = path.join(root, 'many.txt');
    writeFileSync(file, Array.from({ length: 20000 }, (_, i) => `needle line ${i}`).join('\n'));
    const store = path.join(root, 'store');
    expect((await cli(['ingest', file, '--store', store])).code).toBe(0);
    const main = JSON.stringify(new URL('../../src/cli/main.ts', import.meta.url).href);
    const script = `import(${main}).then((m) => m.run())`;
    const r = spawnSync(
      'bash',
      [
        '-c',
        `"${process.execPath}" --no-node-snapshot --input-type=module -e '${script}' -- _ grep needle --store "${store}" --limit 20000 | head -1; echo "exit=\${PIPESTATUS[0]}" >&2`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toMatch(/needle line 0/);
    expect(r.stderr).not.toMatch(/EPIPE|Error|at /);
    expect(r.stderr).toMatch(/exit=0/);
  });

  it('says nothing about the match limit once the reader of its output has gone', async () => {
    const root = tempDir();
    const file = path.join(root, 'many.txt');
    writeFileSync(file, Array.from({ length: 300 }, (_, i) => `needle line ${i}`).join('\n'));
    const store = path.join(root, 'store');
    expect((await cli(['ingest', file, '--store', store])).code).toBe(0);
    // The limit note goes to stderr, beside output that is all there.
    expect((await cli(['grep', 'needle', '--store', store])).stderr).toMatch(/stopped at 100 matches/);
    // Its reader gone before the first line (the read end closed at once): no note about output nobody reads.
    const launcher = fileURLToPath(new URL('../mcp/helpers/launch.ts', import.meta.url));
    const child = spawn(process.execPath, [launcher, 'grep', 'needle', '--store', store], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stderr).toBe('');
  });
});

const TEXT = 'Quelle est la météo à Zürich? 東京 🌧️';

/** The text's bytes cut at every position, as a pipe may deliver them. */
function splits(text: string): Buffer[][] {
  const bytes = Buffer.from(text, 'utf8');
  return Array.from({ length: bytes.length - 1 }, (_, i) => [
    bytes.subarray(0, i + 1),
    bytes.subarray(i + 1),
  ]);
}

describe('readStdin', () => {
  it('decodes a UTF-8 character split across chunks at any byte', async () => {
    for (const chunks of splits(TEXT)) {
      expect(await readStdin({ stdin: Readable.from(chunks) })).toBe(TEXT);
    }
  });

  it('accepts string chunks and an empty stream', async () => {
    expect(await readStdin({ stdin: Readable.from(['a', 'é']) })).toBe('aé');
    expect(await readStdin({ stdin: Readable.from([]) })).toBe('');
  });

  it('gives `rlm answer -` the question intact when a character straddles two chunks', async () => {
    const root = tempDir();
    const rules = path.join(root, 'rules.json');
    writeFileSync(
      rules,
      JSON.stringify({ rules: [{ match: 'météo à Zürich\\? 東京', reply: 'FINAL(ensoleillé)' }] }),
    );
    // Cut inside the two bytes of "é" in "météo".
    const bytes = Buffer.from(`${TEXT}\n`, 'utf8');
    const cut = bytes.indexOf(Buffer.from('é', 'utf8')) + 1;
    let stdout = '';
    const io: CliIO = {
      stdout: { write: (s: string) => (stdout += s), isTTY: false },
      stderr: { write: () => true, isTTY: false },
      stdin: Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]),
      env: { PATH: process.env.PATH, RLM_MODEL: `scripted:${rules}` },
      cwd: root,
    };
    expect(await main(['answer', '-', '--context', rules], io)).toBe(0);
    expect(stdout).toBe('ensoleillé\n');
  });
});
