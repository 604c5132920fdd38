/*
 * Prelude part: small pure web APIs ordinary snippets reach for, written here on captured built-ins:
 * `structuredClone`, `TextEncoder`/`TextDecoder` (UTF-8), `btoa`/`atob`, `queueMicrotask` and
 * `performance.now()`. None touches the host; each is an ordinary (writable) global. What stays missing
 * (URL, timers, fetch, Buffer, ...) is named with what to use instead when a block reaches for it
 * (../advice.ts).
 */
const $Map = Map;
const MapGet = uncurry(Map.prototype.get);
const MapSet = uncurry(Map.prototype.set);
const MapHas = uncurry(Map.prototype.has);
const SetAdd = uncurry(Set.prototype.add);
const $Set = Set;
const $Date = Date;
const $Uint8Array = Uint8Array;
const $ArrayBufferCtor = ArrayBuffer;
const $DataView = DataView;
const ArrayBufferSlice = uncurry(ArrayBuffer.prototype.slice);
const ArrayBufferByteLength = uncurryGetter(ArrayBuffer.prototype, 'byteLength');
const TypedArrayBuffer = uncurryGetter(getPrototypeOf(Uint8Array.prototype), 'buffer');
const TypedArrayByteOffset = uncurryGetter(getPrototypeOf(Uint8Array.prototype), 'byteOffset');
const TypedArrayByteLength = uncurryGetter(getPrototypeOf(Uint8Array.prototype), 'byteLength');
const TypedArrayToStringTag = uncurryGetter(getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag);
const DataViewBuffer = uncurryGetter(DataView.prototype, 'buffer');
const DataViewByteOffset = uncurryGetter(DataView.prototype, 'byteOffset');
const DataViewByteLength = uncurryGetter(DataView.prototype, 'byteLength');
const StringFromCharCode = String.fromCharCode;
const PromiseResolve = Promise.resolve;
const TYPED = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
};
const ERRORS = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };

function cloneError(message) {
  const e = new $Error(message);
  e.name = 'DataCloneError';
  return e;
}

function cloneValue(v, seen) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
    if (typeof v === 'symbol') throw cloneError('structuredClone: a Symbol could not be cloned');
    return v;
  }
  if (typeof v === 'function') throw cloneError('structuredClone: a function could not be cloned');
  if (MapHas(seen, v)) return MapGet(seen, v);
  let out;
  if (isArray(v)) {
    out = [];
    MapSet(seen, v, out);
    out.length = v.length;
    const keys = objectKeys(v);
    for (let i = 0; i < keys.length; i++) out[keys[i]] = cloneValue(v[keys[i]], seen);
    return out;
  }
  if (brand(DateGetTime, v)) {
    out = new $Date(DateGetTime(v));
  } else if (brand(RegExpSource, v)) {
    out = new $RegExp(RegExpSource(v), RegExpFlags(v));
  } else if (brand(MapSize, v)) {
    out = new $Map();
    MapSet(seen, v, out);
    MapForEach(v, function (value, key) {
      MapSet(out, cloneValue(key, seen), cloneValue(value, seen));
    });
    return out;
  } else if (brand(SetSize, v)) {
    out = new $Set();
    MapSet(seen, v, out);
    SetForEach(v, function (value) {
      SetAdd(out, cloneValue(value, seen));
    });
    return out;
  } else if (brand(ArrayBufferByteLength, v)) {
    out = ArrayBufferSlice(v, 0);
  } else if (brand(TypedArrayLength, v)) {
    const Ctor = TYPED[TypedArrayToStringTag(v)];
    const start = TypedArrayByteOffset(v);
    out = new Ctor(ArrayBufferSlice(TypedArrayBuffer(v), start, start + TypedArrayByteLength(v)));
  } else if (brand(DataViewByteLength, v)) {
    const start = DataViewByteOffset(v);
    out = new $DataView(ArrayBufferSlice(DataViewBuffer(v), start, start + DataViewByteLength(v)));
  } else if (ErrorIsError !== null && ErrorIsError(v)) {
    const name = typeof v.name === 'string' && hasOwn(ERRORS, v.name) ? v.name : 'Error';
    out = new ERRORS[name](typeof v.message === 'string' ? v.message : '');
  } else {
    out = {};
    MapSet(seen, v, out);
    const keys = objectKeys(v);
    for (let i = 0; i < keys.length; i++) out[keys[i]] = cloneValue(v[keys[i]], seen);
    return out;
  }
  MapSet(seen, v, out);
  return out;
}

