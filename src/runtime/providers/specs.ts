import { RlmError } from '../../../core/errors.ts';

/** The model spec forms, for usage errors and every `--model` help text (one list, so none falls behind). */
export const MODEL_SPECS =
  'anthropic:MODEL, openai:MODEL, claude-code[:MODEL], scripted:FILE, replay:TRACE.jsonl or relay:DIR';

type ProviderName = 'anthropic' | 'openai' | 'claude-code' | 'scripted' | 'replay' | 'relay';

export interface ParsedModelSpec {
  provider: ProviderName;
  /** Model name, the rules file for `scripted` or the trace for `replay`; undefined only for a bare `claude-code`. */
  model: string | undefined;
}

/**
 * Splits a spec into provider and model; BAD_INPUT for an unknown scheme or a missing model. Here, apart
 * from the providers, so a command can check a spec without loading them.
 */
export function parseModelSpec(spec: string): ParsedModelSpec {
  const trimmed = spec.trim();
  const colon = trimmed.indexOf(':');
  const scheme = colon < 0 ? trimmed : trimmed.slice(0, colon);
  const model = colon < 0 ? '' : trimmed.slice(colon + 1).trim();
  const unknown = () =>
    new RlmError('BAD_INPUT', `unknown model spec "${spec}" — use ${MODEL_SPECS}`, { spec });
  switch (scheme) {
    case 'claude-code':
      return { provider: 'claude-code', model: model || undefined };
    case 'anthropic':
    case 'openai':
    case 'scripted':
    case 'replay':
    case 'relay':
      if (!model) throw unknown();
      return { provider: scheme, model };
    default:
      throw unknown();
  }
}
