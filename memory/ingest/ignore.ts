/**
 * `.gitignore`-style patterns, for `.gitignore` and `.rlmignore` files found while scanning folders and
 * for `--exclude`. Supported: comments, `!` negation (the last matching pattern wins), a trailing `/`
 * for folders only, a leading or inner `/` anchoring to the file's folder, `*`, `?`, `[...]` and `**`.
 */
import path from 'node:path';

/** One compiled pattern. */
export interface IgnoreRule {
  regex: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

/** Patterns that apply below `base` (the folder of the ignore file, or a scanned root). */
export interface IgnoreSet {
  base: string;
  rules: IgnoreRule[];
}

/** Compiles the lines of an ignore file; blank lines and `#` comments are skipped. */
export function parseIgnore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const rule = compilePattern(raw);
    if (rule) rules.push(rule);
  }
  return rules;
}

/** One pattern, or null for a blank line or a comment. */
export function compilePattern(raw: string): IgnoreRule | null {
  let p = raw.replace(/(?<!\\)\s+$/, '');
  if (p === '' || p.startsWith('#')) return null;
  let negate = false;
  if (p.startsWith('!')) {
    negate = true;
    p = p.slice(1);
  } else if (p.startsWith('\\!') || p.startsWith('\\#')) {
    p = p.slice(1);
  }
  let dirOnly = false;
  if (p.endsWith('/')) {
    dirOnly = true;
    p = p.replace(/\/+$/, '');
  }
  if (p === '') return null;
  // A slash at the start or inside anchors the pattern to its folder; otherwise it matches at any depth.
  const anchored = p.includes('/');
  if (p.startsWith('/')) p = p.slice(1);
  const body = globToRegex(p);
  const regex = new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`);
  return { regex, negate, dirOnly };
}

function globToRegex(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const before = i === 0 || glob[i - 1] === '/';
        const after = i + 2 === glob.length || glob[i + 2] === '/';
        if (before && after) {
          // `**/` any leading folders; `/**` everything inside; `a/**/b` zero or more folders.
          if (i + 2 === glob.length) out += '.*';
          else {
            out += '(?:.*/)?';
            i++; // the slash
          }
          i += 2;
          continue;
        }
      }
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) out += '\\[';
      else {
        let set = glob.slice(i + 1, close);
        if (set.startsWith('!')) set = `^${set.slice(1)}`;
        out += `[${set.replace(/\\/g, '\\\\')}]`;
        i = close;
      }
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1]!);
      i++;
    } else {
      out += escapeRegex(c);
    }
    i++;
  }
  return out;
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/**
 * Whether `file` is ignored by the sets in force (outermost first; a later match wins over an earlier
 * one, so a folder's own ignore file can re-include what an outer one left out).
 */
export function isIgnored(sets: readonly IgnoreSet[], file: string, isDir: boolean): boolean {
  let ignored = false;
  for (const set of sets) {
    const rel = path.relative(set.base, file).split(path.sep).join('/');
    if (rel === '' || rel.startsWith('..')) continue;
    for (const rule of set.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(rel)) ignored = !rule.negate;
    }
  }
  return ignored;
}
