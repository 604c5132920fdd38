/* `TextEncoder` and `TextDecoder` for UTF-8, written on captured built-ins. */
import {
  $RangeError,
  $String,
  $TypeError,
  $Uint8Array,
  ArrayBufferByteLength,
  ArrayBufferSlice,
  brand,
  DataViewBuffer,
  DataViewByteLength,
  DataViewByteOffset,
  MathMin,
  ReflectApply,
  StringCharCodeAt,
  StringFromCharCode,
  StringToLowerCase,
  TypedArrayBuffer,
  TypedArrayByteLength,
  TypedArrayByteOffset,
  TypedArrayLength,
} from './intrinsics.ts';

function utf8Encode(s: unknown): Uint8Array {
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

function bytesOf(input: unknown): Uint8Array {
  if (input === undefined) return new $Uint8Array(0);
  if (brand(ArrayBufferByteLength, input)) return new $Uint8Array(input as ArrayBuffer);
  if (brand(TypedArrayLength, input))
    return new $Uint8Array(TypedArrayBuffer(input), TypedArrayByteOffset(input), TypedArrayByteLength(input));
  if (brand(DataViewByteLength, input))
    return new $Uint8Array(DataViewBuffer(input), DataViewByteOffset(input), DataViewByteLength(input));
  throw new $TypeError('TextDecoder.decode: expected an ArrayBuffer, a typed array or a DataView');
}

function utf8Decode(input: unknown, fatal: boolean): string {
  const b = bytesOf(input);
  let out = '';
  let chunk: number[] = [];
  const bad = (): number => {
    if (fatal) throw new $TypeError('TextDecoder: the data is not valid UTF-8');
    return 0xfffd;
  };
  let i = 0;
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) i = 3;
  while (i < b.length) {
    const c = b[i]!;
    let cp: number;
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
      const next = b[i];
      if (next !== undefined && (next & 0xc0) === 0x80) {
        cp = (cp << 6) | (next & 63);
        i++;
      } else {
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

function utf8Label(label: unknown): void {
  const l = label === undefined ? 'utf-8' : StringToLowerCase($String(label));
  if (l !== 'utf-8' && l !== 'utf8' && l !== 'unicode-1-1-utf-8') {
    throw new $RangeError('TextDecoder: only UTF-8 is available in the sandbox (got ' + l + ')');
  }
}

export class TextEncoder {
  get encoding(): string {
    return 'utf-8';
  }
  encode(input?: unknown): Uint8Array {
    return utf8Encode(input === undefined ? '' : input);
  }
  encodeInto(input: unknown, dest: Uint8Array): { read: number; written: number } {
    const bytes = utf8Encode(input);
    const n = MathMin(bytes.length, dest.length);
    for (let i = 0; i < n; i++) dest[i] = bytes[i]!;
    return { read: $String(input).length, written: n };
  }
}

export class TextDecoder {
  #fatal: boolean;
  constructor(label?: unknown, options?: unknown) {
    utf8Label(label);
    this.#fatal =
      options !== null && typeof options === 'object' && (options as { fatal?: unknown }).fatal === true;
  }
  get encoding(): string {
    return 'utf-8';
  }
  get fatal(): boolean {
    return this.#fatal;
  }
  decode(input?: unknown): string {
    return utf8Decode(input, this.#fatal);
  }
}