function structuredClone(value) {
  if (arguments.length === 0)
    throw new $TypeError('structuredClone: 1 argument required, but only 0 present');
  return cloneValue(value, new $Map());
}

function utf8Encode(s) {
  const str = $String(s);
  const bytes = new $Uint8Array(str.length * 3);
  let n = 0;
  for (let i = 0; i < str.length; i++) {
    let c = StringCharCodeAt(str, i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < str.length) {
      const d = StringCharCodeAt(str, i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) bytes[n++] = c;
    else if (c < 0x800) {
      bytes[n++] = 0xc0 | (c >> 6);
      bytes[n++] = 0x80 | (c & 63);
    } else if (c < 0x10000) {
      bytes[n++] = 0xe0 | (c >> 12);
      bytes[n++] = 0x80 | ((c >> 6) & 63);
      bytes[n++] = 0x80 | (c & 63);
    } else {
      bytes[n++] = 0xf0 | (c >> 18);
      bytes[n++] = 0x80 | ((c >> 12) & 63);
      bytes[n++] = 0x80 | ((c >> 6) & 63);
      bytes[n++] = 0x80 | (c & 63);
    }
  }
  return new $Uint8Array(ArrayBufferSlice(TypedArrayBuffer(bytes), 0, n));
}

function bytesOf(input) {
  if (input === undefined) return new $Uint8Array(0);
  if (brand(ArrayBufferByteLength, input)) return new $Uint8Array(input);
  if (brand(TypedArrayLength, input))
    return new $Uint8Array(TypedArrayBuffer(input), TypedArrayByteOffset(input), TypedArrayByteLength(input));
  if (brand(DataViewByteLength, input))
    return new $Uint8Array(DataViewBuffer(input), DataViewByteOffset(input), DataViewByteLength(input));
  throw new $TypeError('TextDecoder.decode: expected an ArrayBuffer, a typed array or a DataView');
}

function utf8Decode(input, fatal) {
  const b = bytesOf(input);
  let out = '';
  let chunk = [];
  const bad = function () {
    if (fatal) throw new $TypeError('TextDecoder: the data is not valid UTF-8');
    return 0xfffd;
  };
  let i = 0;
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) i = 3;
  for (; i < b.length; ) {
    const c = b[i];
    let cp;
    let need = 0;
    if (c < 0x80) {
      cp = c;
    } else if (c >= 0xc2 && c < 0xe0) {
      cp = c & 31;
      need = 1;
    } else if (c >= 0xe0 && c < 0xf0) {
      cp = c & 15;
      need = 2;
    } else if (c >= 0xf0 && c < 0xf5) {
      cp = c & 7;
      need = 3;
    } else {
      cp = bad();
    }
    i++;
    for (let k = 0; k < need; k++) {
      if (i < b.length && (b[i] & 0xc0) === 0x80) cp = (cp << 6) | (b[i++] & 63);
      else {
        cp = bad();
        need = 0;
        break;
      }
    }
    if (need === 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) cp = bad();
    if (need === 3 && (cp < 0x10000 || cp > 0x10ffff)) cp = bad();
    if (cp >= 0x10000) {
      cp -= 0x10000;
      chunk[chunk.length] = 0xd800 + (cp >> 10);
      chunk[chunk.length] = 0xdc00 + (cp & 1023);
    } else chunk[chunk.length] = cp;
    if (chunk.length >= 4096) {
      out += ReflectApply(StringFromCharCode, undefined, chunk);
      chunk = [];
    }
  }
  return out + ReflectApply(StringFromCharCode, undefined, chunk);
}

