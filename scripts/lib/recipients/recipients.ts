/**
 * Streams a recipient CSV (RFC 4180, csv.ts: header row, BOM, quoted fields with commas, quotes and newlines).
 * Yields each record with the line it starts on; a syntax error stops with the file and line.
 *
 * Line endings: LF or CRLF, or CR alone (old Excel for Mac), told apart by the first line; CR CR LF, and an LF outside
 * quotes in a CR file, stop with the line (they cannot be read exactly). Encoding: UTF-8, checked byte by byte — an
 * invalid sequence (a Latin-1 export read as UTF-8 would turn "Zoë" into "Zo\uFFFD" and could make two ids one) stops
 * with the file, line and byte offset; "latin1" reads such exports, and refuses a file that is valid UTF-8 with
 * non-ASCII characters (read as Latin-1, "Zoë" would become "ZoÃ«").
 */
import { isAscii, isUtf8 } from "buffer";
import * as fs from "fs";
import { pipeline, Readable, Transform, TransformCallback } from "stream";
import { CsvReader, CsvRecord, MAX_RECORD_BYTES } from "./csv";
import { InputError } from "../../../infra/core/errors";
import { CsvProblem, CsvSyntaxError } from "./csv";
import { fileProblem } from "../text/input-files";

export { CsvRecord } from "./csv";

export interface RecipientCsv {
  header: string[];
  /** Column index by header name. */
  column(name: string): number | undefined;
  records: AsyncIterable<CsvRecord>;
}

/** csv-parse options that read what csv.ts reads: the benchmark's bare pass and the tests' reference use them. */
export const CSV_OPTIONS = { bom: true, record_delimiter: ["\r\n", "\n"], relax_column_count: true };

export type CsvEncoding = "utf8" | "latin1";
export const CSV_ENCODINGS: CsvEncoding[] = ["utf8", "latin1"];

const ONE_LINE_ENDING =
  "end every line in LF, CRLF or CR alone, one kind throughout (e.g. dos2unix converts a file to LF)";

/** What the reader's errors mean for someone fixing the file. */
const CSV_ERRORS: Record<CsvProblem, string> = {
  "quote-not-closed": "the file ends inside a quoted field: the quote opened on this line is never closed",
  "invalid-opening-quote": "a quote inside an unquoted field (quote the whole field and double the quotes in it)",
  "invalid-closing-quote": "a closing quote is followed by more characters (double quotes inside a quoted field)",
  "record-too-large": `a record over ${MAX_RECORD_BYTES / 1048576} MB starts on this line (a quote opened and never closed?)`,
  "utf8-bom-in-latin1":
    "the file starts with a UTF-8 byte order mark: it is UTF-8, not Latin-1 (leave out --encoding latin1)",
  "cr-cr-lf": `the line ends in CR CR LF, which reads as a stray CR or an extra line; ${ONE_LINE_ENDING}`,
  "lf-in-cr-file": `a line feed (LF) outside quotes in a file whose lines end in CR alone (a line ending in CR CR LF?); quote the field, or ${ONE_LINE_ENDING}`,
  "cr-in-lf-file": `a carriage return (CR) outside quotes that does not end the line, in a file whose lines end in LF or CRLF; quote the field, or ${ONE_LINE_ENDING}`,
};

/**
 * Opens `file`; throws InputError (one line, file and line) when it cannot be read or is not CSV. With `input` (a
 * list streamed from elsewhere, e.g. S3), reads that stream once instead and `file` only names it in messages; an
 * error of the stream itself (a stalled download) comes through as it is.
 */
export async function openRecipientCsv(
  file: string,
  encoding: CsvEncoding = "utf8",
  input?: Readable,
): Promise<RecipientCsv> {
  const { source, lineBreak } = input ? await openStream(file, input) : await openFile(file);
  const check = encoding === "utf8" ? new Utf8Check(file, lineBreak) : new NotUtf8Check(file, lineBreak);
  pipeline(source, check, () => undefined);
  /** Closes the file, or the stream given and the one reading it. */
  const stop = () => {
    source.destroy();
    input?.destroy();
  };
  const reading = readRecords(file, check, new CsvReader({ lineBreak, encoding }), stop);

  const first = await reading.next();
  if (!first) throw new InputError(`${file}: empty file (expected a header row: id,email,timezone,...)`);
  refuseOtherSeparators(file, first.fields);
  // Spaces and tabs around a name are trimmed; any other invisible character stays, for the header checks to show.
  const header = first.fields.map((h) => h.replace(/^[ \t]+|[ \t]+$/g, ""));
  const index = new Map(header.map((h, i) => [h, i]));
  return { header, column: (name) => index.get(name), records: recordIterable(reading, stop) };
}

