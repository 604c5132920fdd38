/**
 * A look at raw JSON before it is parsed. `JSON.parse` of a body made of millions of tiny values (`[{},{},…]`)
 * allocates far more than the body's size and blocks the event loop while it does; one such request
 * froze the HTTP server for 96 s and then ran it out of heap. A single linear pass over the bytes, which
 * allocates nothing, bounds nesting depth and the number of values first.
 */

/** Bounds of {@link checkJsonShape}. */
export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Array elements plus object members, counted over the whole text. */
  maxElements: number;
}

/** Why a text was refused, or undefined when it is within the bounds (it may still be invalid JSON). */
export function checkJsonShape(bytes: Uint8Array, limits: JsonShapeLimits): string | undefined {
  let depth = 0;
  let elements = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c /* \ */) i++;
      else if (b === 0x22 /* " */) inString = false;
      continue;
    }
    switch (b) {
      case 0x22:
        inString = true;
        break;
      case 0x5b /* [ */:
      case 0x7b /* { */:
        if (++depth > limits.maxDepth) return `JSON nested deeper than ${limits.maxDepth} levels`;
        // A container's first member is counted here, the others at their commas.
        if (++elements > limits.maxElements) return tooMany(limits.maxElements);
        break;
      case 0x5d /* ] */:
      case 0x7d /* } */:
        depth--;
        break;
      case 0x2c /* , */:
        if (++elements > limits.maxElements) return tooMany(limits.maxElements);
        break;
    }
  }
  return undefined;
}

function tooMany(max: number): string {
  return `JSON has more than ${max.toLocaleString('en-US')} array elements and object members`;
}
