/**
 * Streams a Pinpoint endpoint export (newline-delimited JSON, each file plain or gzip, detected by its first bytes)
 * into a sendtime recipient CSV and a skipped file, with memory that barely grows with the export: the only state
 * per endpoint is the ids written, in the launcher's exact compact set (CompactSeenKeys: 4.4 to 6.7 bytes an id in
 * memory, the ids themselves in a temporary file), to skip later duplicates of a user.
 *
 * The CSV header depends on every attribute name in the export, so rows go first to a temporary file (JSON arrays
 * by attribute position) and are written out as CSV once the names are known. All files are written under temporary
 * names and renamed at the end: a failed run leaves no half-written recipient list.
 */
import * as fs from "fs";
import * as path from "path";
import { Readable } from "stream";
import { StringDecoder } from "string_decoder";
import { createGunzip } from "zlib";
import { UsageError } from "../cli/run";
import { AttributeSource, columnNames, CONTROL_COLUMNS, endpointOutcome, PinpointEndpoint, SkipReason } from "./pinpoint-endpoints";
import { csvField, reportField } from "./csv-fields";
import { CompactSeenKeys } from "./seen-keys";
import { canonicalZone } from "../../../infra/rules/send-time";

/** One file of the export: a local file or an S3 object. `open` gives its bytes as stored (gzip or not). */
export interface ExportSource {
  name: string;
  open(): Promise<Readable>;
}

export interface ImportOptions {
  sources: ExportSource[];
  outDir: string;
  separator: string;
  progress?: (text: string) => void;
}

export interface ImportSummary {
  files: number;
  endpoints: number;
  recipients: number;
  idsFrom: { UserId: number; Id: number };
  skipped: { total: number; byReason: Partial<Record<SkipReason, number>> };
  zones: { missing: number; unknown: number };
  columns: string[];
  output: { recipients: string; skipped: string };
}

const PROGRESS_EVERY = 250_000;

export async function importEndpoints(o: ImportOptions): Promise<ImportSummary> {
  fs.mkdirSync(o.outDir, { recursive: true });
  const output = { recipients: path.join(o.outDir, "recipients.csv"), skipped: path.join(o.outDir, "skipped.csv") };
  const run = new ImportRun(o, output);
  try {
    for (const source of o.sources) for await (const { line, endpoint } of endpointsOf(source)) run.take(source.name, line, endpoint);
    return await run.finish();
  } finally {
    run.discard();
  }
}

/** The state of one import: counts, the attribute positions seen so far, the ids written, the open files. */
class ImportRun {
  readonly summary: ImportSummary;
  private readonly rowsFile: string;
  private readonly rows: BufferedFile;
  private readonly skipped: BufferedFile;
  private readonly keys = new Map<string, number>();
  private readonly keyList: { source: AttributeSource; name: string }[] = [];
  /** Each id written, with its row number in recipients.csv (1 = the first row after the header). */
  private readonly written = new CompactSeenKeys();

  constructor(
    private readonly o: ImportOptions,
    private readonly output: ImportSummary["output"],
  ) {
    this.rowsFile = path.join(o.outDir, "recipients.rows.partial");
    this.rows = new BufferedFile(this.rowsFile);
    this.skipped = new BufferedFile(output.skipped + ".partial");
    this.skipped.write("file,line,endpoint_id,user_id,reason,detail\n");
    this.summary = {
      files: o.sources.length,
      endpoints: 0,
      recipients: 0,
      idsFrom: { UserId: 0, Id: 0 },
      skipped: { total: 0, byReason: {} },
      zones: { missing: 0, unknown: 0 },
      columns: [],
      output,
    };
  }

  take(file: string, line: number, endpoint: PinpointEndpoint) {
    const s = this.summary;
    if (++s.endpoints % PROGRESS_EVERY === 0) this.o.progress?.(`${s.endpoints.toLocaleString("en-US")} endpoints read`);
    const outcome = endpointOutcome(endpoint, this.o.separator);
    if ("skip" in outcome) return this.skip(file, line, endpoint, outcome.skip, outcome.detail);
    const r = outcome.recipient;
    // Only rows written count: an SMS or opted-out endpoint of a user does not keep the user's EMAIL endpoint out.
    const row = this.written.firstLineOrAdd(r.id, s.recipients + 1);
    if (row !== undefined) {
      if (r.idFrom === "Id") return this.skip(file, line, endpoint, "duplicate-id", `id ${r.id} already has row ${row}`);
      const detail = `user ${r.id} already has row ${row} (a user's first usable EMAIL endpoint in export order is kept)`;
      return this.skip(file, line, endpoint, "duplicate-user", detail);
    }
    s.recipients++;
    s.idsFrom[r.idFrom]++;
    if (r.timezone === "") s.zones.missing++;
    else if (canonicalZone(r.timezone) === undefined) s.zones.unknown++;
    const values: string[] = [r.id, r.email, r.timezone];
    for (const a of r.attributes) values[3 + this.position(a.source, a.name)] = a.value;
    this.rows.write(JSON.stringify(values) + "\n");
  }

  async finish(): Promise<ImportSummary> {
    this.rows.close();
    this.skipped.close();
    this.summary.columns = [...CONTROL_COLUMNS.slice(0, 3), ...columnNames(this.keyList)];
    await writeCsv(this.rowsFile, this.output.recipients + ".partial", this.summary.columns);
    fs.renameSync(this.output.recipients + ".partial", this.output.recipients);
    fs.renameSync(this.output.skipped + ".partial", this.output.skipped);
    return this.summary;
  }

