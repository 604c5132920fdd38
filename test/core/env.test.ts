/**
 * The environment is read in one module (core/env.ts): its values, that no other source file reads a
 * variable, and that README's environment table is the module's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';
import { describe, expect, it } from 'vitest';
import { envTable, LIMIT_VARIABLES, readEnv, variableNames } from '../../core/env.ts';
import { LIMIT_NAMES } from '../../src/runtime/option-schema.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('readEnv', () => {
  it('trims values, takes a blank variable for an unset one, and applies the defaults', () => {
    const env = readEnv({
      RLM_MODEL: ' anthropic:m ',
      RLM_SUB_MODEL: '   ',
      RLM_MODELS: 'openai:a, ,openai:b ',
      RLM_MAX_DEPTH: '3',
      RLM_MAX_COST_USD: '',
      HOME: '/home/u',
      NO_COLOR: '',
      RLM_DEBUG: '1',
      OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1',
    });
    expect(env.model).toBe('anthropic:m');
    expect(env.subModel).toBeUndefined();
    expect(env.models).toEqual(['openai:a', 'openai:b']);
    expect(env.limits).toEqual({ maxDepth: '3' });
    expect(env.home).toBe('/home/u');
    expect(env.claudeConfigDir).toBe(path.join('/home/u', '.claude'));
    expect(env.color).toBe(true);
    expect(env.debug).toBe(true);
    expect(env.openai).toEqual({ apiKey: undefined, baseUrl: 'http://127.0.0.1:8080/v1' });
    expect(env.path).toBe('');

    const empty = readEnv({});
    expect(empty.home).toBe(homedir());
    expect(empty.models).toEqual([]);
    expect(empty.debug).toBe(false);
    expect(readEnv({ NO_COLOR: '1', CLAUDE_CONFIG_DIR: '/c' })).toMatchObject({
      color: false,
      claudeConfigDir: '/c',
    });
  });

  it('names a variable only for limits the options have', () => {
    for (const option of Object.keys(LIMIT_VARIABLES)) expect(LIMIT_NAMES).toContain(option);
  });
});

/** Every source file rlm ships or runs: the library, the CLI, the benchmarks, the bin and the build. */
function sourceFiles(): string[] {
  const files = ['bin/rlm.js', 'build.mjs'];
  for (const dir of ['core', 'memory', 'src', 'benchmarks']) {
    for (const f of readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (/\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts'))
        files.push(path.join(dir, f).split(path.sep).join('/'));
    }
  }
  return files;
}

/**
 * Where `file` reads the environment: `process.env`, `env` imported from node:process, a variable rlm
 * reads by its name (`x.RLM_STORE`, `x['HOME']`), or any variable by a computed name (`env[name]`).
 * Parsed, so comments and strings (an error message naming RLM_MODEL) do not count.
 */
function environmentReads(file: string, text: string, names: ReadonlySet<string>): string[] {
  const js = file.endsWith('.ts') ? stripTypeScriptTypes(text) : text.replace(/^#!.*/, '');
  const ast = acorn.parse(js, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const found: string[] = [];
  const at = (n: acorn.Node, what: string) => found.push(`${file}:${n.loc?.start.line}: ${what}`);
  const keyOf = (m: acorn.MemberExpression): string | undefined => {
    if (!m.computed && m.property.type === 'Identifier') return m.property.name;
    if (m.property.type === 'Literal' && typeof m.property.value === 'string') return m.property.value;
    return undefined;
  };
  const endsInEnv = (n: acorn.Node): boolean =>
    (n.type === 'Identifier' && /env$/i.test((n as acorn.Identifier).name)) ||
    (n.type === 'MemberExpression' &&
      keyOf(n as acorn.MemberExpression)
        ?.toLowerCase()
        .endsWith('env') === true);
  // `process.env.X` is reported once, as process.env.
  const onProcess = (n: acorn.Node): boolean =>
    n.type === 'MemberExpression' &&
    (n as acorn.MemberExpression).object.type === 'Identifier' &&
    ((n as acorn.MemberExpression).object as acorn.Identifier).name === 'process';
  // Setting a variable in an environment built for a child process is no read.
  const written = new Set<acorn.Node>();
  walk.simple(ast, {
    AssignmentExpression(a) {
      written.add(a.left);
    },
  });
  walk.simple(ast, {
    MemberExpression(m) {
      if (written.has(m)) return;
      const key = keyOf(m);
      if (m.object.type === 'Identifier' && m.object.name === 'process' && key === 'env')
        at(m, 'process.env');
      else if (key !== undefined && names.has(key)) at(m, key);
      else if (key === undefined && endsInEnv(m.object)) at(m, 'a variable by a computed name');
      // A variable rlm does not list yet, read from an environment by its name (`io.env.RLM_X`).
      else if (
        key !== undefined &&
        /^[A-Z][A-Z0-9_]*$/.test(key) &&
        endsInEnv(m.object) &&
        !onProcess(m.object)
      )
        at(m, key);
    },
    ImportDeclaration(d) {
      const from = d.source.value;
      if ((from === 'process' || from === 'node:process') && d.specifiers.some((s) => s.local.name === 'env'))
        at(d, `env from ${String(from)}`);
    },
  });
  return found;
}

describe('the environment is read in one place', () => {
  it('no source file but core/env.ts reads a variable', () => {
    const names = new Set(variableNames());
    const files = sourceFiles().filter((f) => f !== 'core/env.ts');
    expect(files.length).toBeGreaterThan(100);
    const reads = files.flatMap((f) => environmentReads(f, readFileSync(path.join(ROOT, f), 'utf8'), names));
    expect(reads).toEqual([]);
  });

  it('would see each kind of read, and not a name in a comment or a message', () => {
    const names = new Set(['RLM_STORE']);
    const reads = `
      import { env as e } from 'node:process';
      import { env } from 'node:process';
      const a: string | undefined = process.env.X;
      const b = io.env.RLM_STORE;
      const c = source['RLM_STORE'];
      const d = (name: string) => opts.env[name];
      const f = io.env.RLM_NOT_LISTED;
    `;
    expect(environmentReads('reads.ts', reads, names).map((r) => r.replace(/^reads\.ts:\d+: /, ''))).toEqual([
      'env from node:process',
      'process.env',
      'RLM_STORE',
      'RLM_STORE',
      'a variable by a computed name',
      'RLM_NOT_LISTED',
    ]);
    const clean = `
      // process.env.RLM_STORE is read in core/env.ts
      throw new Error('set RLM_STORE or pass --store');
      const child = { ...base, LC_ALL: 'C' };
      childEnv.CLAUDE_CODE_MAX_OUTPUT_TOKENS = '100';
      const row = rows[i];
    `;
    expect(environmentReads('clean.ts', clean, names)).toEqual([]);
  });

  it("README's environment table is the module's", () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('| variable | meaning |');
    expect(start).toBeGreaterThan(0);
    const table = readme.slice(start).split('\n\n')[0];
    expect(table).toBe(envTable());
  });
});
