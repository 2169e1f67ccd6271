/**
 * Texts paced by the number (issue 37): size-window holds message parts per second to the pool's throughput
 * (--sms-mps) and moves texts past a 10DLC daily cap (--sms-daily-cap) to the next day. The target: a 100,000-text
 * campaign from a 10DLC pool at 1 MPS is planned without a throttled send, the window and the parts per second
 * checked by hand (Scheduler spreads each instant's sends evenly over its window).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DateTime } from "luxon";
import { main } from "../../scripts/size-window";
import { main as launchMain } from "../../scripts/launch-campaign";
import { smsPaced } from "../../scripts/lib/planning/size-window";
import { withDailyCap } from "../../scripts/lib/planning/ramp";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-sms-pace-"));
const sizeWindow = (...args: string[]) => runMain(main, args);

/** Ten rows a pattern, in list order: 4 New York, 3 Chicago, 1 Denver, 2 Los Angeles. */
const PATTERN = [
  ...Array(4).fill("America/New_York"),
  ...Array(3).fill("America/Chicago"),
  "America/Denver",
  ...Array(2).fill("America/Los_Angeles"),
];

function list(rows: number): string {
  const file = path.join(tmp, `list-${rows}.csv`);
  if (!fs.existsSync(file)) {
    const lines = ["id,email,timezone"];
    for (let i = 0; i < rows; i++) lines.push(`r${i},r${i}@example.com,${PATTERN[i % PATTERN.length]}`);
    fs.writeFileSync(file, lines.join("\n") + "\n");
  }
  return file;
}

const CAMPAIGN = ["--date", "2026-12-07", "--hour", "10", "--now", "2026-12-06T00:00:00Z"];

