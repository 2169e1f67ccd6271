/**
 * An RFC 4180 CSV reader over bytes, for recipient lists of millions of rows: records are separated by a line break
 * outside quotes (LF or CRLF, or CR alone for old Excel for Mac), fields by commas; a field in double quotes may hold
 * commas, line breaks and doubled quotes (""). A UTF-8 byte order mark at the start is dropped. Each record comes with
 * the line it starts on (1-based), exact also after quoted line breaks. A blank line is a record of one empty field.
 *
 * It reads what csv-parse reads with { bom, record_delimiter, relax_column_count } and fails where it fails (a test
 * compares the two on thousands of generated inputs), and faster (see docs/benchmarks.md): a record's end is found
 * with native byte searches (a line break outside quotes: quotes toggle, a doubled one twice), the record is decoded
 * once, and split with native string searches. A record without a quote is one `split`.
 *
 * Errors name the line: a quote inside an unquoted field, a closing quote followed by something other than a comma or
 * the line break, and the end of the file inside a quoted field (the line the quote opened on). Line endings that mix
 * the kinds cannot be read exactly, so they are errors too: a line ending in CR CR LF and any other CR outside quotes
 * that is not the CR of a CRLF (LF mode: csv-parse keeps it in the field, `2\r` as an id), and an LF outside quotes in
 * a file read with CR alone (csv-parse keeps it in the field: the LF of a CR CR LF would start the next record's
 * first field). A record over
 * MAX_RECORD_BYTES (a quote never closed, in practice) stops the read, so memory stays bounded. Where csv-parse does
 * otherwise, on purpose: a NUL byte after a closing quote is an error here (csv-parse ends the field there and keeps
 * the NUL), a file that starts with a UTF-8 byte order mark cannot be read as Latin-1 (csv-parse reads it as UTF-8
 * without checking it), and the mixed line endings above.
 */
import { InputError } from "../../../infra/core/errors";

export type CsvProblem =
  | "invalid-opening-quote"
  | "invalid-closing-quote"
  | "quote-not-closed"
  | "record-too-large"
  | "utf8-bom-in-latin1"
  | "cr-cr-lf"
  | "lf-in-cr-file"
  | "cr-in-lf-file";

/** A CSV the reader cannot read exactly, at `line` (1-based; the record's first line). */
export class CsvSyntaxError extends InputError {
  constructor(
    readonly problem: CsvProblem,
    readonly line: number,
  ) {
    super(`${problem} on line ${line}`);
  }
}

export interface CsvRecord {
  /** 1-based line where the record starts (the header is line 1). */
  line: number;
  fields: string[];
}

/** No recipient row is anywhere near this; a record this large is a quote opened and never closed. */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;
const BOM = [0xef, 0xbb, 0xbf];
const EMPTY = Buffer.alloc(0);

/**
 * buffer.toString(encoding, start, end) without its argument checks: Node's own utf8Slice and latin1Slice, which
 * toString calls (undocumented, in every Node release; toString if they are ever gone).
 */
type Slicer = (this: Buffer, start: number, end: number) => string;
const SLICERS = Buffer.prototype as unknown as { utf8Slice?: Slicer; latin1Slice?: Slicer };
const utf8Slice: Slicer =
  SLICERS.utf8Slice ??
  function (start, end) {
    return this.toString("utf8", start, end);
  };
const latin1Slice: Slicer =
  SLICERS.latin1Slice ??
  function (start, end) {
    return this.toString("latin1", start, end);
  };

export class CsvReader {
  private readonly breakByte: number;
  private readonly breakChar: string;
  private readonly latin1: boolean;
  /** Decodes a record's bytes: utf8Slice or latin1Slice. */
  private readonly decode: Slicer;
  /** The next record's first line. */
  private line = 1;
  /** Bytes of a record not complete yet (its line break is in a later chunk), and whether they end inside quotes. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private inQuote = false;
  /** Whether the start of the input has been checked for a byte order mark (it needs 3 bytes). */
  private started = false;
  /** The chunk being read, and where its next record starts. */
  private chunk: Buffer = EMPTY;
  private at = 0;
  /** Index of the next quote at or after the scan position in the chunk being read; -1 when none is left. */
  private quoteAt = -1;
  /** Index of the next line break at or after the scan position in the chunk being read; -1 when none is left. */
  private breakAt = -1;

