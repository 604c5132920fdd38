/**
 * Flags shared by the memory commands: `--now`, and the settings flags that are saved in the store's
 * config when given (decay rate, importance multipliers, prune threshold, consolidation).
 */

import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseDecimal } from '../../../core/decimal.ts';
import { RlmError } from '../../../core/errors.ts';
import { DEFAULT_MEMORY_SETTINGS, mergeSettings, parseWhen } from '../../../memory/memories/memory-model.ts';
import type { Store } from '../../../memory/store-api.ts';
import { MEMORY_IMPORTANCE, type MemoryImportance, type MemorySettings } from '../../../memory/types.ts';
import { parseModelSpec } from '../../runtime/providers/specs.ts';
import { tagsFlag } from '../args.ts';
import type { CliIO } from '../io.ts';

export const SETTINGS_OPTIONS = {
  'decay-rate': { type: 'string' },
  multipliers: { type: 'string' },
  'prune-threshold': { type: 'string' },
  'consolidate-threshold': { type: 'string' },
  'auto-consolidate': { type: 'string' },
} as const;

export const SETTINGS_HELP = `Settings (saved in the store when given; defaults in brackets):
  --decay-rate R               weight kept per day without access [0.95]
  --multipliers LIST           days count this many times per importance
                               [critical=0,high=0.5,medium=1,low=2]
  --prune-threshold T          under this weight a memory is archived [0.1]
  --consolidate-threshold N    active memories in a topic before automatic consolidation [10]
  --auto-consolidate SPEC|off  model for automatic consolidation after remember [off]
`;

type Flags = Partial<Record<keyof typeof SETTINGS_OPTIONS, string>>;

function num(value: string, flag: string): number {
  const n = parseDecimal(value, true);
  if (!Number.isFinite(n)) throw new RlmError('BAD_INPUT', `--${flag} must be a number, got '${value}'`);
  return n;
}

/**
 * The settings the flags ask for, checked now: a bad value is a usage error before the store is touched.
 * `cwd` is the folder a model file named in --auto-consolidate is relative to.
 */
export function settingsPatch(values: Flags, cwd: string): Partial<MemorySettings> {
  const patch = flagsPatch(values, cwd);
  mergeSettings(DEFAULT_MEMORY_SETTINGS, patch);
  return patch;
}

/**
 * The model spec --auto-consolidate saves: its scheme checked now (a bad one would fail every later
 * remember), and a model file (scripted, replay, relay) made absolute and checked to exist, since the
 * store is used from other folders and by the MCP server.
 */
function savedModelSpec(value: string, cwd: string): string {
  const spec = parseModelSpec(value);
  if (spec.provider !== 'scripted' && spec.provider !== 'replay' && spec.provider !== 'relay')
    return value.trim();
  const file = path.resolve(cwd, spec.model!);
  if (!existsSync(file))
    throw new RlmError('BAD_INPUT', `--auto-consolidate ${value}: ${file} does not exist`, { path: file });
  return `${spec.provider}:${file}`;
}

function flagsPatch(values: Flags, cwd: string): Partial<MemorySettings> {
  const patch: Partial<MemorySettings> = {};
  if (values['decay-rate'] !== undefined) patch.decayRate = num(values['decay-rate'], 'decay-rate');
  if (values['prune-threshold'] !== undefined)
    patch.pruneThreshold = num(values['prune-threshold'], 'prune-threshold');
  if (values['consolidate-threshold'] !== undefined)
    patch.consolidateThreshold = num(values['consolidate-threshold'], 'consolidate-threshold');
  if (values['auto-consolidate'] !== undefined)
    patch.autoConsolidate =
      values['auto-consolidate'] === 'off' ? null : savedModelSpec(values['auto-consolidate'], cwd);
  if (values.multipliers !== undefined) {
    const multipliers: Partial<Record<MemoryImportance, number>> = {};
    for (const part of values.multipliers.split(',')) {
      const [name, value] = part.split('=').map((s) => s.trim());
      if (!name || value === undefined || !(MEMORY_IMPORTANCE as readonly string[]).includes(name))
        throw new RlmError(
          'BAD_INPUT',
          `--multipliers takes IMPORTANCE=N pairs (e.g. low=3,high=0.2), got '${part}'`,
        );
      multipliers[name as MemoryImportance] = num(value, 'multipliers');
    }
    patch.multipliers = multipliers as MemorySettings['multipliers'];
  }
  return patch;
}

/** Saves the settings flags in the store when any is given. */
export async function applySettings(store: Store, patch: Partial<MemorySettings>, io: CliIO): Promise<void> {
  if (Object.keys(patch).length === 0) return;
  const s = await store.configureMemory(patch);
  io.stderr.write(
    `rlm: memory settings: decay ${s.decayRate}/day, prune under ${s.pruneThreshold}, consolidate over ${s.consolidateThreshold}` +
      ` (auto ${s.autoConsolidate ?? 'off'})\n`,
  );
}

/** `--now D` (default: the real time). */
export function nowFlag(value: string | undefined): Date {
  return value === undefined ? new Date() : parseWhen(value, '--now');
}

/** `--tags a,b`: comma-separated tags, each trimmed; an empty one is BAD_INPUT. */
export function tagsListFlag(value: string | undefined): string[] | undefined {
  return tagsFlag(
    value?.split(',').map((s) => s.trim()),
    '--tags',
  );
}
