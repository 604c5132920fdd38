/**
 * Reading a session file line by line from a byte offset, without holding the file: Claude Code sessions
 * reach 100 MB and more, and an import resumes where the previous one stopped.
 */
import { promises as fs } from 'node:fs';

/** One line of a file, with its byte span (`end` is past the newline). */
export interface FileLine {
  text: string;
  start: number;
  end: number;
  /** 1-based line number in the file. */
  number: number;
  /** False for a last line without a newline: the writer may not have finished it. */
  complete: boolean;
}

const READ_BYTES = 1 << 20;

/**
 * Lines of `file` from byte `from` (a line start), numbered from `linesBefore + 1`. Reads `readBytes`
 * (1 MiB) at a time; only the line being assembled is kept across reads.
 */
export async function* readLines(
  file: string,
  from = 0,
  linesBefore = 0,
  readBytes = READ_BYTES,
): AsyncGenerator<FileLine> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(readBytes);
    let pos = from;
    let carry: Buffer | null = null;
    let carryStart = from;
    let number = linesBefore;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      let data = buf.subarray(0, bytesRead);
      let base = pos;
      if (carry !== null) {
        data = Buffer.concat([carry, data]);
        base = carryStart;
        carry = null;
      }
      pos += bytesRead;
      let i = 0;
      for (let nl = data.indexOf(10, i); nl !== -1; nl = data.indexOf(10, i)) {
        const stop = nl > i && data[nl - 1] === 13 ? nl - 1 : nl;
        yield {
          text: data.toString('utf8', i, stop),
          start: base + i,
          end: base + nl + 1,
          number: ++number,
          complete: true,
        };
        i = nl + 1;
      }
      if (i < data.length) {
        // `buf` is reused by the next read, so the unfinished line is copied out.
        carry = Buffer.from(data.subarray(i));
        carryStart = base + i;
      }
    }
    if (carry !== null) {
      yield {
        text: carry.toString('utf8'),
        start: carryStart,
        end: carryStart + carry.length,
        number: ++number,
        complete: false,
      };
    }
  } finally {
    await fh.close();
  }
}