/**
 * A header read as one field that holds semicolons or tabs is a list saved with another separator (a spreadsheet's
 * "CSV" in a locale whose decimal mark is a comma, or a TSV): said as such, not as missing columns.
 */
function refuseOtherSeparators(file: string, header: string[]): void {
  if (header.length !== 1) return;
  const count = (c: string) => header[0].split(c).length - 1;
  const [semicolons, tabs] = [count(";"), count("\t")];
  if (!semicolons && !tabs) return;
  throw new InputError(
    `${file}:1: the header is separated by ${semicolons >= tabs ? '";"' : "tabs"}, not commas: sendtime reads comma-separated CSV (RFC 4180); save the list as CSV with commas (a spreadsheet's "CSV UTF-8 (comma-delimited)")`,
  );
}

/** A stream given: its head, peeked, tells the line endings; the stream to read then starts with that head again. */
async function openStream(file: string, input: Readable): Promise<{ source: Readable; lineBreak: "\n" | "\r" }> {
  const head = await peek(input, 65_536);
  return { source: head.stream, lineBreak: firstLineBreak(file, head.bytes, () => input.destroy()) };
}

/** A file: it must be one (not a folder, readable); its head tells the line endings. */
async function openFile(file: string): Promise<{ source: Readable; lineBreak: "\n" | "\r" }> {
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) throw new InputError(`${file}: not a file`);
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`${file}: ${fileProblem(e)}`);
  }
  const lineBreak = firstLineBreak(file, await fileHead(file));
  return { source: fs.createReadStream(file), lineBreak };
}

/** Records as the checked bytes arrive: `take` what the chunks read so far hold, `next` reads more when needed. */
interface RecordReading {
  /** The next record the chunks read so far hold (blank lines skipped); undefined at the end; null to read more. */
  take(): CsvRecord | undefined | null;
  /** The next record, reading chunks until one is complete; undefined at the end. */
  next(): Promise<CsvRecord | undefined>;
}

function readRecords(file: string, bytes: Readable, reader: CsvReader, stop: () => void): RecordReading {
  const chunks = bytes[Symbol.asyncIterator]();
  const malformed = (e: unknown): unknown => {
    if (!(e instanceof CsvSyntaxError)) return e;
    stop();
    return new InputError(`${file}:${e.line}: malformed CSV: ${CSV_ERRORS[e.problem]}`);
  };
  let ended = false;
  const take = (): CsvRecord | undefined | null => {
    for (;;) {
      let rec: CsvRecord | null;
      try {
        rec = ended ? reader.end() : reader.read();
      } catch (e) {
        throw malformed(e);
      }
      if (rec === null) return ended ? undefined : null;
      if (rec.fields.length === 1 && rec.fields[0] === "") continue; // a blank line
      return rec;
    }
  };
  /** One promise per chunk, not per record: records are taken synchronously while the chunk has them. */
  const next = async (): Promise<CsvRecord | undefined> => {
    for (;;) {
      const rec = take();
      if (rec !== null) return rec;
      let r: IteratorResult<unknown>;
      try {
        r = await chunks.next();
      } catch (e) {
        stop(); // not UTF-8, or the stream failed: the stream given is closed too
        throw e;
      }
      if (r.done) ended = true;
      else
        try {
          reader.feed(r.value as Buffer);
        } catch (e) {
          throw malformed(e);
        }
    }
  };
  return { take, next };
}

