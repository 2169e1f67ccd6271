/**
 * The byte-level reading and writing the Pinpoint importer shares: lines split from bytes with their UTF-8 checked
 * (an invalid byte is reported, never turned silently into U+FFFD), and buffered appends to temporary files.
 */
import { isUtf8 } from "buffer";
import * as fs from "fs";

export interface TextLine {
  /** 1-based. */
  line: number;
  /** The line without its LF or CRLF; bytes that are not UTF-8 decoded as U+FFFD. */
  text: string;
  /** Byte offset in the line of its first byte that is not UTF-8, or -1 when the line is valid UTF-8. */
  invalidAt: number;
}

/** A line that long is no endpoint: the file is not an export (and memory stays bounded). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);

/**
 * Lines of UTF-8 text (LF or CRLF), numbered from 1, split as the bytes arrive. The complete lines of a chunk are
 * checked at once (a native check) and decoded together; only a chunk holding an invalid byte is looked at line by line.
 */
export async function* lines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<TextLine> {
  let rest: Buffer = EMPTY;
  let line = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    const all = rest.length ? Buffer.concat([rest, bytes]) : bytes;
    const last = all.lastIndexOf(LF);
    if (last === -1) {
      if (all.length > MAX_LINE_BYTES)
        throw new Error(`line ${line + 1} is longer than ${MAX_LINE_BYTES / 1048576} MB`);
      rest = all;
      continue;
    }
    const whole = all.subarray(0, last + 1);
    if (isUtf8(whole)) {
      const text = whole.toString("utf8");
      for (let start = 0, nl = text.indexOf("\n"); nl !== -1; start = nl + 1, nl = text.indexOf("\n", start)) {
        const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
        yield { line: ++line, text: text.slice(start, end), invalidAt: -1 };
      }
    } else {
      for (let start = 0, nl = whole.indexOf(LF); nl !== -1; start = nl + 1, nl = whole.indexOf(LF, start))
        yield { line: ++line, ...decoded(whole.subarray(start, nl > start && whole[nl - 1] === CR ? nl - 1 : nl)) };
    }
    rest = Buffer.from(all.subarray(last + 1));
  }
  if (rest.length) yield { line: ++line, ...decoded(rest[rest.length - 1] === CR ? rest.subarray(0, -1) : rest) };
}

function decoded(bytes: Buffer): { text: string; invalidAt: number } {
  return { text: bytes.toString("utf8"), invalidAt: isUtf8(bytes) ? -1 : firstInvalidUtf8(bytes) };
}

/** Offset of the first byte of `b` that does not start a valid UTF-8 sequence (RFC 3629: no overlongs or surrogates). */
export function firstInvalidUtf8(b: Uint8Array): number {
  for (let i = 0; i < b.length;) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (n === 0 || i + n >= b.length) return i; // not a lead byte, or its sequence is cut short
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      if ((b[i + k] & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (b[i + k] & 0x3f);
    }
    const min = n === 1 ? 0x80 : n === 2 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return -1;
}

/** Appends text to a file in ~1 MB writes. */
export class BufferedFile {
  private fd: number | undefined;
  private buffer = "";
  constructor(file: string) {
    this.fd = fs.openSync(file, "w");
  }
  write(text: string) {
    this.buffer += text;
    if (this.buffer.length > 1 << 20) this.flush();
  }
  close() {
    if (this.fd === undefined) return;
    this.flush();
    fs.closeSync(this.fd);
    this.fd = undefined;
  }
  /** Writes what is buffered, so that the file holds everything written so far. */
  flush() {
    if (this.buffer === "" || this.fd === undefined) return;
    fs.writeSync(this.fd, this.buffer);
    this.buffer = "";
  }
}