  /** Closes and removes whatever is left under a temporary name (everything, when the import failed). */
  discard() {
    this.written.close();
    this.rows.close();
    this.skipped.close();
    for (const p of [this.rowsFile, this.output.recipients + ".partial", this.output.skipped + ".partial"]) fs.rmSync(p, { force: true });
  }

  private skip(file: string, line: number, e: PinpointEndpoint, reason: SkipReason, detail: string) {
    const s = this.summary.skipped;
    s.total++;
    s.byReason[reason] = (s.byReason[reason] ?? 0) + 1;
    // A report for people: values a spreadsheet would run as formulas are guarded (recipients.csv stays exact).
    const ids = [e.Id, e.User?.UserId].map((v) => reportField(typeof v === "string" ? v : ""));
    this.skipped.write(`${reportField(file)},${line},${ids.join(",")},${reason},${reportField(detail)}\n`);
  }

  private position(source: AttributeSource, name: string): number {
    const key = `${source}\u0000${name}`;
    let index = this.keys.get(key);
    if (index === undefined) {
      this.keys.set(key, (index = this.keyList.length));
      this.keyList.push({ source, name });
    }
    return index;
  }
}

/** The header, then each stored row padded to the header's width (rows stored before a new attribute are shorter). */
async function writeCsv(rowsFile: string, csvFile: string, columns: string[]) {
  const csv = new BufferedFile(csvFile);
  csv.write(columns.map(csvField).join(",") + "\n");
  for await (const { text } of lines(fs.createReadStream(rowsFile))) {
    const values = JSON.parse(text) as (string | null)[];
    let out = "";
    for (let i = 0; i < columns.length; i++) out += (i ? "," : "") + csvField(values[i] ?? "");
    csv.write(out + "\n");
  }
  csv.close();
}

/** The endpoints of one export file, with their line numbers; a line that is not a JSON object stops the import. */
export async function* endpointsOf(source: ExportSource): AsyncGenerator<{ line: number; endpoint: PinpointEndpoint }> {
  let stream: Readable;
  try {
    stream = await decompressIfGzip(await source.open());
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`${source.name}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let last = 0;
  try {
    for await (const { line, text } of lines(stream)) {
      last = line;
      if (text.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        throw new UsageError(`${source.name}:${line}: not JSON (${(e as Error).message}); an export has one endpoint object per line`);
      }
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw new UsageError(`${source.name}:${line}: not a JSON object; an export has one endpoint object per line`);
      yield { line, endpoint: value as PinpointEndpoint };
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const err = e as NodeJS.ErrnoException;
    const what = err.code === "Z_BUF_ERROR" || err.code === "Z_DATA_ERROR" ? `not a complete gzip file (${err.message})` : err.message;
    throw new UsageError(`${source.name}: read failed after line ${last}: ${what}`);
  }
}

/** The stream itself, or gunzipped when it starts with the gzip magic bytes 1f 8b (whatever the file is named). */
export async function decompressIfGzip(stream: Readable): Promise<Readable> {
  const head: Buffer[] = [];
  let size = 0;
  const iterator = stream[Symbol.asyncIterator]();
  while (size < 2) {
    const r = await iterator.next();
    if (r.done) break;
    const chunk = Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value);
    head.push(chunk);
    size += chunk.length;
  }
  const first = Buffer.concat(head);
  async function* rest() {
    if (first.length) yield first;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) yield r.value as Buffer;
  }
  const whole = Readable.from(rest(), { objectMode: false });
  if (first[0] !== 0x1f || first[1] !== 0x8b) return whole;
  const gunzip = createGunzip();
  whole.on("error", (e) => gunzip.destroy(e));
  return whole.pipe(gunzip);
}

/** Lines of UTF-8 text (LF or CRLF), numbered from 1, split as the bytes arrive. */
export async function* lines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<{ line: number; text: string }> {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  let line = 0;
  for await (const chunk of stream) {
    rest += typeof chunk === "string" ? chunk : decoder.write(chunk);
    let start = 0;
    for (let nl = rest.indexOf("\n"); nl !== -1; nl = rest.indexOf("\n", start)) {
      const end = nl > start && rest.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      yield { line: ++line, text: rest.slice(start, end) };
      start = nl + 1;
    }
    rest = rest.slice(start);
  }
  rest += decoder.end();
  if (rest !== "") yield { line: ++line, text: rest.endsWith("\r") ? rest.slice(0, -1) : rest };
}

/** Appends text to a file in ~1 MB writes. */
class BufferedFile {
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
  private flush() {
    fs.writeSync(this.fd!, this.buffer);
    this.buffer = "";
  }
}

/** A local export: one file, or every file under a directory (recursively, in path order), as an S3 prefix would be. */
export function localExportSources(target: string): ExportSource[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch (e) {
    throw new UsageError(`${target}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const files = stat.isDirectory()
    ? fs
        .readdirSync(target, { recursive: true, encoding: "utf8" })
        .map((f) => path.join(target, f))
        .filter((f) => !path.basename(f).startsWith(".") && fs.statSync(f).isFile())
        .sort()
    : [target];
  if (files.length === 0) throw new UsageError(`${target}: no files in this directory`);
  return files.map((file) => ({ name: file, open: async () => fs.createReadStream(file) }));
}
