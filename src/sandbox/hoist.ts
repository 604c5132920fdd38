/**
 * Finds the declarations of a block that must outlive it: everything a REPL keeps between inputs.
 * Top-level `let`/`const`/`class`/`function` and every `var` outside a function (`var` is
 * function-scoped, so one inside an `if` or a `for` head also belongs to the block's top level).
 */
import type {
  AnyNode,
  ClassDeclaration,
  FunctionDeclaration,
  Identifier,
  Pattern,
  Program,
  VariableDeclaration,
} from 'acorn';

/**
 * Where a declaration sits, which decides how it can be rewritten into an assignment:
 * `list` — in a statement list (program, block, switch case), where an extra `;` is harmless;
 * `single` — the lone body of an `if`/loop/label, where it is not;
 * `for-init` / `for-left` — the head of a `for` / `for-in`/`for-of` loop.
 */
export type DeclarationSite = 'list' | 'single' | 'for-init' | 'for-left';

interface HoistedDeclaration {
  node: VariableDeclaration;
  site: DeclarationSite;
}

export interface Hoisted {
  /** Variable declarations to turn into assignments (top-level of any kind, nested `var`). */
  variables: HoistedDeclaration[];
  /** Top-level function declarations (kept, then exported to the global object). */
  functions: FunctionDeclaration[];
  /** Top-level class declarations (turned into assignments of class expressions). */
  classes: ClassDeclaration[];
  /** Every name the block declares at its top level, in first-seen order. */
  names: string[];
  /** The binding identifiers behind `names`, every occurrence (for error positions). */
  identifiers: Identifier[];
}

/** Adds the identifiers bound by `pattern` to `out`. */
function boundIdentifiers(pattern: Pattern | AnyNode, out: Identifier[]): void {
  switch (pattern.type) {
    case 'Identifier':
      out.push(pattern);
      break;
    case 'ObjectPattern':
      for (const p of pattern.properties)
        boundIdentifiers(p.type === 'RestElement' ? p.argument : p.value, out);
      break;
    case 'ArrayPattern':
      for (const el of pattern.elements) if (el) boundIdentifiers(el, out);
      break;
    case 'RestElement':
      boundIdentifiers(pattern.argument, out);
      break;
    case 'AssignmentPattern':
      boundIdentifiers(pattern.left, out);
      break;
    default:
      break;
  }
}

/** Collects the block's persistent declarations without entering functions or classes. */
export function collectHoisted(program: Program): Hoisted {
  const out: Hoisted = { variables: [], functions: [], classes: [], names: [], identifiers: [] };
  const seen = new Set<string>();
  const addNames = (ids: Identifier[]) => {
    for (const id of ids) {
      out.identifiers.push(id);
      if (!seen.has(id.name)) {
        seen.add(id.name);
        out.names.push(id.name);
      }
    }
  };
  const addDecl = (node: VariableDeclaration, site: DeclarationSite) => {
    out.variables.push({ node, site });
    const ids: Identifier[] = [];
    for (const d of node.declarations) boundIdentifiers(d.id, ids);
    addNames(ids);
  };
  /** `using` declarations keep their block scope and disposal semantics: they are left alone. */
  const persistent = (node: VariableDeclaration) =>
    node.kind === 'var' || node.kind === 'let' || node.kind === 'const';

  const visit = (stmt: AnyNode, site: 'list' | 'single'): void => {
    switch (stmt.type) {
      case 'VariableDeclaration':
        if (stmt.kind === 'var') addDecl(stmt, site);
        break;
      case 'BlockStatement':
      case 'StaticBlock':
        if (stmt.type === 'BlockStatement') for (const s of stmt.body) visit(s, 'list');
        break;
      case 'IfStatement':
        visit(stmt.consequent, 'single');
        if (stmt.alternate) visit(stmt.alternate, 'single');
        break;
      case 'ForStatement':
        if (stmt.init?.type === 'VariableDeclaration' && stmt.init.kind === 'var')
          addDecl(stmt.init, 'for-init');
        visit(stmt.body, 'single');
        break;
      case 'ForInStatement':
      case 'ForOfStatement':
        if (stmt.left.type === 'VariableDeclaration' && stmt.left.kind === 'var')
          addDecl(stmt.left, 'for-left');
        visit(stmt.body, 'single');
        break;
      case 'WhileStatement':
      case 'DoWhileStatement':
      case 'LabeledStatement':
        visit(stmt.body, 'single');
        break;
      case 'SwitchStatement':
        for (const c of stmt.cases) for (const s of c.consequent) visit(s, 'list');
        break;
      case 'TryStatement':
        visit(stmt.block, 'list');
        if (stmt.handler) visit(stmt.handler.body, 'list');
        if (stmt.finalizer) visit(stmt.finalizer, 'list');
        break;
      default:
        break;
    }
  };

  for (const stmt of program.body) {
    if (stmt.type === 'VariableDeclaration') {
      if (persistent(stmt)) addDecl(stmt, 'list');
    } else if (stmt.type === 'FunctionDeclaration') {
      out.functions.push(stmt);
      addNames([stmt.id]);
    } else if (stmt.type === 'ClassDeclaration') {
      out.classes.push(stmt);
      addNames([stmt.id]);
    } else {
      visit(stmt, 'list');
    }
  }
  return out;
}
