/*
 * Resizable ArrayBuffers reserve `maxByteLength` outside the heap and `resize` commits it without
 * isolated-vm counting it against the memory limit: a 64 MB isolate could hold gigabytes. The
 * reservations of a session together are bounded by its memory limit (`config.memoryMb`); plain
 * ArrayBuffers are counted by isolated-vm already. SharedArrayBuffer is deleted (../names.ts).
 */
import { isObjectLike, toNumber } from './coerce.ts';
import { $ArrayBuffer, $RangeError, $TypeError, ReflectConstruct } from './intrinsics.ts';
import { type AnyMethod, replaceConstructor } from './replace.ts';
import { memoryLimitMb } from './session-state.ts';

/** Bytes of maxByteLength the session's resizable buffers have reserved (never credited back). */
let resizableReserved = 0;

function resizableBudget(): number {
  return memoryLimitMb() * 1048576;
}

export function guardArrayBuffer(): void {
  // biome-ignore lint/suspicious/noShadowRestrictedNames: it takes the place of ArrayBuffer, under its name
  const ArrayBufferGuarded = function ArrayBuffer(length: unknown, options: unknown) {
    if (new.target === undefined) throw new $TypeError("Constructor ArrayBuffer requires 'new'");
    // Converted once, each; the native gets the numbers (what it would read from options, read here).
    const bytesLength = length === undefined ? length : toNumber(length);
    if (!isObjectLike(options)) return ReflectConstruct($ArrayBuffer, [bytesLength], newTargetOf(new.target));
    const max = (options as { maxByteLength?: unknown }).maxByteLength;
    if (max === undefined) return ReflectConstruct($ArrayBuffer, [bytesLength], newTargetOf(new.target));
    const bytes = toNumber(max);
    const left = resizableBudget() - resizableReserved;
    if (!(bytes <= left)) {
      throw new $RangeError(
        'ArrayBuffer: a maxByteLength of ' +
          bytes +
          ' bytes is over what this session may still reserve for resizable buffers (' +
          left +
          ' of ' +
          resizableBudget() +
          ' bytes, the memory limit); use a smaller maxByteLength, or plain arrays',
      );
    }
    resizableReserved += bytes > 0 ? bytes : 0;
    const args = [bytesLength, { maxByteLength: bytes }];
    return ReflectConstruct($ArrayBuffer, args, newTargetOf(new.target));
  };
  const newTargetOf = (target: unknown) =>
    (target === ArrayBufferGuarded ? $ArrayBuffer : target) as AnyMethod;
  replaceConstructor('ArrayBuffer', $ArrayBuffer, ArrayBufferGuarded);
}
