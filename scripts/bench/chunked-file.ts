/**
 * The benchmark's generated files, written whole or not at all: text appended through `write` is flushed a megabyte
 * at a time into `file`.tmp, renamed to `file` once `fill` returns.
 */
import * as fs from "fs";

export function writeChunked(file: string, fill: (write: (text: string) => void) => void): void {
  const out = fs.openSync(file + ".tmp", "w");
  let chunk = "";
  fill((text) => {
    chunk += text;
    if (chunk.length > 1 << 20) {
      fs.writeSync(out, chunk);
      chunk = "";
    }
  });
  fs.writeSync(out, chunk);
  fs.closeSync(out);
  fs.renameSync(file + ".tmp", file);
}
