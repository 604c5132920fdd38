/**
 * The entry points (`rlm`, `rlm/memory`, `rlm/sandbox`, `rlm/mcp`) each load only what they need. Each is
 * imported in a fresh Node process that records the modules it reads: what is asserted is which modules
 * load, not how long it takes.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

function loads(entry: string): { files: string[]; packages: string[] } {
  const out = execFileSync(
    process.execPath,
    ['--no-node-snapshot', '--no-warnings', path.join(ROOT, 'test/helpers/loaded-modules.ts'), entry],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return JSON.parse(out) as { files: string[]; packages: string[] };
}

const under = (files: string[], dir: string) => files.filter((f) => f.startsWith(dir));

describe('entry points', () => {
  it('`rlm` loads the runtime and its providers, but no SDK, store, sandbox or MCP server', () => {
    const { files, packages } = loads('src/index.ts');
    // No package: zod loads with a structured sub-call's schema or a scripted model's rules file (it
    // costs a run more CPU to load than everything else before the first request), no SDK (Anthropic,
    // MCP), no isolated-vm, no tiktoken: each loads when a run first needs it.
    expect(packages).toEqual([]);
    expect(files).toContain('src/runtime/rlm.ts');
    expect(files).toContain('src/runtime/providers/anthropic.ts');
    // Token counting only (with the hash of its memo; its tokenizer, tiktoken, loads on the first count)
    // and the rules of document ids, by which the document list shows a file stored in parts as one.
    expect(under(files, 'memory/').sort()).toEqual([
      'memory/fnv.ts',
      'memory/graph-rules.ts',
      'memory/ingest/tokens.ts',
      'memory/own-string.ts',
    ]);
    // The document list the prompt shows (plain data: no isolate, no native addon).
    expect(under(files, 'src/sandbox/').sort()).toEqual([
      'src/sandbox/documents.ts',
      'src/sandbox/limits.ts',
    ]);
    expect(under(files, 'src/mcp/')).toEqual([]);
    expect(under(files, 'src/cli/')).toEqual([]);
  });

  it('`rlm/memory` loads the chunk graph, not its tokenizer (first count), the runtime, sandbox or MCP server', () => {
    const { files, packages } = loads('memory/index.ts');
    expect(files).toContain('memory/files/store.ts');
    expect(files).toContain('memory/ingest/tokens.ts');
    // No package at all: tiktoken and vectra load on first use, and the store's files are checked
    // without a schema library (zod alone costs every store command ~80 ms to load).
    expect(packages).toEqual([]);
    // Below the runtime: only core/'s errors, environment, HTTP, path comparison (the ingest walk's
    // link fence), plural, process and binary search (the store files' tables) modules.
    expect(under(files, 'src/')).toEqual([]);
    expect(under(files, 'core/').sort()).toEqual([
      'core/env.ts',
      'core/errors.ts',
      'core/http-post.ts',
      'core/http-request.ts',
      'core/http-retry.ts',
      'core/last-at-most.ts',
      'core/paths.ts',
      'core/plural.ts',
      'core/process.ts',
    ]);
  });

  it('`rlm/sandbox` loads acorn, not isolated-vm (isolate processes load it), the stores, providers or MCP server', () => {
    const { files, packages } = loads('src/sandbox/index.ts');
    expect(packages).toContain('acorn');
    expect(packages).not.toContain('isolated-vm');
    expect(packages).not.toContain('tiktoken');
    expect(packages).not.toContain('@modelcontextprotocol/sdk');
    expect(packages).not.toContain('@anthropic-ai/sdk');
    // The grep engine over the context, the reading of ids (over the ChunkReader interface) and the
    // rules ids follow are shared with the store; the store itself is not loaded.
    expect(under(files, 'memory/').sort()).toEqual([
      'memory/corrupt.ts',
      'memory/graph-rules.ts',
      'memory/grep/assemble.ts',
      'memory/grep/grep-scan.ts',
      'memory/grep/grep.ts',
      'memory/grep/seams.ts',
      'memory/own-string.ts',
      'memory/read.ts',
      'memory/types.ts',
    ]);
    expect(under(files, 'src/runtime/')).toEqual([]);
    expect(under(files, 'src/mcp/')).toEqual([]);
  });

  it('`rlm/mcp` loads the MCP SDK and the runtime, but leaves the sandbox and model SDKs for the first run', () => {
    const { files, packages } = loads('src/mcp/index.ts');
    expect(packages).toContain('@modelcontextprotocol/sdk');
    expect(packages).not.toContain('isolated-vm');
    expect(packages).not.toContain('@anthropic-ai/sdk');
    expect(files).toContain('src/mcp/server.ts');
    // The document list the prompt shows and the default limits (no isolate, no native addon).
    expect(under(files, 'src/sandbox/').sort()).toEqual([
      'src/sandbox/documents.ts',
      'src/sandbox/limits.ts',
    ]);
  });

  it('package.json exports exactly these entry points, each with its types', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string } | string>;
    };
    expect(pkg.exports).toEqual({
      '.': { types: './dist/src/index.d.ts', default: './dist/src/index.js' },
      './memory': { types: './dist/memory/index.d.ts', default: './dist/memory/index.js' },
      './sandbox': { types: './dist/src/sandbox/index.d.ts', default: './dist/src/sandbox/index.js' },
      './mcp': { types: './dist/src/mcp/index.d.ts', default: './dist/src/mcp/index.js' },
      './package.json': './package.json',
    });
  });
});
