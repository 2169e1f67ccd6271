/**
 * The import-pinpoint case of npm run bench: a Pinpoint endpoint export of `rows` endpoints (EndpointResponse lines
 * with a realistic mix: SMS endpoints, opted-out and inactive ones, second endpoints of a user, endpoints without a
 * user or a zone, multi-valued attributes) is generated once into the cache; the import is timed next to a bare
 * pass that only splits and parses the lines.
 */
import * as fs from "fs";
import * as path from "path";
import { writeChunked } from "./chunked-file";

type Measured = { ms: number; cpuMs: number; maxRssBytes: number };
type Measure = (label: string, script: string, args: string[]) => Measured;

const ZONES = [
  "America/New_York",
  "America/Chicago",
  "America/Los_Angeles",
  "Europe/London",
  "Europe/Paris",
  "Asia/Kolkata",
  "Asia/Tokyo",
];
const INTERESTS = ["Science", "Music", "Travel", "Food", "Sport"];

function endpointLine(i: number): string {
  const user = i % 50 === 7 ? undefined : i % 10 === 3 ? `u${i - 1}` : `u${i}`; // 2% without a user, 10% a user's second endpoint
  const sms = i % 20 === 0;
  const e = {
    ChannelType: sms ? "SMS" : "EMAIL",
    EndpointStatus: i % 50 === 1 ? "INACTIVE" : "ACTIVE",
    OptOut: i % 33 === 2 ? "ALL" : "NONE",
    RequestId: `7f3e2a10-0c4b-4d8e-9a1f-${String(i).padStart(12, "0")}`,
    Location: { Country: "USA", City: "Seattle" },
    Demographic: i % 50 === 9 ? { Platform: "web" } : { Platform: "web", Timezone: ZONES[i % ZONES.length] },
    EffectiveDate: "2026-10-01T12:00:00.000Z",
    Attributes: { interests: INTERESTS.slice(0, 1 + (i % 4)), plan: [i % 7 ? "basic" : "pro"] },
    Metrics: { sessions: i % 13 },
    User: user ? { UserId: user, UserAttributes: { FirstName: [`Name${i % 1000}`] } } : {},
    ApplicationId: "6e0b7591a90841d2b5d93fa11143e5a7",
    Id: `ep-${i}`,
    CohortId: String(i % 100),
    CreationDate: "2025-06-01T08:00:00.000Z",
    Address: sms ? `+1206555${String(i % 10000).padStart(4, "0")}` : `user${i}@example.com`,
  };
  return JSON.stringify(e) + "\n";
}

function generate(file: string, rows: number): void {
  if (fs.existsSync(file)) return;
  process.stderr.write(`generating ${file} …\n`);
  writeChunked(file, (write) => {
    for (let i = 0; i < rows; i++) write(endpointLine(i));
  });
}

export function pinpointBench(rows: number, cache: string, measure: Measure): void {
  const file = path.join(cache, `pinpoint-endpoints-${rows}.jsonl`);
  fs.mkdirSync(cache, { recursive: true });
  generate(file, rows);
  const line = (label: string, m: Measured, base?: Measured) => {
    const rate = Math.round(rows / (m.ms / 1000)).toLocaleString("en-US");
    const ratio = base ? `  ${(m.cpuMs / base.cpuMs).toFixed(2)}× bare pass (cpu)` : "";
    process.stdout.write(
      `${label.padEnd(28)} ${(m.ms / 1000).toFixed(2).padStart(6)} s  ${rate.padStart(10)} endpoints/s  ` +
        `cpu ${(m.cpuMs / 1000).toFixed(2).padStart(6)} s  peak RSS ${Math.round(m.maxRssBytes / 1048576)} MB${ratio}\n`,
    );
  };
  process.stdout.write(
    `\n${rows.toLocaleString("en-US")} Pinpoint endpoints, ${(fs.statSync(file).size / 1048576).toFixed(0)} MB (${path.relative(path.resolve(cache, ".."), file)})\n`,
  );
  const bare = measure("bare JSON-lines pass", "scripts/bench/bare-jsonl.ts", [file]);
  line("bare JSON-lines pass", bare);
  const imported = measure("import-pinpoint", "scripts/import-pinpoint.ts", [
    "--endpoints",
    file,
    "--out",
    path.join(cache, "pinpoint-out"),
    "--json",
  ]);
  line("import-pinpoint --endpoints", imported, bare);
}
