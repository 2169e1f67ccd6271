/**
 * Streams a recipient CSV (RFC 4180 via csv-parse: header row, BOM, CRLF, quoted fields with commas, quotes and
 * newlines). Yields each record with the line it starts on; a syntax error stops with the file and line.
 */
import * as fs from "fs";
import { parse } from "csv-parse";
import { InputError } from "./errors";

export interface CsvRecord {
  /** 1-based line where the record starts (the header is line 1). */
  line: number;
  fields: string[];
}

export interface RecipientCsv {
  header: string[];
  /** Column index by header name. */
  column(name: string): number | undefined;
  records: AsyncIterable<CsvRecord>;
}

/** csv-parse options shared with the benchmark's bare pass, so the comparison is like for like. */
export const CSV_OPTIONS = { bom: true, record_delimiter: ["\r\n", "\n"], relax_column_count: true };

/** What csv-parse's errors mean for someone fixing the file. */
const CSV_ERRORS: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: "the file ends inside a quoted field: a quote opened on or before this line is never closed",
  INVALID_OPENING_QUOTE: "a quote inside an unquoted field (quote the whole field and double the quotes in it)",
  CSV_INVALID_CLOSING_QUOTE: "a closing quote is followed by more characters (double quotes inside a quoted field)",
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: "a closing quote is followed by more characters (double quotes inside a quoted field)",
};

/** Opens `file`; throws InputError (one line, file and line) when it cannot be read or is not CSV. */
export async function openRecipientCsv(file: string): Promise<RecipientCsv> {
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) throw new InputError(`${file}: not a file`);
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  // Line numbers are counted here rather than with csv-parse's `info` option, which costs a third more time.
  const parser = fs.createReadStream(file).pipe(parse(CSV_OPTIONS));
  const iterator = parser[Symbol.asyncIterator]() as AsyncIterator<string[]>;
  let line = 1;
  const next = async (): Promise<CsvRecord | undefined> => {
    for (;;) {
      let r;
      try {
        r = await iterator.next();
      } catch (e) {
        // csv-parse's line is exact; records parsed ahead of the error are dropped by the stream, so ours may lag.
        const err = e as Error & { code?: string; lines?: number };
        const what = CSV_ERRORS[err.code ?? ""] ?? err.message.split("\n")[0];
        throw new InputError(`${file}:${err.lines ?? line}: malformed CSV: ${what}`);
      }
      if (r.done) return undefined;
      const fields = r.value;
      const start = line;
      line += 1;
      if (fields.length === 1 && fields[0] === "") continue; // a blank line
      for (const f of fields) for (let i = f.indexOf("\n"); i !== -1; i = f.indexOf("\n", i + 1)) line++;
      return { line: start, fields };
    }
  };

  const first = await next();
  if (!first) throw new InputError(`${file}: empty file (expected a header row: id,email,timezone,...)`);
  const header = first.fields.map((h) => h.trim());
  const index = new Map(header.map((h, i) => [h, i]));
  return {
    header,
    column: (name) => index.get(name),
    records: {
      async *[Symbol.asyncIterator]() {
        for (let rec = await next(); rec; rec = await next()) yield rec;
      },
    },
  };
}

/** Lines in a file: an upper bound on its records (a quoted field may span lines). */
export async function countLines(file: string): Promise<number> {
  let n = 0;
  for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
  }
  return n + 1;
}
