/*
 * JSON encoding of the bridge's own messages (requests, block results) that ignores toJSON and prototype
 * getters, so poisoning Object.prototype cannot garble what the host receives.
 */
import {
  $RangeError,
  getOwnPropertyDescriptor,
  hasOwn,
  isArray,
  jsonStringify,
  NumberIsFinite,
  objectKeys,
} from './intrinsics.ts';

/** Longest string the bridge encodes: JSON.stringify is one C++ call V8 cannot interrupt. */
const ENCODE_STRING_MAX = 16777216;

/** Handles the shapes the bridge builds: primitives, arrays and plain objects; anything else becomes null. */
export function encode(v: unknown): string {
  switch (typeof v) {
    case 'string':
      if (v.length > ENCODE_STRING_MAX) throw new $RangeError('string too large to encode');
      return jsonStringify(v);
    case 'number':
      return NumberIsFinite(v) ? '' + v : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    default:
      return 'null';
  }
  if (v === null) return 'null';
  let out: string;
  if (isArray(v)) {
    out = '[';
    for (let i = 0; i < v.length; i++) {
      const d = getOwnPropertyDescriptor(v, i);
      out += (i === 0 ? '' : ',') + encode(d === undefined ? null : d.value);
    }
    return out + ']';
  }
  out = '{';
  const keys = objectKeys(v);
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const d = getOwnPropertyDescriptor(v, key);
    if (d === undefined || !hasOwn(d, 'value') || d.value === undefined) continue;
    out += (first ? '' : ',') + jsonStringify(key) + ':' + encode(d.value);
    first = false;
  }
  return out + '}';
}
