/**
 * The plugin's manifests, checked by the real Claude Code CLI (`claude plugin validate --strict`). `.ci/run`
 * installs the CLI from npm into a temporary prefix and names it in RLM_CLAUDE_CLI (its binary ships in
 * the package and runs offline); elsewhere `claude` on PATH is used. Without either, these tests skip
 * with one message, except where RLM_REQUIRE_CLAUDE_CLI=1 (CI as root), where a missing CLI fails them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ROOT_VAR } from './helpers.ts';

function claudeCli(): string | undefined {
  const named = process.env.RLM_CLAUDE_CLI;
  if (named) return named;
  const r = spawnSync('sh', ['-c', 'command -v claude'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined;
}

const cli = claudeCli();
const required = process.env.RLM_REQUIRE_CLAUDE_CLI === '1';
if (cli === undefined && !required) {
  console.warn(
    'plugin manifests: SKIPPED the `claude plugin validate` tests: no Claude Code CLI (npm i -g --prefix DIR ' +
      '@anthropic-ai/claude-code, then RLM_CLAUDE_CLI=DIR/bin/claude; .ci/run does)',
  );
}

interface Report {
  success: boolean;
  strict: boolean;
  manifest: { type: string; errors: unknown[]; warnings: unknown[] };
  provides: {
    hooks: { event: string; command: string }[];
    mcpServers: { name: string; type: string; target: string; args: string[] }[];
    skills: string[];
  };
}

describe.skipIf(cli === undefined && !required)('claude plugin validate --strict', () => {
  // The CLI keeps state under HOME: give it an empty one (made here, not when the suite is collected,
  // which happens even when it is skipped).
  let home = '';
  beforeAll(() => {
    home = mkdtempSync(path.join(tmpdir(), 'rlm-claude-validate-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  const validate = (target: string): Report => {
    if (cli === undefined) throw new Error('RLM_REQUIRE_CLAUDE_CLI=1 but no Claude Code CLI was found');
    const r = spawnSync(cli, ['plugin', 'validate', '--strict', '--json', target], {
      cwd: ROOT,
      env: { ...process.env, HOME: home },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.error).toBeUndefined();
    const report = JSON.parse(r.stdout) as Report;
    expect([r.status, report.manifest.errors, report.manifest.warnings]).toEqual([0, [], []]);
    return report;
  };

  it('accepts the repository as a marketplace and what its plugin provides', () => {
    const report = validate(ROOT);
    expect(report).toMatchObject({ success: true, strict: true, manifest: { type: 'marketplace' } });
    const market = JSON.parse(readFileSync(path.join(ROOT, '.claude-plugin', 'marketplace.json'), 'utf8'));
    expect(market.plugins).toEqual([expect.objectContaining({ name: 'rlm', source: './' })]);
    const launcher = `sh "${ROOT_VAR}/plugin/launch.sh"`;
    expect(report.provides.hooks).toEqual([
      { event: 'SessionStart', type: 'command', command: `${launcher} claude context --hook` },
      { event: 'SessionEnd', type: 'command', command: `${launcher} claude ingest --hook` },
      { event: 'PreCompact', type: 'command', command: `${launcher} claude ingest --hook` },
    ]);
    expect(report.provides.mcpServers).toEqual([
      { name: 'rlm', type: 'stdio', target: 'sh', args: [`${ROOT_VAR}/plugin/launch.sh`, 'serve'] },
    ]);
    expect(report.provides.skills).toEqual(['rlm:answer', 'rlm:memory', 'rlm:status']);
  });

  it('accepts the plugin manifest on its own', () => {
    const report = validate(path.join(ROOT, '.claude-plugin', 'plugin.json'));
    expect(report.manifest.type).toBe('plugin');
    const plugin = JSON.parse(readFileSync(path.join(ROOT, '.claude-plugin', 'plugin.json'), 'utf8'));
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    // One version for the package and the plugin: a new version is a new plugin copy with a new install.
    expect(plugin.version).toBe(pkg.version);
  });
});
