/** Scripted-model rule files for the MCP tests (format in CONTRACTS.md, "Model specs"). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptRule } from '../../../src/runtime/providers/scripted.ts';

/** Writes `rules` to `dir/name` and returns the `scripted:` spec for it. */
export function scripted(dir: string, name: string, rules: ScriptRule[]): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ rules }));
  return `scripted:${file}`;
}

/** A ```repl block, as a model would write it. */
export const repl = (code: string): string => `\`\`\`repl\n${code}\n\`\`\``;