  constructor(options: { lineBreak: "\n" | "\r"; encoding: "utf8" | "latin1" }) {
    this.breakChar = options.lineBreak;
    this.breakByte = options.lineBreak.charCodeAt(0);
    this.latin1 = options.encoding === "latin1";
    this.decode = this.latin1 ? latin1Slice : utf8Slice;
  }

  /** Takes the next chunk of input; read() then returns its records. Call once read() has returned null. */
  feed(chunk: Buffer): void {
    if (!this.started) {
      const head = this.pendingBytes ? Buffer.concat([...this.pending, chunk]) : chunk;
      this.pending = [];
      this.pendingBytes = 0;
      if (head.length < BOM.length && BOM.slice(0, head.length).every((b, i) => head[i] === b)) return this.keep(head);
      this.started = true;
      const bom = BOM.every((b, i) => head[i] === b);
      // (csv-parse decodes such a file as UTF-8 whatever it was told, unchecked.)
      if (bom && this.latin1) throw new CsvSyntaxError("utf8-bom-in-latin1", 1);
      chunk = bom ? head.subarray(BOM.length) : head;
    }
    this.chunk = chunk;
    this.at = 0;
    this.quoteAt = chunk.indexOf(QUOTE);
    this.breakAt = chunk.indexOf(this.breakByte);
  }

  /**
   * The next record the input fed so far completes, or null when it needs more (feed, or end when there is no more).
   * Throws CsvSyntaxError at a malformed record. Records are read one at a time: a large chunk is not turned into
   * hundreds of live records at once.
   */
  read(): CsvRecord | null {
    const start = this.at;
    const end = this.recordEnd(this.chunk, start);
    if (end === -1) {
      this.keep(start === 0 ? this.chunk : this.chunk.subarray(start));
      this.chunk = EMPTY;
      this.at = 0;
      this.quoteAt = -1;
      this.breakAt = -1;
      return null;
    }
    this.at = end + 1;
    if (!this.pendingBytes) return this.record(this.chunk, start, end);
    const whole = Buffer.concat([...this.pending, this.chunk.subarray(start, end)]);
    this.pending = [];
    this.pendingBytes = 0;
    return this.record(whole, 0, whole.length);
  }

  /** The last record, which need not end in a line break; null when there is none. Call once read() returned null. */
  end(): CsvRecord | null {
    const bytes = this.started && this.pendingBytes ? Buffer.concat(this.pending) : EMPTY;
    // (Not started: fewer than 3 bytes in all, the start of a byte order mark and nothing else.)
    this.pending = [];
    this.pendingBytes = 0;
    return bytes.length ? this.record(bytes, 0, bytes.length, true) : null;
  }

  /**
   * Index of the line break ending the record that continues at `from` (quotes carried in inQuote), or -1. The next
   * quote and the next line break are each searched for again only once the scan has passed them: a chunk is read in
   * one pass, however many quotes a line holds.
   */
  private recordEnd(chunk: Buffer, from: number): number {
    let at = from;
    for (;;) {
      if (this.quoteAt !== -1 && this.quoteAt < at) this.quoteAt = chunk.indexOf(QUOTE, at);
      if (this.inQuote) {
        if (this.quoteAt === -1) return -1;
        at = this.quoteAt + 1;
        this.inQuote = false;
        continue;
      }
      if (this.breakAt !== -1 && this.breakAt < at) this.breakAt = chunk.indexOf(this.breakByte, at);
      if (this.quoteAt === -1 || (this.breakAt !== -1 && this.breakAt < this.quoteAt)) return this.breakAt;
      at = this.quoteAt + 1;
      this.inQuote = true;
    }
  }

