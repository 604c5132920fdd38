import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';

/**
 * The module specifiers a TypeScript file imports: static imports, re-exports and `import('literal')`.
 * Parsed, not pattern-matched, so examples in comments and code in template strings do not count.
 */
export function importSpecifiers(file: string): string[] {
  const js = stripTypeScriptTypes(readFileSync(file, 'utf8'));
  const ast = acorn.parse(js, { ecmaVersion: 'latest', sourceType: 'module' });
  const specs: string[] = [];
  const add = (node: acorn.Node | null | undefined) => {
    if (node?.type === 'Literal' && typeof (node as acorn.Literal).value === 'string')
      specs.push((node as acorn.Literal).value as string);
  };
  walk.simple(ast, {
    ImportDeclaration: (n) => add(n.source),
    ExportNamedDeclaration: (n) => add(n.source),
    ExportAllDeclaration: (n) => add(n.source),
    ImportExpression: (n) => add(n.source),
  });
  return specs;
}

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`); undefined for relative and `node:` ones. */
export function packageOf(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}
