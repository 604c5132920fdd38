/**
 * Checks of parsed JSON against a shape, reporting the first wrong field as `path.to.field: message`.
 * Just what the store's own files need (manifest.ts): every command that opens a store runs these, and a
 * schema library costs more to load (~80 ms) than the whole check of a store's files takes.
 * Objects are loose: fields a shape does not name are allowed and kept, so an older rlm reads a file
 * a newer one added fields to.
 */

/** The first problem found: where (field names and array indexes) and what. */
export interface ShapeProblem {
  path: (string | number)[];
  message: string;
}

/** A check of one value; null when it fits. */
export type Shape = (value: unknown) => ShapeProblem | null;

const problem = (message: string): ShapeProblem => ({ path: [], message });

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const expected = (what: string, value: unknown) => problem(`expected ${what}, received ${kind(value)}`);

/** A string; `check` returns a message when the string itself is wrong. */
export function string(check?: (s: string) => string | null): Shape {
  return (v) => {
    if (typeof v !== 'string') return expected('string', v);
    const message = check?.(v);
    return message ? problem(message) : null;
  };
}

/** A finite number; with `opts.int` an integer, with `opts.min` at least that. */
export function number(opts: { int?: string; min?: [number, string] } = {}): Shape {
  return (v) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return expected('number', v);
    if (opts.int !== undefined && !Number.isInteger(v)) return problem(opts.int);
    if (opts.min !== undefined && v < opts.min[0]) return problem(opts.min[1]);
    return null;
  };
}

/** One of `values` exactly. */
export function oneOf(values: readonly unknown[], message: string): Shape {
  return (v) => (values.includes(v) ? null : problem(message));
}

export function nullable(shape: Shape): Shape {
  return (v) => (v === null ? null : shape(v));
}

/** Absent (undefined) or fitting `shape`. */
export function optional(shape: Shape): Shape {
  return (v) => (v === undefined ? null : shape(v));
}

export function array(item: Shape): Shape {
  return (v) => {
    if (!Array.isArray(v)) return expected('array', v);
    for (let i = 0; i < v.length; i++) {
      const p = item(v[i]);
      if (p) return { path: [i, ...p.path], message: p.message };
    }
    return null;
  };
}

/** An object whose named fields fit their shapes; other fields are allowed. */
export function object(fields: Record<string, Shape>): Shape {
  const entries = Object.entries(fields);
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return expected('object', v);
    for (const [key, shape] of entries) {
      const p = shape((v as Record<string, unknown>)[key]);
      if (p) return { path: [key, ...p.path], message: p.message };
    }
    return null;
  };
}

/** `path: message` (or just the message for the value itself). */
export function describeProblem(p: ShapeProblem): string {
  return p.path.length === 0 ? p.message : `${p.path.join('.')}: ${p.message}`;
}