/** The records after the header as an async iterable; a reader that stops early (an error in its loop) calls `stop`. */
function recordIterable(reading: RecordReading, stop: () => void): AsyncIterable<CsvRecord> {
  const { take, next } = reading;
  return {
    [Symbol.asyncIterator]: () => ({
      next: (): Promise<IteratorResult<CsvRecord>> => {
        let rec: CsvRecord | undefined | null;
        try {
          rec = take();
        } catch (e) {
          return Promise.reject(e);
        }
        if (rec) return Promise.resolve({ value: rec, done: false });
        if (rec === undefined) return Promise.resolve({ value: undefined, done: true });
        return next().then((r) => (r ? { value: r, done: false } : { value: undefined, done: true }));
      },
      // A reader that stops early (an error in its loop) closes the file or stream.
      return: (): Promise<IteratorResult<CsvRecord>> => {
        stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    }),
  };
}

/**
 * Lines in a file, whatever their endings (LF, CRLF and CR alone count one each): an upper bound on its records (a
 * quoted field may span lines). One buffer, reused.
 */
export async function countLines(file: string): Promise<number> {
  const handle = await fs.promises.open(file, "r");
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let n = 0;
    /** Whether the previous read ended in CR: an LF starting this one is the same line break. */
    let crBefore = false;
    for (let read = 1; read > 0;) {
      ({ bytesRead: read } = await handle.read(chunk, 0, chunk.length, null));
      if (read === 0) break;
      for (let i = chunk.indexOf(LF); i !== -1 && i < read; i = chunk.indexOf(LF, i + 1)) n++;
      // A CR counts unless an LF follows it (CRLF, counted above).
      for (let i = chunk.indexOf(CR); i !== -1 && i < read; i = chunk.indexOf(CR, i + 1))
        if (i + 1 === read || chunk[i + 1] !== LF) n++;
      if (crBefore && chunk[0] === LF) n--; // that CR was counted alone at the end of the previous read
      crBefore = chunk[read - 1] === CR;
    }
    return n + 1;
  } finally {
    await handle.close();
  }
}

const CR = 0x0d;
const LF = 0x0a;

/** The first 64 KB of a file. */
async function fileHead(file: string): Promise<Buffer> {
  const handle = await fs.promises.open(file, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(65_536), 0, 65_536, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * The line break of a file, from its first line (`head`, the start of the file): CR when that line ends in CR alone,
 * else LF (CRLF included). A first line ending in CR CR LF is refused (InputError, line 1; `stop` closes the input
 * first): read with either, every line would keep a stray CR or gain an empty line and a leading LF.
 */
function firstLineBreak(file: string, head: Buffer, stop?: () => void): "\n" | "\r" {
  const cr = head.indexOf(CR);
  const lf = head.indexOf(LF);
  if (cr !== -1 && head[cr + 1] === CR && head[cr + 2] === LF && (lf === -1 || lf > cr)) {
    stop?.();
    throw new InputError(`${file}:1: malformed CSV: ${CSV_ERRORS["cr-cr-lf"]}`);
  }
  return cr !== -1 && (lf === -1 || lf > cr + 1) && (cr + 1 < head.length || lf === -1) ? "\r" : "\n";
}

/** The first `n` bytes of `stream` (fewer if it ends sooner), and a stream that still yields every byte. */
async function peek(stream: Readable, n: number): Promise<{ bytes: Buffer; stream: Readable }> {
  const chunks: Buffer[] = [];
  let length = 0;
  const iterator = stream[Symbol.asyncIterator]();
  let done = false;
  while (length < n) {
    const r = await iterator.next();
    if (r.done) {
      done = true;
      break;
    }
    const chunk = Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value);
    chunks.push(chunk);
    length += chunk.length;
  }
  const rest = async function* () {
    yield* chunks;
    if (done) return;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) yield r.value as Buffer;
  };
  return { bytes: Buffer.concat(chunks).subarray(0, n), stream: Readable.from(rest(), { objectMode: false }) };
}

/**
 * A pass-through scan of a list's bytes as UTF-8, a chunk at a time: a character split across two chunks waits in
 * `carry` for the next one; `lines` counts the list's lines (by the first byte of its line break) as far as read.
 */
abstract class Utf8Scan extends Transform {
  protected carry = Buffer.alloc(0);
  protected lines = 1;
  protected readonly breakByte: number;

  constructor(
    protected readonly file: string,
    lineBreak: string,
  ) {
    super();
    this.breakByte = lineBreak.charCodeAt(0);
  }

