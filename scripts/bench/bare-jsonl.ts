// The baseline for import-pinpoint: split the export into lines as the importer does and JSON.parse each, nothing more.
import * as fs from "fs";
import { lines } from "../lib/pinpoint/import";

(async () => {
  let endpoints = 0;
  for await (const { text } of lines(fs.createReadStream(process.argv[2])))
    if (text !== "" && JSON.parse(text)) endpoints++;
  process.stdout.write(`${endpoints}\n`);
})().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
