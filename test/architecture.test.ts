/**
 * The module graph ARCHITECTURE.md describes: dependencies point down, never in a circle. Type-only imports
 * count too: a circle of types is still two files that cannot be read one without the other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCE_DIRS = ['core', 'memory', 'src'];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f).split(path.sep).join('/'));
}

// An import or re-export statement at the start of a line (so JSDoc examples, which start with ` * `, are
// not read as imports), with `import type` and multi-line specifier lists.
const IMPORT = /^(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'|^import\s+'([^']+)'|\bimport\('([^']+)'\)/gms;

/** Project files each source file imports (resolved, repo-relative). */
function importGraph(): Map<string, string[]> {
  const files = SOURCE_DIRS.flatMap(sourceFiles);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const deps: string[] = [];
    for (const m of readFileSync(path.join(ROOT, file), 'utf8').matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3] ?? '';
      if (!spec.startsWith('.')) continue;
      deps.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
    }
    graph.set(file, deps);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Imports from files under `from` into files under `to`. */
function edges(graph: Map<string, string[]>, from: string, to: string): string[] {
  return [...graph].flatMap(([file, deps]) =>
    file.startsWith(from) ? deps.filter((d) => d.startsWith(to)).map((d) => `${file} → ${d}`) : [],
  );
}

describe('module graph', () => {
  const graph = importGraph();

  it('reads the imports it checks (the parser sees type-only and multi-line imports)', () => {
    expect(graph.get('memory/files/lock.ts')).toContain('memory/engine/persistence.ts');
    expect(graph.get('src/runtime/trajectory.ts')).toContain('src/runtime/result.ts');
    expect(graph.size).toBeGreaterThan(150);
  });

  it('has no import circle, type-only imports included', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('keeps every layer below the ones that use it', () => {
    // core/ is below everything; memory/ knows nothing of the runtime, sandbox or servers.
    expect(edges(graph, 'core/', 'memory/')).toEqual([]);
    expect(edges(graph, 'core/', 'src/')).toEqual([]);
    expect(edges(graph, 'memory/', 'src/')).toEqual([]);
    // Within memory/: the shared parts know no backend and no engine; the engine knows no backend.
    const shared = [
      'memory/ingest/',
      'memory/search/',
      'memory/grep/',
      'memory/memories/',
      'memory/graph-rules.ts',
      'memory/store-api.ts',
    ];
    const backends = ['memory/files/', 'memory/in-memory/', 'memory/postgres/'];
    for (const low of shared) {
      for (const upper of ['memory/engine/', ...backends]) expect(edges(graph, low, upper)).toEqual([]);
    }
    // The engine knows no backend; no backend knows another; PostgreSQL does not use the segment engine.
    for (const backend of backends) expect(edges(graph, 'memory/engine/', backend)).toEqual([]);
    for (const a of backends) for (const b of backends) if (a !== b) expect(edges(graph, a, b)).toEqual([]);
    expect(edges(graph, 'memory/postgres/', 'memory/engine/')).toEqual([]);
  });
});
