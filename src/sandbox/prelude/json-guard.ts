/*
 * JSON.parse builds every object and array of its text in one C++ call: twenty million empty objects
 * take half a minute. Long texts are checked first (an upper bound: braces inside strings count too).
 */
import { toStringOnce } from './coerce.ts';
import { $JSON, $RangeError, defineProperty, jsonParse, StringIndexOf } from './intrinsics.ts';

const JSON_SCAN_MIN = 1048576;
const JSON_CONTAINER_CAP = 2000000;

function countUpTo(text: string, ch: string, limit: number): number {
  let n = 0;
  let i = StringIndexOf(text, ch, 0);
  while (i !== -1 && n <= limit) {
    n++;
    i = StringIndexOf(text, ch, i + 1);
  }
  return n;
}

export function guardJsonParse(): void {
  defineProperty($JSON, 'parse', {
    value: function parse(text: unknown, reviver: unknown) {
      // Converted once; the native gets the string.
      const source = toStringOnce(text);
      if (source.length > JSON_SCAN_MIN) {
        const containers =
          countUpTo(source, '{', JSON_CONTAINER_CAP) + countUpTo(source, '[', JSON_CONTAINER_CAP);
        if (containers > JSON_CONTAINER_CAP) {
          throw new $RangeError(
            'JSON.parse: more than ' +
              JSON_CONTAINER_CAP +
              ' objects and arrays in one text is over the sandbox limit; parse it in parts (for JSON lines, line by line)',
          );
        }
      }
      // biome-ignore lint/complexity/noArguments: JSON.parse(t) and JSON.parse(t, undefined) are told apart by count
      return arguments.length > 1 ? jsonParse(source, reviver as never) : jsonParse(source);
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });
}