  private keep(rest: Buffer): void {
    if (!rest.length) return;
    // A chunk may be a view of a larger buffer the stream reuses: keep a copy.
    this.pending.push(Buffer.from(rest));
    this.pendingBytes += rest.length;
    if (this.pendingBytes > MAX_RECORD_BYTES) {
      // A stray quote earlier in the record is the real error (it opened what never closes): named as such.
      const bytes = Buffer.concat(this.pending);
      try {
        this.quotedFields(this.decode.call(bytes, 0, bytes.length), this.line);
      } catch (e) {
        if (!(e instanceof CsvSyntaxError) || e.problem !== "quote-not-closed") throw e;
      }
      throw new CsvSyntaxError("record-too-large", this.line);
    }
  }

  /** The record in bytes [start, end) of `bytes` (without its line break). */
  private record(bytes: Buffer, start: number, end: number, last = false): CsvRecord {
    // CRLF: the CR belongs to the line break (outside quotes: a quoted field ends in a quote).
    const crlf = this.breakByte === LF && end > start && bytes[end - 1] === CR && !last;
    if (crlf) end--;
    const text = this.decode.call(bytes, start, end);
    const line = this.line;
    if (this.breakByte === CR && text.indexOf("\n") !== -1) this.refuseUnquotedLf(text, line);
    // Any other CR outside quotes is neither data nor a line break anyone meant (a second CR before the CRLF: cr-cr-lf).
    if (this.breakByte === LF && text.indexOf("\r") !== -1) this.refuseUnquotedCr(text, line, crlf);
    if (text.indexOf('"') === -1) {
      this.line++;
      return { line, fields: text.split(",") };
    }
    const fields = this.quotedFields(text, line);
    for (let i = text.indexOf(this.breakChar); i !== -1; i = text.indexOf(this.breakChar, i + 1)) this.line++;
    this.line++;
    return { line, fields };
  }

  /** CR mode: throws at an LF outside quotes in the record's text (quotes toggle, a doubled one twice). */
  private refuseUnquotedLf(text: string, line: number): void {
    let quoted = false;
    let n = line;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) quoted = !quoted;
      else if (c === CR) n++;
      else if (c === LF && !quoted) throw new CsvSyntaxError("lf-in-cr-file", n);
    }
  }

  /**
   * LF mode: throws at a CR outside quotes in the record's text (its line break's CR already taken off; `crlf` when
   * there was one): cr-cr-lf when it is the CR just before that CRLF, cr-in-lf-file anywhere else.
   */
  private refuseUnquotedCr(text: string, line: number, crlf: boolean): void {
    let quoted = false;
    let n = line;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) quoted = !quoted;
      else if (c === LF) n++;
      else if (c === CR && !quoted)
        throw new CsvSyntaxError(
          crlf && i === text.length - 1 ? "cr-cr-lf" : "cr-in-lf-file",
          crlf && i === text.length - 1 ? line : n,
        );
    }
  }

  /** The fields of a record that holds a quote. */
  private quotedFields(text: string, line: number): string[] {
    const fields: string[] = [];
    const lineAt = (i: number) => {
      let n = line;
      for (let b = text.indexOf(this.breakChar); b !== -1 && b < i; b = text.indexOf(this.breakChar, b + 1)) n++;
      return n;
    };
    let nextQuote = text.indexOf('"');
    for (let at = 0; ;) {
      if (at === nextQuote) {
        let value = "";
        for (let from = at + 1; ;) {
          const q = text.indexOf('"', from);
          if (q === -1) throw new CsvSyntaxError("quote-not-closed", lineAt(at));
          if (text.charCodeAt(q + 1) === QUOTE) {
            value += text.slice(from, q + 1);
            from = q + 2;
            continue;
          }
          fields.push(value + text.slice(from, q));
          at = q + 1;
          break;
        }
        nextQuote = text.indexOf('"', at);
        if (at === text.length) return fields;
        if (text.charCodeAt(at) !== 0x2c) throw new CsvSyntaxError("invalid-closing-quote", lineAt(at));
        at++;
        continue;
      }
      const comma = text.indexOf(",", at);
      const end = comma === -1 ? text.length : comma;
      if (nextQuote !== -1 && nextQuote < end) throw new CsvSyntaxError("invalid-opening-quote", lineAt(nextQuote));
      fields.push(text.slice(at, end));
      if (comma === -1) return fields;
      at = comma + 1;
    }
  }
}
