/**
 * What `npm publish` ships: the build (tsconfig.build.json) compiles the library, the CLI and the `rlm bench`
 * command with the suites it runs, and nothing else, then bundles the sandbox prelude into one script.
 * Micro-benchmarks and other benchmark-only modules stay out of `dist/`, and no shipped module imports a
 * devDependency (it would be missing in an install).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importSpecifiers, packageOf } from './helpers/imports.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** The project's files the build compiles, relative to the root (tsc follows imports, dynamic ones too). */
function builtFiles(): string[] {
  const out = execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--listFilesOnly'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return out
    .split('\n')
    .map((f) => f.trim())
    .filter((f) => f !== '' && !f.includes('/node_modules/'))
    .map((f) => path.relative(ROOT, f));
}

/** Bare package names a source file imports. */
function importedPackages(file: string): string[] {
  const names = importSpecifiers(path.join(ROOT, file)).map(packageOf);
  return [...new Set(names.filter((n) => n !== undefined))];
}

describe('the published package', () => {
  const files = builtFiles();

  it('ships the library, the CLI and the benchmark suites behind `rlm bench`', () => {
    expect(files).toContain('src/index.ts');
    expect(files).toContain('src/cli/main.ts');
    expect(files).toContain('benchmarks/cli.ts');
    expect(files).toContain('benchmarks/harness.ts');
  });

  it('leaves micro-benchmarks and the benchmark runner out', () => {
    const micro = [
      'benchmarks/run.ts',
      'benchmarks/memory-search.ts',
      'benchmarks/store-scale.ts',
      'benchmarks/memory-grep.ts',
      'benchmarks/memory-text.ts',
      'benchmarks/sandbox.ts',
      'benchmarks/loop.ts',
    ];
    expect(files.filter((f) => micro.includes(f))).toEqual([]);
    expect(files.filter((f) => f.startsWith('test/') || f.endsWith('.test.ts'))).toEqual([]);
  });

  it('ships the sandbox prelude as its loader and the one script build.mjs bundles, not as modules', () => {
    // The in-isolate modules reach dist/ only inside rlm-prelude.js (build-prelude.ts, run by build.mjs).
    expect(files.filter((f) => f.startsWith('src/sandbox/prelude/')).sort()).toEqual([
      'src/sandbox/prelude/config.ts',
      'src/sandbox/prelude/index.ts',
    ]);
    expect(files).not.toContain('build-prelude.ts');
    expect(readFileSync(path.join(ROOT, 'build.mjs'), 'utf8')).toMatch(/await writePrelude\(/);
  });

  it('imports only runtime dependencies, optional peers and Node built-ins', () => {
    const allowed = new Set([
      ...Object.keys(pkg.dependencies),
      ...Object.keys(pkg.peerDependencies ?? {}),
      ...builtinModules,
    ]);
    const bad = files.flatMap((f) =>
      importedPackages(f)
        .filter((p) => !allowed.has(p))
        .map((p) => `${f} → ${p}`),
    );
    expect(bad).toEqual([]);
    // Peers are optional (vectra, for vectors): a plain install must not need them.
    for (const peer of Object.keys(pkg.peerDependencies ?? {}))
      expect(pkg.peerDependenciesMeta?.[peer]?.optional, peer).toBe(true);
    // The check itself sees devDependencies: the micro-benchmark does import one.
    expect(importedPackages('benchmarks/memory-search.ts')).toContain('minisearch');
  });

  it('has the types of every package it imports in an install: its own, or @types/ among the dependencies', () => {
    // The published declaration files import these packages' types; a consumer compiling without skipLibCheck
    // needs them, and an install has no devDependencies.
    const untyped = [...new Set(files.flatMap((f) => importedPackages(f)))].filter((name) => {
      if (builtinModules.includes(name) || name.startsWith('node:')) return false;
      const dir = path.join(ROOT, 'node_modules', name);
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      const ownTypes = manifest.types ?? manifest.typings ?? manifest.exports;
      if (ownTypes !== undefined && JSON.stringify(ownTypes).includes('.d.')) return false;
      if (existsSync(path.join(dir, 'index.d.ts'))) return false;
      return pkg.dependencies[`@types/${name.replace('@', '').replace('/', '__')}`] === undefined;
    });
    expect(untyped).toEqual([]);
  });

  it('has src/ reach into benchmarks/ only through the lazy `rlm bench` entry of the command registry', () => {
    const reaching = files.filter(
      (f) =>
        f.startsWith('src/') && /['"](?:\.\.\/)+benchmarks\//.test(readFileSync(path.join(ROOT, f), 'utf8')),
    );
    expect(reaching).toEqual(['src/cli/main.ts']);
    expect(readFileSync(path.join(ROOT, 'src/cli/main.ts'), 'utf8')).toMatch(
      /load: async \(\) => \(await import\('\.\.\/\.\.\/benchmarks\/cli\.ts'\)\)\.default/,
    );
  });
});