function utf8Label(label) {
  const l = label === undefined ? 'utf-8' : StringToLowerCase($String(label));
  if (l !== 'utf-8' && l !== 'utf8' && l !== 'unicode-1-1-utf-8') {
    throw new $RangeError('TextDecoder: only UTF-8 is available in the sandbox (got ' + l + ')');
  }
}

class TextEncoder {
  get encoding() {
    return 'utf-8';
  }
  encode(input) {
    return utf8Encode(input === undefined ? '' : input);
  }
  encodeInto(input, dest) {
    const bytes = utf8Encode(input);
    const n = MathMin(bytes.length, dest.length);
    for (let i = 0; i < n; i++) dest[i] = bytes[i];
    return { read: $String(input).length, written: n };
  }
}

class TextDecoder {
  #fatal;
  constructor(label, options) {
    utf8Label(label);
    this.#fatal = options !== null && typeof options === 'object' && options.fatal === true;
  }
  get encoding() {
    return 'utf-8';
  }
  get fatal() {
    return this.#fatal;
  }
  decode(input) {
    return utf8Decode(input, this.#fatal);
  }
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function invalidCharacter(message) {
  const e = new $Error(message);
  e.name = 'InvalidCharacterError';
  return e;
}

function btoa(data) {
  const s = $String(data);
  let out = '';
  for (let i = 0; i < s.length; i += 3) {
    const a = StringCharCodeAt(s, i);
    const b = i + 1 < s.length ? StringCharCodeAt(s, i + 1) : 0;
    const c = i + 2 < s.length ? StringCharCodeAt(s, i + 2) : 0;
    if (a > 255 || b > 255 || c > 255)
      throw invalidCharacter(
        'btoa: the string has characters outside Latin-1; encode it first: btoa(String.fromCharCode(...new TextEncoder().encode(s)))',
      );
    const n = (a << 16) | (b << 8) | c;
    out +=
      B64[n >> 18] +
      B64[(n >> 12) & 63] +
      (i + 1 < s.length ? B64[(n >> 6) & 63] : '=') +
      (i + 2 < s.length ? B64[n & 63] : '=');
  }
  return out;
}

function atob(data) {
  const s = StringReplace($String(data), /[\t\n\f\r ]+/g, '');
  const clean = s.length % 4 === 0 ? StringReplace(s, /==?$/, '') : s;
  if (clean.length % 4 === 1 || RegExpTest(/[^A-Za-z0-9+/]/, clean))
    throw invalidCharacter('atob: the string is not valid base64');
  let out = '';
  let bits = 0;
  let acc = 0;
  for (let i = 0; i < clean.length; i++) {
    acc = (acc << 6) | StringIndexOf(B64, clean[i]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += StringFromCharCode((acc >> bits) & 255);
    }
  }
  return out;
}

function queueMicrotask(callback) {
  if (typeof callback !== 'function') throw new $TypeError('queueMicrotask: the callback must be a function');
  ReflectApply(PromiseThen, ReflectApply(PromiseResolve, $Promise, [undefined]), [
    function () {
      callback();
    },
  ]);
}

const timeOrigin = DateNow();
const performanceObject = freeze({
  now: function now() {
    return DateNow() - timeOrigin;
  },
  timeOrigin: timeOrigin,
});

{
  const web = {
    structuredClone,
    TextEncoder,
    TextDecoder,
    btoa,
    atob,
    queueMicrotask,
    performance: performanceObject,
  };
  const names = objectKeys(web);
  for (let i = 0; i < names.length; i++)
    defineProperty(G, names[i], {
      value: web[names[i]],
      writable: true,
      enumerable: false,
      configurable: true,
    });
}
