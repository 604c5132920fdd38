/**
 * How model code and the model's prompt name a configured model: its spec kind and name, never a host
 * path. Specs whose model part is a path (`scripted:/home/me/rules.json`, `replay:trace.jsonl`,
 * `relay:/tmp/relay`) are named by the file or folder name (`scripted:rules.json`); the others are
 * their spec (`anthropic:claude-haiku-4-5`). Sub-calls accept either.
 */

/** Spec kinds whose model part is a host path: a rules file, a recorded trace, a relay folder. */
const PATH_KINDS = new Set(['scripted', 'replay', 'relay']);

function split(spec: string): { kind: string; model: string } {
  const trimmed = spec.trim();
  const colon = trimmed.indexOf(':');
  return colon < 0
    ? { kind: trimmed, model: '' }
    : { kind: trimmed.slice(0, colon), model: trimmed.slice(colon + 1) };
}

/** The last segment of a path, either separator. */
function baseName(path: string): string {
  const parts = path
    .trim()
    .split(/[\\/]+/)
    .filter((p) => p !== '');
  return parts[parts.length - 1] ?? path.trim();
}

/** The name model code sees for `spec`. */
export function modelName(spec: string): string {
  const { kind, model } = split(spec);
  return PATH_KINDS.has(kind) && model !== '' ? `${kind}:${baseName(model)}` : spec.trim();
}

/** The host strings of `spec` and what model code sees instead: the spec itself, and its path. */
export function modelAliases(spec: string, name = modelName(spec)): Array<[string, string]> {
  const { kind, model } = split(spec);
  if (!PATH_KINDS.has(kind) || model === '') return [];
  const path = model.trim();
  return [
    [spec.trim(), name],
    [path, name.slice(kind.length + 1)],
  ];
}
