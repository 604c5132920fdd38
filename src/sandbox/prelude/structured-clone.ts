/* `structuredClone`, written on captured built-ins: data only, as the web platform's is. */
import {
  $DataView,
  $Date,
  $Error,
  $Map,
  $RegExp,
  $Set,
  $TypeError,
  ArrayBufferByteLength,
  ArrayBufferSlice,
  brand,
  DataViewBuffer,
  DataViewByteLength,
  DataViewByteOffset,
  DateGetTime,
  ERROR_CONSTRUCTORS,
  ErrorIsError,
  hasOwn,
  isArray,
  MapForEach,
  MapGet,
  MapHas,
  MapSet,
  MapSize,
  objectKeys,
  RegExpFlags,
  RegExpSource,
  SetAdd,
  SetForEach,
  SetSize,
  TYPED_ARRAYS,
  TypedArrayBuffer,
  TypedArrayByteLength,
  TypedArrayByteOffset,
  TypedArrayLength,
  TypedArrayToStringTag,
} from './intrinsics.ts';

function cloneError(message: string): Error {
  const e = new $Error(message);
  e.name = 'DataCloneError';
  return e;
}

function cloneValue(v: unknown, seen: Map<unknown, unknown>): unknown {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
    if (typeof v === 'symbol') throw cloneError('structuredClone: a Symbol could not be cloned');
    return v;
  }
  if (typeof v === 'function') throw cloneError('structuredClone: a function could not be cloned');
  if (MapHas(seen, v)) return MapGet(seen, v);
  const o = v as Record<PropertyKey, unknown>;
  let out: unknown;
  if (isArray(o)) {
    const copy: unknown[] = [];
    MapSet(seen, o, copy);
    copy.length = o.length;
    const keys = objectKeys(o);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as unknown as number;
      copy[key] = cloneValue(o[key], seen);
    }
    return copy;
  }
  if (brand(DateGetTime, o)) {
    out = new $Date(DateGetTime(o));
  } else if (brand(RegExpSource, o)) {
    out = new $RegExp(RegExpSource(o), RegExpFlags(o));
  } else if (brand(MapSize, o)) {
    const copy = new $Map<unknown, unknown>();
    MapSet(seen, o, copy);
    MapForEach(o, (value, key) => {
      MapSet(copy, cloneValue(key, seen), cloneValue(value, seen));
    });
    return copy;
  } else if (brand(SetSize, o)) {
    const copy = new $Set<unknown>();
    MapSet(seen, o, copy);
    SetForEach(o, (value) => {
      SetAdd(copy, cloneValue(value, seen));
    });
    return copy;
  } else if (brand(ArrayBufferByteLength, o)) {
    out = ArrayBufferSlice(o, 0);
  } else if (brand(TypedArrayLength, o)) {
    const Ctor = TYPED_ARRAYS[TypedArrayToStringTag(o)]!;
    const start = TypedArrayByteOffset(o);
    out = new Ctor(ArrayBufferSlice(TypedArrayBuffer(o), start, start + TypedArrayByteLength(o)));
  } else if (brand(DataViewByteLength, o)) {
    const start = DataViewByteOffset(o);
    out = new $DataView(ArrayBufferSlice(DataViewBuffer(o), start, start + DataViewByteLength(o)));
  } else if (ErrorIsError?.(o)) {
    const name = typeof o.name === 'string' && hasOwn(ERROR_CONSTRUCTORS, o.name) ? o.name : 'Error';
    out = new ERROR_CONSTRUCTORS[name]!(typeof o.message === 'string' ? o.message : '');
  } else {
    const copy: Record<string, unknown> = {};
    MapSet(seen, o, copy);
    const keys = objectKeys(o);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      copy[key] = cloneValue(o[key], seen);
    }
    return copy;
  }
  MapSet(seen, o, out);
  return out;
}

export function structuredClone(value: unknown): unknown {
  // biome-ignore lint/complexity/noArguments: structuredClone() is an error, structuredClone(undefined) is not
  if (arguments.length === 0)
    throw new $TypeError('structuredClone: 1 argument required, but only 0 present');
  return cloneValue(value, new $Map());
}
