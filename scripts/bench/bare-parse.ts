// The baseline: one csv-parse pass over the file with the options the tools use, doing nothing with the rows.
import * as fs from "fs";
import { parse } from "csv-parse";
import { CSV_OPTIONS } from "../lib/recipients/recipients";

(async () => {
  let rows = 0;
  for await (const _ of fs.createReadStream(process.argv[2]).pipe(parse(CSV_OPTIONS))) rows++;
  process.stdout.write(`${rows}\n`);
})().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
