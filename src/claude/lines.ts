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
 * (1 MiB) at a time; only the line being assembled is kept across reads, as a list of the reads' tails,
 * joined once when its newline arrives: each byte is searched and copied a bounded number of times, so a
 * line of many megabytes (one long message) costs time linear in its length.
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
    /** The unfinished line: copies of the tails of earlier reads (`buf` is reused by the next read). */
    let carry: Buffer[] = [];
    let carryStart = from;
    let number = linesBefore;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      const data = buf.subarray(0, bytesRead);
      const base = pos;
      pos += bytesRead;
      let i = 0;
      for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, i)) {
        let line = data.subarray(i, nl + 1);
        let start = base + i;
        if (carry.length > 0) {
          carry.push(line);
          line = Buffer.concat(carry);
          start = carryStart;
          carry = [];
        }
        const stop = line.length > 1 && line[line.length - 2] === 13 ? line.length - 2 : line.length - 1;
        yield {
          text: line.toString('utf8', 0, stop),
          start,
          end: base + nl + 1,
          number: ++number,
          complete: true,
        };
        i = nl + 1;
      }
      if (i < data.length) {
        if (carry.length === 0) carryStart = base + i;
        carry.push(Buffer.from(data.subarray(i)));
      }
    }
    if (carry.length > 0) {
      const line = Buffer.concat(carry);
      yield {
        text: line.toString('utf8'),
        start: carryStart,
        end: carryStart + line.length,
        number: ++number,
        complete: false,
      };
    }
  } finally {
    await fh.close();
  }
}