  /**
   * The carried bytes and `chunk` up to their last whole character, and whether that is UTF-8; when it is, what
   * follows (a character cut short) is carried to the next chunk.
   */
  protected nextWhole(chunk: Buffer): { whole: Buffer; valid: boolean } {
    const bytes = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = completeLength(bytes);
    const whole = bytes.subarray(0, cut);
    const valid = isUtf8(whole);
    if (valid) this.carry = Buffer.from(bytes.subarray(cut));
    return { whole, valid };
  }
}

/**
 * Passes bytes through unchanged, failing at the first byte that is not UTF-8. A character split across two chunks
 * is held back until the next one.
 */
class Utf8Check extends Utf8Scan {
  private offset = 0;

  _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const { whole, valid } = this.nextWhole(chunk);
    if (!valid) return done(this.failure(whole));
    this.count(whole);
    done(null, whole);
  }

  _flush(done: TransformCallback): void {
    if (this.carry.length) return done(this.failure(this.carry));
    done();
  }

  private count(bytes: Buffer): void {
    for (let i = bytes.indexOf(this.breakByte); i !== -1; i = bytes.indexOf(this.breakByte, i + 1)) this.lines++;
    this.offset += bytes.length;
  }

  private failure(bytes: Buffer): InputError {
    const at = firstInvalidUtf8(bytes);
    this.count(bytes.subarray(0, at));
    return new InputError(
      `${this.file}:${this.lines}: not UTF-8 (byte offset ${this.offset}); for a Latin-1 export give --encoding latin1`,
    );
  }
}

/**
 * For a file read as Latin-1: passes bytes through unchanged, and fails at the end when the whole file is valid UTF-8
 * with at least one non-ASCII character — UTF-8 read as Latin-1 ("Zoë" as "ZoÃ«"). A real Latin-1 file with accents is
 * almost never valid UTF-8 (an accented capital followed by a symbol or a C1 control, at every accent), so it is read;
 * one that is valid UTF-8 by chance can be converted to UTF-8 first. Checking stops at the first chunk that is not
 * UTF-8: an ordinary Latin-1 file costs one isUtf8 call.
 */
class NotUtf8Check extends Utf8Scan {
  /** Whether every byte so far is UTF-8 (a character split across chunks waits in `carry`). */
  private utf8 = true;
  /** The line of the first non-ASCII byte, once seen; lines counted until then. */
  private firstNonAsciiLine?: number;

  _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.utf8) {
      const { whole, valid } = this.nextWhole(chunk);
      if (!valid) this.utf8 = false;
      else if (this.firstNonAsciiLine === undefined) this.findNonAscii(whole);
    }
    done(null, chunk);
  }

  _flush(done: TransformCallback): void {
    if (!this.utf8 || this.carry.length || this.firstNonAsciiLine === undefined) return done();
    done(
      new InputError(
        `${this.file}:${this.firstNonAsciiLine}: --encoding latin1, but the file looks like UTF-8: it is valid UTF-8 with non-ASCII characters from this line on, which Latin-1 would misread ("Zoë" as "ZoÃ«"); leave out --encoding latin1 (if it really is Latin-1, convert it first: iconv -f LATIN1 -t UTF-8)`,
      ),
    );
  }

  /** Counts lines up to the first non-ASCII byte of `bytes`, or through the end when there is none. */
  private findNonAscii(bytes: Buffer): void {
    const at = isAscii(bytes) ? bytes.length : bytes.findIndex((b) => b >= 0x80);
    for (let i = bytes.indexOf(this.breakByte); i !== -1 && i < at; i = bytes.indexOf(this.breakByte, i + 1))
      this.lines++;
    if (at < bytes.length) this.firstNonAsciiLine = this.lines;
  }
}

/** Length of `bytes` without a trailing character that is cut short (its remaining bytes are in the next chunk). */
function completeLength(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: keep looking for the lead
    const needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** Offset of the first byte where `bytes` stops being UTF-8. */
function firstInvalidUtf8(bytes: Buffer): number {
  let lo = 0;
  let hi = bytes.length;
  // The longest valid prefix, by bisection (a prefix may end mid-character, so allow up to 3 bytes of slack).
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (isUtf8(bytes.subarray(0, completeLength(bytes.subarray(0, mid))))) lo = mid;
    else hi = mid - 1;
  }
  return completeLength(bytes.subarray(0, lo));
}
