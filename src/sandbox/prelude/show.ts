/*
 * In-isolate value formatting, close to what Node's REPL prints: used for the shown value of a final
 * expression, for non-string `print` arguments and for FINAL answers that are not JSON-serialisable.
 * Bounded: depth 2, 100 array items, 50 keys, nested strings clipped; accessors are listed, not called.
 */
import {
  brand,
  DateGetTime,
  DateToISOString,
  ErrorIsError,
  FunctionToString,
  getOwnPropertyDescriptor,
  getPrototypeOf,
  hasOwn,
  isArray,
  jsonStringify,
  MapForEach,
  MapSize,
  MathMin,
  NumberIsNaN,
  ObjectPrototype,
  objectIs,
  objectKeys,
  RegExpSource,
  RegExpTest,
  RegExpToString,
  SetForEach,
  SetSize,
  StringIndexOf,
  StringSlice,
  SymbolToString,
  TypedArrayLength,
} from './intrinsics.ts';

const SHOW_DEPTH = 2;
const SHOW_ITEMS = 100;
const SHOW_KEYS = 50;
const SHOW_NESTED_STRING = 2000;
const SHOW_LINE = 72;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function clipString(s: string): string {
  if (s.length <= SHOW_NESTED_STRING) return s;
  return (
    StringSlice(s, 0, SHOW_NESTED_STRING) + '… (' + (s.length - SHOW_NESTED_STRING) + ' more characters)'
  );
}

function functionLabel(fn: unknown): string {
  let name = '';
  try {
    const d = getOwnPropertyDescriptor(fn, 'name');
    if (d && typeof d.value === 'string') name = d.value;
  } catch {}
  let isClass = false;
  try {
    isClass = StringSlice(FunctionToString(fn), 0, 6) === 'class ';
  } catch {}
  if (isClass) return '[class ' + (name || '(anonymous)') + ']';
  return '[Function: ' + (name || '(anonymous)') + ']';
}

function constructorName(v: object): string {
  let proto: unknown;
  try {
    proto = getPrototypeOf(v);
  } catch {
    return '';
  }
  if (proto === null) return '[Object: null prototype]';
  if (proto === ObjectPrototype) return '';
  try {
    const d = getOwnPropertyDescriptor(proto, 'constructor');
    const ctor: unknown = d?.value;
    if (typeof ctor === 'function') {
      const n = getOwnPropertyDescriptor(ctor, 'name');
      if (n && typeof n.value === 'string') return n.value;
    }
  } catch {}
  return '';
}

function keyLabel(k: string): string {
  return RegExpTest(IDENT, k) ? k : jsonStringify(k);
}

function wrapParts(open: string, parts: string[], close: string, indent: string): string {
  let flat = '';
  let multiline = false;
  for (let i = 0; i < parts.length; i++) {
    flat += (i === 0 ? '' : ', ') + parts[i];
    if (StringIndexOf(parts[i]!, '\n') !== -1) multiline = true;
  }
  if (parts.length === 0) return open + close;
  if (!multiline && flat.length + open.length + close.length + 2 <= SHOW_LINE)
    return open + ' ' + flat + ' ' + close;
  const pad = indent + '  ';
  let out = open;
  for (let i = 0; i < parts.length; i++) out += (i === 0 ? '\n' : ',\n') + pad + parts[i];
  return out + '\n' + indent + close;
}

function errorText(e: { stack?: unknown; name?: unknown; message?: unknown }): string {
  let stack: unknown;
  let name: unknown;
  let message: unknown;
  try {
    stack = e.stack;
  } catch {}
  if (typeof stack === 'string') return stack;
  try {
    name = e.name;
    message = e.message;
  } catch {}
  return (typeof name === 'string' ? name : 'Error') + ': ' + (typeof message === 'string' ? message : '');
}

function isErrorValue(v: object): boolean {
  if (ErrorIsError !== null) return ErrorIsError(v);
  const d = getOwnPropertyDescriptor(v, 'stack');
  return d !== undefined && typeof d.value === 'string';
}

