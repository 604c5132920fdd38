/*
 * Resizable ArrayBuffers reserve `maxByteLength` outside the heap and `resize` commits it without
 * isolated-vm counting it against the memory limit: a 64 MB isolate could hold gigabytes. The
 * reservations of a session together are bounded by its memory limit (`config.memoryMb`); plain
 * ArrayBuffers are counted by isolated-vm already. SharedArrayBuffer is deleted (../names.ts).
 */
import { $ArrayBuffer, $RangeError, $TypeError, ReflectConstruct } from './intrinsics.ts';
import { replaceConstructor } from './replace.ts';
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
    // biome-ignore lint/complexity/noArguments: without options the native sees the arguments as given
    let args: ArrayLike<unknown> = arguments;
    if (options !== null && typeof options === 'object') {
      const max = (options as { maxByteLength?: unknown }).maxByteLength;
      if (max !== undefined) {
        const bytes = +(max as number);
        const left = resizableBudget() - resizableReserved;
        if (!(bytes <= left)) {
          throw new $RangeError(
            'ArrayBuffer: a maxByteLength of ' +
              max +
              ' bytes is over what this session may still reserve for resizable buffers (' +
              left +
              ' of ' +
              resizableBudget() +
              ' bytes, the memory limit); use a smaller maxByteLength, or plain arrays',
          );
        }
        resizableReserved += bytes > 0 ? bytes : 0;
        // Read once: a getter answering differently the second time must not reach the native constructor.
        args = [length, { maxByteLength: max }];
      }
    }
    return ReflectConstruct(
      $ArrayBuffer,
      args,
      new.target === ArrayBufferGuarded ? $ArrayBuffer : new.target,
    ) as ArrayBuffer;
  };
  replaceConstructor('ArrayBuffer', $ArrayBuffer, ArrayBufferGuarded);
}
