/**
 * Recurring sends against the flexible window: a schedule's EndDate lets its last wanted occurrence be invoked
 * anywhere in its window and never lets the first one after --until through; a window long enough to put two
 * occurrences of one recipient back to back is refused by the launcher and size-window alike. Expected instants come
 * from luxon or by hand.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DateTime } from "luxon";
import { parsePlanRow } from "../../infra/rules/plan-row";
import { main as launchMain } from "../../scripts/launch-campaign";
import { main as sizeMain } from "../../scripts/size-window";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-recurring-safety-"));
let runs = 0;
const LIST = path.join(tmp, "list.csv");
fs.writeFileSync(
  LIST,
  [
    "id,email,timezone",
    "par,par@example.com,Europe/Paris",
    "kir,kir@example.com,Pacific/Kiritimati",
    "la,la@example.com,America/Los_Angeles",
  ]
    .map((l) => l + "\n")
    .join(""),
);
// Eight recipients at one instant: at --tps 0.0001 they need 8 / 0.0001 s = 1,333.3 minutes of window (by hand).
const EIGHT = path.join(tmp, "eight.csv");
fs.writeFileSync(
  EIGHT,
  ["id,email,timezone", ...[...Array(8).keys()].map((i) => `p${i},p${i}@example.com,Europe/Paris`)].join("\n") + "\n",
);

const every = (list: string, recurrence: string, hour: string, minute: string, ...more: string[]) => [
  ...["--recipients", list, "--every", recurrence, "--until", "2026-12-31", "--hour", hour, "--minute", minute],
  ...["--now", "2026-11-30T12:00:00Z", ...more],
];

async function dryRun(args: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  const r = await runMain(launchMain, [
    "--templates",
    "none",
    "--campaign",
    "digest",
    "--template",
    "digest",
    ...args,
    "--dry-run",
    "--out",
    out,
  ]);
  const plan = path.join(out, "plan.jsonl");
  const rows = fs.existsSync(plan) ? fs.readFileSync(plan, "utf8").split("\n").filter(Boolean).map(parsePlanRow) : [];
  return { ...r, rows };
}

const local = (zone: string, iso: string) => DateTime.fromISO(iso, { zone }).toMillis();

describe("recurring sends and the flexible window", () => {
  it("EndDate comes after the --until day's 23:45 occurrence and its 34-minute window, and before the next day's", async () => {
    const r = await dryRun(every(LIST, "daily", "23", "45", "--window-minutes", "34"));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.rows.length, 3);
    for (const row of r.rows) {
      const zone = row.timezone;
      const end = Date.parse(row.end_date!);
      const lastWanted = local(zone, "2026-12-31T23:45");
      const firstUnwanted = local(zone, "2027-01-01T23:45");
      // Invoked as late as 00:19 local on 2027-01-01: still before EndDate (local midnight, the old EndDate, was not).
      assert.ok(end > lastWanted + 34 * 60_000, `${zone}: EndDate ${row.end_date} cuts the last send's window`);
      assert.ok(end <= firstUnwanted, `${zone}: EndDate ${row.end_date} lets the 2027-01-01 send through`);
    }
  });

  it("a weekly send keeps local midnight after --until as its EndDate when no window can reach past it", async () => {
    // Until Thursday 2026-12-31; the last occurrence is Monday 12-28 09:00, a window of 1,440 minutes ends Tuesday.
    const r = await dryRun(every(LIST, "weekly:MON", "9", "0"));
    assert.strictEqual(r.code, 0, r.stderr);
    for (const row of r.rows)
      assert.strictEqual(Date.parse(row.end_date!), local(row.timezone, "2027-01-01T00:00"), row.timezone);
  });

  it("refuses --window-minutes that could send two daily occurrences less than an hour apart (exit 2, nothing written)", async () => {
    // Daily: 24 h between occurrences, less 2 h (the largest DST change, Antarctica/Troll's), less the 60-minute gap
    // between two sends of one recipient = 1,260 minutes at most (by hand).
    let r = await dryRun(every(LIST, "daily", "9", "0", "--window-minutes", "1261"));
    assert.strictEqual(r.code, 2);
    assert.strictEqual(
      r.stderr,
      "error: a flexible window of 1,261 minutes (--window-minutes) is too long for --every daily: two occurrences of one recipient could be sent less than 60 minutes apart; at most 1,260 minutes: give --window-minutes 1260 or less\n",
    );
    assert.strictEqual(r.rows.length, 0);
    r = await dryRun(every(LIST, "daily", "9", "0", "--window-minutes", "1260"));
    assert.strictEqual(r.code, 0, r.stderr);
    // Monday and Tuesday are a day apart too; a Monday-only send is a week apart: the largest window, 1,440, is fine.
    r = await dryRun(every(LIST, "weekly:MON,TUE", "9", "0", "--window-minutes", "1300"));
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /--every weekly:MON,TUE: .* at most 1,260 minutes/);
    r = await dryRun(every(LIST, "weekly:MON", "9", "0", "--window-minutes", "1440"));
    assert.strictEqual(r.code, 0, r.stderr);
  });

  it("a computed window that long is refused by the launcher and by size-window alike (exit 1)", async () => {
    const args = every(EIGHT, "daily", "9", "0", "--tps", "0.0001");
    const launch = await dryRun(args);
    assert.strictEqual(launch.code, 1);
    assert.match(
      launch.stderr + launch.stdout,
      /Not launched: a flexible window of 1,334 minutes \(computed\) is too long for --every daily/,
    );
    const size = await runMain(sizeMain, args);
    assert.strictEqual(size.code, 1);
    assert.match(size.stderr, /a flexible window of 1,334 minutes \(computed\) is too long for --every daily: .*--tps/);
    // Seven recipients need 7 / 0.0001 s = 1,166.7 minutes: within 1,260, both accept.
    const seven = path.join(tmp, "seven.csv");
    fs.writeFileSync(seven, fs.readFileSync(EIGHT, "utf8").split("\n").slice(0, 8).join("\n") + "\n");
    assert.strictEqual((await runMain(sizeMain, every(seven, "daily", "9", "0", "--tps", "0.0001"))).code, 0);
    assert.strictEqual((await dryRun(every(seven, "daily", "9", "0", "--tps", "0.0001"))).code, 0);
  });
});