describe("texts paced by the number: --sms-mps and --sms-daily-cap", function () {
  this.timeout(120_000);

  it("a 100,000-text campaign from a 10DLC pool at 1 MPS, 10,000 texts a day: no second above 1 message part", async () => {
    const r = await sizeWindow(
      ...["--recipients", list(100_000), ...CAMPAIGN],
      ...["--sms-mps", "1", "--sms-daily-cap", "10000", "--json"],
    );
    assert.strictEqual(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    // By hand: a day's 10,000 texts at 3 parts each (the default, --max-segments' 3) are 30,000 parts; at 1 part a
    // second they need 30,000 s = 500 minutes. The zones' instants are 3 hours apart at most, so with any window
    // under 500 minutes the texts of one day overlap less than all of them only while the window is under 180
    // minutes, where New York's 4,000 alone need 4,000 × 3 s = 200 minutes: the window is 500 minutes.
    assert.strictEqual(report.windowMinutes, (10_000 * 3) / 1 / 60);
    assert.deepStrictEqual(report.sms, { mps: 1, source: "--sms-mps", partsPerText: 3, dailyCap: 10000, peakMps: 1 });
    assert.strictEqual(report.schedules, 100_000);
    // Ten UTC days of 10,000: the first 10,000 rows of the list the first day, each row's send at 10:00 its time.
    assert.strictEqual(report.ramp.moved, 90_000);
    assert.deepStrictEqual(
      report.ramp.days.map((d: { sends: number; cap: number }) => [d.sends, d.cap]),
      Array(10).fill([10_000, 10_000]),
    );
    const W = report.windowMinutes * 60;
    // The send instants, by hand (luxon): 10:00 local on each of the ten days, 1,000 patterns of the mix a day.
    const instants: { start: number; texts: number }[] = [];
    for (let day = 0; day < 10; day++)
      for (const [zone, texts] of [
        ["America/New_York", 4_000],
        ["America/Chicago", 3_000],
        ["America/Denver", 1_000],
        ["America/Los_Angeles", 2_000],
      ] as const) {
        const at = DateTime.fromISO("2026-12-07T10:00", { zone }).plus({ days: day }).toUTC();
        instants.push({ start: at.toSeconds(), texts });
      }
    assert.deepStrictEqual(
      report.instants.map((i: { utc: string; count: number }) => [Date.parse(i.utc) / 1000, i.count]),
      instants.map((i) => [i.start, i.texts]),
    );
    // Each instant's texts spread evenly over [start, start + W): parts per second at every second the rate changes.
    const edges = instants.flatMap((i) => [i.start, i.start + W]);
    const partsPerSecondAt = (t: number) =>
      instants.filter((i) => i.start <= t && t < i.start + W).reduce((sum, i) => sum + (i.texts * 3) / W, 0);
    const peak = Math.max(...edges.map(partsPerSecondAt));
    assert.ok(peak <= 1 + 1e-9, `peak ${peak} message parts/s`);
    // And a minute less would throttle: 30,000 parts over 499 minutes is above 1 a second.
    assert.ok(30_000 / (W - 60) > 1);
    // Every text leaves within the day's legal hours (08:00-21:00 there): 10:00 + 500 min = 18:20 local.
    assert.ok(10 * 60 + report.windowMinutes < 21 * 60);
  });

  it("the same campaign in one day cannot be held to 1 MPS: refused with one line naming --sms-daily-cap", async () => {
    const r = await sizeWindow("--recipients", list(100_000), ...CAMPAIGN, "--sms-mps", "1");
    assert.strictEqual(r.code, 1, r.stderr);
    const line = r.stderr.trim();
    assert.ok(!line.includes("\n"), line);
    assert.match(line, /no flexible window up to 1440 minutes keeps texts within 0\.333\/s/);
    // 1,440 minutes × 60 s ÷ 3 parts = 28,800 texts from one instant a day.
    assert.match(line, /--sms-daily-cap N \(at most 28,800 texts from one instant a day\)/);
  });

  it("the launch plans the same: the window from the pool's rate, texts past the daily cap on the next day", async () => {
    const out = path.join(tmp, "launch-out");
    const r = await runMain(launchMain, [
      ...["--campaign", "texts", "--recipients", list(1_000), "--template", "t", "--templates", "none", "--dry-run"],
      ...CAMPAIGN,
      ...["--sms-mps", "1", "--sms-daily-cap", "500", "--out", out, "--json"],
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    // By hand: a day's 500 texts are 200 in New York, 150 in Chicago, 50 in Denver, 100 in Los Angeles, an hour apart.
    // New York's 200 × 3 parts at 1 part a second take 600 s = 10 minutes, under the hour: no two instants overlap.
    assert.deepStrictEqual(
      [summary.window.minutes, summary.window.effectiveTps, summary.window.effectiveTpsSource],
      [(200 * 3) / 1 / 60, 1 / 3, "1 message parts/s (--sms-mps) ÷ 3 parts a text"],
    );
    assert.deepStrictEqual(summary.ramp, { source: "--sms-daily-cap 500", moved: 500 });
  });

  it("from volume: ⌈texts × parts ÷ MPS ÷ 60⌉ minutes (3,000 texts at 3 MPS toll-free: 50 minutes)", async () => {
    const r = await sizeWindow("--schedules", "3000", "--sms-mps", "3", "--json");
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(JSON.parse(r.stdout).windowMinutes, Math.ceil((3000 * 3) / 3 / 60));
    const daily = await sizeWindow("--schedules", "3000", "--sms-daily-cap", "10");
    assert.strictEqual(daily.code, 2);
    assert.match(daily.stderr, /--sms-daily-cap needs --recipients/);
  });

  it("the lower rate holds: a short code at 100 MPS is paced by the invocation quota only when that is lower", () => {
    const quota = { tps: 1000, source: "Scheduler invocation quota, default" };
    assert.deepStrictEqual(smsPaced(quota, undefined), quota);
    assert.deepStrictEqual(smsPaced(quota, { mps: 100, source: "--sms-mps", partsPerText: 2 }), {
      tps: 50,
      source: "100 message parts/s (--sms-mps) ÷ 2 parts a text",
    });
    assert.deepStrictEqual(smsPaced({ tps: 10, source: "--tps" }, { mps: 100, source: "x", partsPerText: 1 }), {
      tps: 10,
      source: "--tps",
    });
  });

  it("--sms-daily-cap with --ramp: each day the lower cap", () => {
    const now = Date.parse("2026-12-06T12:00:00Z");
    const ramp = { caps: [2_000, 4_000, 8_000], source: "--ramp new-identity", firstDayMs: Date.parse("2026-12-06") };
    assert.deepStrictEqual(withDailyCap(ramp, 3_000, now), {
      caps: [2_000, 3_000, 3_000],
      source: "--ramp new-identity and --sms-daily-cap 3000",
      firstDayMs: Date.parse("2026-12-06T00:00:00Z"),
    });
    assert.deepStrictEqual(withDailyCap(undefined, 500, now), {
      caps: [500],
      source: "--sms-daily-cap 500",
      firstDayMs: Date.parse("2026-12-06T00:00:00Z"),
    });
    assert.strictEqual(withDailyCap(undefined, undefined, now), undefined);
  });
});
