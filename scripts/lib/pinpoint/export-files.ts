/**
 * The files of a Pinpoint endpoint export: a local file or directory (or an S3 object, s3-export.ts), each read as
 * newline-delimited JSON endpoints, plain or gzip (detected by its first bytes). Moved from import.ts.
 */
import * as fs from "fs";
import * as path from "path";
import { Readable } from "stream";
import { createGunzip } from "zlib";
import { PinpointEndpoint } from "./endpoints";
import { lines } from "./lines";
import { InputError, UsageError } from "../../../infra/core/errors";
import { fileProblem } from "../text/input-files";

/** One file of the export: a local file or an S3 object. `open` gives its bytes as stored (gzip or not). */
export interface ExportSource {
  name: string;
  /** The local file it is read from, if any: the import never removes or replaces it (OutputLock). */
  file?: string;
  open(): Promise<Readable>;
}

/**
 * The endpoints of one export file, with their line numbers and where a line stops being UTF-8 (-1: it does not; its
 * invalid bytes are then U+FFFD in the endpoint); a line that is not a JSON object stops the import.
 */
export async function* endpointsOf(
  source: ExportSource,
): AsyncGenerator<{ line: number; endpoint: PinpointEndpoint; invalidAt: number }> {
  let stream: Readable;
  try {
    stream = await decompressIfGzip(await source.open());
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`${source.name}: ${fileProblem(e)}`);
  }
  let last = 0;
  try {
    for await (const { line, text, invalidAt } of lines(stream)) {
      last = line;
      if (text.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        throw new UsageError(
          `${source.name}:${line}: not JSON (${(e as Error).message}); an export has one endpoint object per line`,
        );
      }
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw new UsageError(`${source.name}:${line}: not a JSON object; an export has one endpoint object per line`);
      yield { line, endpoint: value as PinpointEndpoint, invalidAt };
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const err = e as NodeJS.ErrnoException;
    const what =
      err.code === "Z_BUF_ERROR" || err.code === "Z_DATA_ERROR"
        ? `not a complete gzip file (${err.message})`
        : err.message;
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

/** A local export: one file, or every file under a directory (recursively, in path order), as an S3 prefix would be. */
export function localExportSources(target: string): ExportSource[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch (e) {
    throw new InputError(`${target}: ${fileProblem(e)}`);
  }
  const files = stat.isDirectory()
    ? fs
        .readdirSync(target, { recursive: true, encoding: "utf8" })
        .map((f) => path.join(target, f))
        .filter((f) => !path.basename(f).startsWith(".") && fs.statSync(f).isFile())
        .sort()
    : [target];
  if (files.length === 0) throw new UsageError(`${target}: no files in this directory`);
  return files.map((file) => ({ name: file, file, open: async () => fs.createReadStream(file) }));
}
