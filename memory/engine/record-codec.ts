/**
 * A compact, lossless byte form of a document record, for the packed catalog (./packed-documents.ts).
 *
 * Why not JSON: a record's JSON spends most of its 0.33 KB on key names, the id again, a 64-character hex
 * hash and a 24-character time, and the packed catalog is what an ingest keeps that grows with the store.
 * This form writes the record's key order once per distinct shape (a number), each value as a tagged
 * binary field, and the values that repeat across records (segment names, chunker names) as numbers:
 * about 0.13 KB for a typical record. Decoding gives back an object with the same keys in the same order
 * and values equal to what `JSON.parse(JSON.stringify(record))` gives, so documents files written from
 * it are byte for byte the same.
 *
 * Strings are stored one byte per code unit when every unit is below 256, else two (UTF-16): lossless for
 * any JavaScript string, lone surrogates included, which UTF-8 is not.
 */
import { RlmError } from '../../core/errors.ts';
import { ByteWriter, readVarint } from '../byte-writer.ts';
import type { DocumentRecord } from '../types.ts';

/** Strings met again and again (key shapes, segment and chunker names), numbered. Append-only. */
export class Names {
  private readonly names: string[] = [];
  private readonly numbers = new Map<string, number>();

  number(name: string): number {
    let n = this.numbers.get(name);
    if (n === undefined) {
      n = this.names.length;
      this.names.push(name);
      this.numbers.set(name, n);
    }
    return n;
  }

  name(n: number): string {
    const name = this.names[n];
    if (name === undefined) throw new RlmError('RUNTIME', `packed documents: no name ${n}`);
    return name;
  }

  private readonly shapes: (string[] | undefined)[] = [];

  /** The keys of shape `n` (a name made of keys joined by {@link KEY_SEPARATOR}), split once. */
  keys(n: number): string[] {
    let keys = this.shapes[n];
    if (keys === undefined) {
      keys = this.name(n).split(KEY_SEPARATOR);
      this.shapes[n] = keys;
    }
    return keys;
  }
}

// Value tags, one byte before each value.
const NULL = 0;
const UINT = 1;
const FLOAT = 2;
const TEXT8 = 3;
const TEXT16 = 4;
/** 64 lowercase hex digits, as their 32 bytes. */
const HEX32 = 5;
/** An ISO time that `Date` writes back the same, as its milliseconds. */
const TIME = 6;
/** A string from {@link Names}. */
const NAME = 7;
/** The record's id, which the catalog keeps beside the record. */
const ID = 8;
const TRUE = 9;
const FALSE = 10;
/** Anything else (arrays, objects), as JSON in {@link TEXT8}/{@link TEXT16} form. */
const JSON_VALUE = 11;

/** Keys whose string values repeat across records: kept as {@link Names} numbers. */
const NAMED_KEYS = new Set(['segment', 'chunker']);
const HEX64 = /^[0-9a-f]{64}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const KEY_SEPARATOR = '\u0000';

const WIDE = /[^\x00-\xff]/;

/**
 * Whether `s` has a code unit above 255, and so is stored two bytes a unit (UTF-16) rather than one
 * (Latin-1): the rule for every string of a packed record, its id included.
 */
export function isWide(s: string): boolean {
  return WIDE.test(s);
}

/** The record writer: {@link ByteWriter}'s bytes and varints, with the codec's floats, strings and hashes. Reused across records. */
class Writer extends ByteWriter {
  float(n: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(n, this.pos);
    this.pos += 8;
  }

  text(s: string): void {
    if (isWide(s)) {
      this.byte(TEXT16);
      this.varint(s.length);
      this.ensure(s.length * 2);
      this.pos += this.buf.write(s, this.pos, 'utf16le');
    } else {
      this.byte(TEXT8);
      this.varint(s.length);
      this.ensure(s.length);
      this.pos += this.buf.write(s, this.pos, 'latin1');
    }
  }

