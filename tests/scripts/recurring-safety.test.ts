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
import { parsePlanRow } from "../../infra/core/plan/plan-row";
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

describe("recurring sends keep quiet time out of the window on DST nights", () => {
  const DST_LIST = path.join(tmp, "dst.csv");
  fs.writeFileSync(
    DST_LIST,
    [
      "id,email,timezone",
      "ny,ny@example.com,America/New_York",
      "lh,lh@example.com,Australia/Lord_Howe",
      "par,par@example.com,Europe/Paris",
    ].join("\n") + "\n",
  );
  const NY_ONLY = path.join(tmp, "ny.csv");
  fs.writeFileSync(NY_ONLY, "id,email,timezone\nny,ny@example.com,America/New_York\n");
  const daily = (
    list: string,
    hour: string,
    minute: string,
    quiet: string,
    window: string,
    now: string,
    until: string,
  ) => [
    ...["--recipients", list, "--every", "daily", "--until", until, "--hour", hour, "--minute", minute],
    ...["--quiet-hours", quiet, "--window-minutes", window, "--now", now],
  ];

  it("refuses (exit 2, nothing written) the issue's case: 01:30 with a 60-minute window reaches 03:00 EDT on 2027-03-14", async () => {
    // 01:30 EST is 06:30Z; the clock jumps from 02:00 EST to 03:00 EDT at 07:00Z, so 30 minutes later the window is in
    // quiet time (03:00-08:00) for its last 30 minutes (by hand). Every other night it ends at 02:30, outside it.
    const r = await dryRun(daily(NY_ONLY, "1", "30", "03:00-08:00", "60", "2027-03-01T12:00:00Z", "2027-03-31"));
    assert.strictEqual(r.code, 2, r.stdout);
    assert.strictEqual(
      r.stderr,
      "error: quiet time (03:00-08:00 local) falls inside the 60-minute window of a recurring send on a night the clock changes: America/New_York on 2027-03-14 (01:30, 30 minutes free); one cron time cannot keep it out on that night: give --window-minutes 30 or less, or another --hour\n",
    );
    assert.strictEqual(r.rows.length, 0);
    assert.ok(!fs.existsSync(path.join(tmp, `run-${runs}`, "summary.json")), "a summary was written");
  });

  it("names every zone and night in date order, with the longest window that holds on all of them", async () => {
    // 01:45 with quiet 03:00-08:00: New York jumps at 07:00Z (01:45 EST is 06:45Z: 15 minutes free), Paris at 01:00Z
    // on 2027-03-28 (01:45 CET is 00:45Z: 15 free), Lord Howe from 02:00 to 02:30 at 15:30Z on 2027-10-03 (01:45 is
    // 15:15Z, 03:00 is 16:00Z: 45 free). Their fall-back nights (2027-04-04 and 2027-10-31) repeat times before 03:00.
    const r = await dryRun(daily(DST_LIST, "1", "45", "03:00-08:00", "60", "2027-03-01T12:00:00Z", "2027-10-31"));
    assert.strictEqual(r.code, 2, r.stdout);
    assert.strictEqual(
      r.stderr,
      "error: quiet time (03:00-08:00 local) falls inside the 60-minute window of a recurring send on a night the clock changes: America/New_York on 2027-03-14 (01:45, 15 minutes free), Europe/Paris on 2027-03-28 (01:45, 15 minutes free), Australia/Lord_Howe on 2027-10-03 (01:45, 45 minutes free); one cron time cannot keep it out on those nights: give --window-minutes 15 or less, or another --hour\n",
    );
    // The window it names holds: every occurrence of every zone, checked minute by minute with luxon.
    const ok = await dryRun(daily(DST_LIST, "1", "45", "03:00-08:00", "15", "2027-03-01T12:00:00Z", "2027-10-31"));
    assert.strictEqual(ok.code, 0, ok.stderr);
    assert.strictEqual(ok.rows.length, 3);
    for (const row of ok.rows) {
      let quietMinutes = 0;
      for (
        let d = DateTime.fromISO("2027-03-02", { zone: row.timezone });
        d.toISODate()! <= "2027-10-31";
        d = d.plus({ days: 1 })
      ) {
        const at = d.set({ hour: 1, minute: 45 });
        if (at.hour !== 1 || at.minute !== 45) continue; // (none in a gap)
        for (let m = 0; m < 15; m++) {
          const wall = DateTime.fromMillis(at.toMillis() + m * 60_000, { zone: row.timezone });
          if (wall.hour >= 3 && wall.hour < 8) quietMinutes++;
        }
      }
      assert.strictEqual(quietMinutes, 0, row.timezone);
    }
  });

  it("plans Lord Howe's 01:30 with a 60-minute window: on 2027-10-03 it ends at 02:59 LHDT, before quiet time", async () => {
    // 01:30 LHST (+10:30) is 15:00Z on 2027-10-02; the clock moves from 02:00 to 02:30 at 15:30Z, and 03:00 LHDT (+11)
    // is 16:00Z: the window [15:00Z, 16:00Z) holds no quiet minute (by hand).
    const lordHowe = path.join(tmp, "lh.csv");
    fs.writeFileSync(lordHowe, "id,email,timezone\nlh,lh@example.com,Australia/Lord_Howe\n");
    const r = await dryRun(daily(lordHowe, "1", "30", "03:00-08:00", "60", "2027-09-20T12:00:00Z", "2027-10-31"));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.rows.length, 1);
    assert.strictEqual(
      (await dryRun(daily(lordHowe, "1", "30", "03:00-08:00", "61", "2027-09-20T12:00:00Z", "2027-10-31"))).code,
      2,
    );
  });

  it("refuses a fall-back night too: 01:30 EDT with a 60-minute window repeats 01:00-01:29 as EST on 2027-11-07", async () => {
    // 01:30 EDT (the earlier instant) is 05:30Z; at 06:00Z the clock goes back to 01:00 EST, quiet until 01:30 (by hand).
    const r = await dryRun(daily(NY_ONLY, "1", "30", "01:00-01:30", "60", "2027-11-01T12:00:00Z", "2027-11-30"));
    assert.strictEqual(r.code, 2, r.stdout);
    assert.match(r.stderr, /America\/New_York on 2027-11-07 \(01:30, 30 minutes free\).*--window-minutes 30 or less/);
    assert.strictEqual(
      (await dryRun(daily(NY_ONLY, "1", "30", "01:00-01:30", "30", "2027-11-01T12:00:00Z", "2027-11-30"))).code,
      0,
    );
    // Outside the DST night (until 2027-11-06), the 60-minute window holds.
    assert.strictEqual(
      (await dryRun(daily(NY_ONLY, "1", "30", "01:00-01:30", "60", "2027-11-01T12:00:00Z", "2027-11-06"))).code,
      0,
    );
  });

  it("size-window refuses the same plan with a computed window (exit 2)", async () => {
    // 3 lines at --tps 0.0008: ⌈3 ÷ 0.0008 ÷ 60⌉ = 63 minutes checked (the launcher's bound, by hand).
    const args = daily(NY_ONLY, "1", "30", "03:00-08:00", "60", "2027-03-01T12:00:00Z", "2027-03-31").slice(0, -4);
    const r = await runMain(sizeMain, [...args, "--now", "2027-03-01T12:00:00Z", "--tps", "0.0008"]);
    assert.strictEqual(r.code, 2, r.stdout);
    assert.match(
      r.stderr,
      /the 63-minute window .* America\/New_York on 2027-03-14 \(01:30, 30 minutes free\); .*a window of 30 minutes or less/,
    );
  });
});
