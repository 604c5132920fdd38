/**
 * Every file the docs and the comments name exists: a `.ts`, `.js`, `.mjs` or `.md` path in a Markdown
 * file, or in a comment of a source or test file, is a file of the repository. A bare name (`options.ts`)
 * may be any file of that name, a relative one (`../advice.ts`) is taken from the file that says it, and
 * `*` matches within a folder. The few names that stand for the reader's own files, a command's output or
 * a build product are listed below with the reason. The Markdown files a shipped module's comments name
 * ship with it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import * as acorn from 'acorn';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Names that are not files of the repository, and why they may be named. */
const NOT_REPOSITORY_FILES: Record<string, string> = {
  'Node.js': 'the runtime',
  'CHANGELOG.md': "a reader's file in an example command",
  './docs/old.md': "a reader's file in an example command",
  './docs/limits.md': "a reader's file in an example",
  '/rlm/bin/rlm.js': 'the tail of `"$(npm root -g)/rlm/bin/rlm.js"`, a global install in an example',
  '/absolute/path/to/rlm/bin/rlm.js': 'a placeholder for where the reader cloned rlm',
  'notes.md': "a reader's file in an example",
  'blocks.js': 'written by the example command before it',
  'app.js': "the reader's own program in an example command",
  'DIR/NNN.request.md': 'written by relay: models',
  'DIR/NNN.reply.md': 'written for relay: models',
  '/tmp/relay/NNN.request.md': 'written by a relay: model in an example',
  '/tmp/relay/NNN.reply.md': 'written for a relay: model in an example',
  'report.md': 'written by rlm bench into --out',
  'rlm-prelude.js': 'the prelude bundle build-prelude.ts writes',
  'a.md': 'made by the test that names it',
  'draft.md': 'made by the test that names it',
  'node_modules/x/i.js': 'made by the test that names it',
};

/** Folders whose files are data, not prose or code: generated snapshots, test fixtures. */
const DATA = ['test/fixtures/', 'test/prompts/__snapshots__/'];

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f !== '');

/** The comments of a source file, parsed (so strings and code that look like paths do not count). */
function comments(file: string): string {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const js = file.endsWith('.ts') ? stripTypeScriptTypes(text) : text.replace(/^#!.*/, '');
  const found: string[] = [];
  acorn.parse(js, {
    ecmaVersion: 'latest',
    sourceType: 'module',
    onComment: (_block, comment) => {
      found.push(comment);
    },
  });
  return found.join('\n');
}

/** What `file` says in prose: a Markdown file whole, a source file's comments. */
function prose(file: string): string | undefined {
  if (DATA.some((d) => file.startsWith(d))) return undefined;
  if (file.endsWith('.md')) return readFileSync(path.join(ROOT, file), 'utf8');
  if (/\.(ts|js|mjs)$/.test(file) && !file.endsWith('.d.ts')) return comments(file);
  return undefined;
}

// A path: folders, then a name ending in one of the extensions; not part of a URL, a scoped package or a
// longer word (`trace.jsonl`). An absolute path is caught whole, to be reported.
const PATH = /(?<![\w@.*~$/-])\/?(?:[\w.*-]+\/)*[\w*.-]*[\w*]\.(?:ts|js|mjs|md)(?![\w/-])/g;

function exists(name: string, from: string): boolean {
  const wanted = name.startsWith('.') ? path.posix.join(path.posix.dirname(from), name) : name;
  const escaped = wanted.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*');
  const re = new RegExp(`(^|/)${escaped}$`);
  return files.some((f) => re.test(f));
}

/** The paths `text` (said in `file`) names that are neither files of the repository nor listed above. */
function missing(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PATH)) {
    const name = m[0].replace(/^\*\*(?=\w)/, ''); // Markdown's bold, not a glob
    if (name in NOT_REPOSITORY_FILES) continue;
    // dist/ holds what the build makes of src/ (dist/src/cli/main.js from src/cli/main.ts).
    const built = /^dist\/(.*)\.js$/.exec(name);
    if (built && exists(`${built[1]}.ts`, file)) continue;
    if (name.startsWith('/') || !exists(name, file)) out.push(`${file}: ${name}`);
  }
  return out;
}

describe('the docs and comments', () => {
  it('name only files that exist', () => {
    const said = files.flatMap((f) => {
      const text = prose(f);
      return text === undefined ? [] : missing(f, text);
    });
    expect(files.length).toBeGreaterThan(300);
    expect(said).toEqual([]);
  });

  it('would see a missing file, a file of the wrong kind and a path outside the repository', () => {
    const text = [
      'See DESIGN.md, the checks in harden.js, and ../advice.ts.',
      'Globs match: test/memory/engine/memo*.test.ts, not test/memory/memories*.test.ts.',
      'The format: /work/shared/reference/sessions.md; https://example.com/x.md is a URL; src/cli/main.ts is here.',
    ].join('\n');
    expect(missing('src/sandbox/prelude/web.ts', text)).toEqual([
      'src/sandbox/prelude/web.ts: DESIGN.md',
      'src/sandbox/prelude/web.ts: harden.js',
      'src/sandbox/prelude/web.ts: test/memory/memories*.test.ts',
      'src/sandbox/prelude/web.ts: /work/shared/reference/sessions.md',
    ]);
  });

  it('ship the Markdown files that shipped modules name', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
    const shipped = (f: string) => pkg.files.some((p) => f === p || f.startsWith(`${p}/`));
    const named = files
      .filter((f) => /^(core|memory|src)\/.*\.ts$/.test(f) && !f.startsWith('src/sandbox/prelude/'))
      .flatMap((f) => [...comments(f).matchAll(PATH)].map((m) => m[0]))
      .filter((n) => n.endsWith('.md') && !(n in NOT_REPOSITORY_FILES));
    const resolved = [...new Set(named)].map((n) => files.find((f) => f === n || f.endsWith(`/${n}`)) ?? n);
    expect(resolved.length).toBeGreaterThan(1);
    expect(resolved.filter((f) => !shipped(f))).toEqual([]);
  });
});