function showValue(v: unknown, depth: number, stack: unknown[], indent: string): string {
  switch (typeof v) {
    case 'string':
      return jsonStringify(depth === 0 ? v : clipString(v));
    case 'number':
      return objectIs(v, -0) ? '-0' : '' + v;
    case 'bigint':
      return '' + v + 'n';
    case 'boolean':
    case 'undefined':
      return '' + v;
    case 'symbol':
      return SymbolToString(v);
    case 'function':
      return functionLabel(v);
    default:
      break;
  }
  if (v === null) return 'null';
  const o = v as Record<PropertyKey, unknown>;
  for (let i = 0; i < stack.length; i++) if (stack[i] === o) return '[Circular]';
  if (brand(DateGetTime, o)) {
    const t = DateGetTime(o);
    return NumberIsNaN(t) ? 'Invalid Date' : DateToISOString(o);
  }
  if (brand(RegExpSource, o)) return RegExpToString(o as unknown as RegExp);
  if (isErrorValue(o)) return depth === 0 ? errorText(o) : '[' + errorText(o) + ']';
  const array = isArray(o);
  if (depth > SHOW_DEPTH) return array ? '[Array]' : '[Object]';
  stack[stack.length] = o;
  const parts: string[] = [];
  const inner = indent + '  ';
  let open: string;
  let close: string;
  try {
    if (array || brand(TypedArrayLength, o)) {
      const len = array ? (o as unknown as unknown[]).length : TypedArrayLength(o);
      const n = MathMin(len, SHOW_ITEMS);
      for (let i = 0; i < n; i++) {
        parts[parts.length] = array && !hasOwn(o, i) ? '<empty>' : showValue(o[i], depth + 1, stack, inner);
      }
      if (len > n) parts[parts.length] = '... ' + (len - n) + ' more items';
      const name = array ? '' : constructorName(o) + '(' + len + ') ';
      open = name + '[';
      close = ']';
    } else if (brand(MapSize, o)) {
      let count = 0;
      MapForEach(o, (value, key) => {
        if (count++ < SHOW_ITEMS)
          parts[parts.length] =
            showValue(key, depth + 1, stack, inner) + ' => ' + showValue(value, depth + 1, stack, inner);
      });
      open = 'Map(' + MapSize(o) + ') {';
      close = '}';
    } else if (brand(SetSize, o)) {
      let count = 0;
      SetForEach(o, (value) => {
        if (count++ < SHOW_ITEMS) parts[parts.length] = showValue(value, depth + 1, stack, inner);
      });
      open = 'Set(' + SetSize(o) + ') {';
      close = '}';
    } else {
      const keys = objectKeys(o);
      const n = MathMin(keys.length, SHOW_KEYS);
      for (let i = 0; i < n; i++) {
        const k = keys[i]!;
        const d = getOwnPropertyDescriptor(o, k);
        let shown: string;
        if (d === undefined) continue;
        if (!hasOwn(d, 'value')) {
          // Accessors are listed, never called. hasOwn: descriptor fields may be poisoned on Object.prototype.
          const get = hasOwn(d, 'get') && d.get !== undefined;
          const set = hasOwn(d, 'set') && d.set !== undefined;
          shown = get && set ? '[Getter/Setter]' : get ? '[Getter]' : '[Setter]';
        } else {
          shown = showValue(d.value, depth + 1, stack, inner);
        }
        parts[parts.length] = keyLabel(k) + ': ' + shown;
      }
      if (keys.length > n) parts[parts.length] = '... ' + (keys.length - n) + ' more keys';
      const name = constructorName(o);
      open = (name ? name + ' ' : '') + '{';
      close = '}';
    }
  } finally {
    stack.length = stack.length - 1;
  }
  return wrapParts(open, parts, close, indent);
}

/** REPL-style display of any value. Never throws. */
export function show(v: unknown): string {
  try {
    return showValue(v, 0, [], '');
  } catch {
    return '[value could not be shown]';
  }
}
