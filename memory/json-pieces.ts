/**
 * JSON text of a big object produced piece by piece, so writing a segment or documents file never holds
 * the whole file as one string (and then one buffer): at 4 MiB of text per segment, those two copies
 * lived in the large-object space until the next full garbage collection and raised an ingest's peak.
 */

/**
 * The pieces of `JSON.stringify(value)`: a top-level array, and each array property of a top-level
 * object, are given element by element, everything else whole. Joined, they are exactly `JSON.stringify(value)` for plain data (no
 * `toJSON` on the top-level object itself). A property may also be an iterator (a generator, say), which
 * JSON has no form for: it is written as the array of its elements, each taken from it only when its
 * piece is, so the elements never need to exist all at once.
 */
export function* jsonPieces(value: object): Generator<string> {
  if (Array.isArray(value)) {
    yield* arrayPieces(value);
    return;
  }
  let sep = '{';
  for (const [key, v] of Object.entries(value)) {
    if (Array.isArray(v) || isIterator(v)) {
      yield `${sep}${JSON.stringify(key)}:`;
      yield* arrayPieces(v);
    } else {
      const json = JSON.stringify(v);
      // As in JSON.stringify: a property with no JSON form is left out.
      if (json === undefined) continue;
      yield `${sep}${JSON.stringify(key)}:${json}`;
    }
    sep = ',';
  }
  yield sep === '{' ? '{}' : '}';
}

function* arrayPieces(list: Iterable<unknown>): Generator<string> {
  yield '[';
  let first = true;
  // for...of gives a hole of a sparse array as undefined, which is written null, as JSON.stringify does.
  for (const element of list) {
    if (!first) yield ',';
    first = false;
    // As in JSON.stringify: an element with no JSON form (undefined, a function) is null.
    yield JSON.stringify(element) ?? 'null';
  }
  yield ']';
}

function isIterator(v: unknown): v is Iterable<unknown> {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { next?: unknown }).next === 'function' &&
    Symbol.iterator in v
  );
}