  hex(s: string): void {
    this.ensure(32);
    this.pos += this.buf.write(s, this.pos, 'hex');
  }
}

const scratch = new Writer(4096);

/** A cursor over one encoded record. */
class Reader {
  readonly buf: Buffer;
  pos: number;

  constructor(buf: Buffer, pos: number) {
    this.buf = buf;
    this.pos = pos;
  }

  uint(): number {
    return readVarint(this.buf, this, this.buf.length);
  }

  float(): number {
    const n = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return n;
  }

  text(tag: number): string {
    const length = this.uint();
    const bytes = tag === TEXT16 ? length * 2 : length;
    const s = this.buf.toString(tag === TEXT16 ? 'utf16le' : 'latin1', this.pos, this.pos + bytes);
    this.pos += bytes;
    return s;
  }
}

/**
 * Encodes `record` (whose id is kept apart) and returns a view of the bytes: valid until the next call.
 * Keys whose value is `undefined` are left out, as JSON leaves them out.
 */
export function encodeRecord(record: DocumentRecord, names: Names): Buffer {
  const w = scratch;
  w.pos = 0;
  const fields = record as unknown as Record<string, unknown>;
  const keys = Object.keys(fields).filter((k) => {
    const t = typeof fields[k];
    return t !== 'undefined' && t !== 'function' && t !== 'symbol';
  });
  w.varint(names.number(keys.join(KEY_SEPARATOR)));
  for (const key of keys) {
    const v = fields[key];
    if (v === null) w.byte(NULL);
    else if (v === true) w.byte(TRUE);
    else if (v === false) w.byte(FALSE);
    else if (typeof v === 'number') {
      if (!Number.isFinite(v)) w.byte(NULL);
      else if (Number.isSafeInteger(v) && v >= 0) {
        w.byte(UINT);
        w.varint(v);
      } else {
        w.byte(FLOAT);
        w.float(v);
      }
    } else if (typeof v === 'string') {
      if (key === 'id' && v === record.id) w.byte(ID);
      else if (NAMED_KEYS.has(key)) {
        w.byte(NAME);
        w.varint(names.number(v));
      } else if (HEX64.test(v)) {
        w.byte(HEX32);
        w.hex(v);
      } else if (ISO_TIME.test(v) && isTime(v)) {
        w.byte(TIME);
        w.float(Date.parse(v));
      } else w.text(v);
    } else {
      w.byte(JSON_VALUE);
      w.text(JSON.stringify(v));
    }
  }
  return w.take();
}

function isTime(s: string): boolean {
  const ms = Date.parse(s);
  return Number.isFinite(ms) && new Date(ms).toISOString() === s;
}

/** The record encoded at `buf[start..]` by {@link encodeRecord}, with its `id`. */
export function decodeRecord(id: string, buf: Buffer, start: number, names: Names): DocumentRecord {
  const r = new Reader(buf, start);
  const keys = names.keys(r.uint());
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = readValue(r, id, names);
    // As JSON.parse does: "__proto__" is an own key, not the prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out as unknown as DocumentRecord;
}

function readValue(r: Reader, id: string, names: Names): unknown {
  const tag = r.buf[r.pos++]!;
  switch (tag) {
    case NULL:
      return null;
    case TRUE:
      return true;
    case FALSE:
      return false;
    case UINT:
      return r.uint();
    case FLOAT:
      return r.float();
    case TEXT8:
    case TEXT16:
      return r.text(tag);
    case HEX32:
      r.pos += 32;
      return r.buf.toString('hex', r.pos - 32, r.pos);
    case TIME:
      return new Date(r.float()).toISOString();
    case NAME:
      return names.name(r.uint());
    case ID:
      return id;
    case JSON_VALUE:
      return JSON.parse(r.text(r.buf[r.pos++]!));
    default:
      throw new RlmError('RUNTIME', `packed documents: unknown value tag ${tag}`);
  }
}
