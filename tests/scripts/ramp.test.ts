/**
 * The warm-up (--ramp, issue 36): each UTC day's sends at most its cap, recipients in list order, one past a day's
 * cap moved to the next day at its own local time with its later steps, and again until all of its sends fit. Held
 * against an independent computation (luxon's calendar arithmetic in each zone, not our planner) over random lists in
 * several zones (DST in New York and Lord Howe, Kathmandu's +05:45, Auckland ahead of UTC) and several steps, through
 * the real launcher (in process, plans in a temp dir); size-window reports the same days.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import fc from "fast-check";
import { DateTime } from "luxon";
import { main as launchMain } from "../../scripts/launch-campaign";
import { main as sizeMain } from "../../scripts/size-window";
import { RAMP_PRESETS } from "../../scripts/lib/planning/ramp";
import { runMain } from "../helpers/cli";

const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 0);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-ramp-"));
let n = 0;
const ZONES = ["America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Auckland", "UTC"];

interface Case {
  zones: number[];
  /** Day offsets of the steps after the first (+Nd). */
  later: number[];
  hour: number;
  minute: number;
  caps: number[];
  /** The campaign's date: around a DST change (New York 2026-03-08, Lord Howe 2026-04-05) or not. */
  date: string;
}

/**
 * By hand, with luxon: for each recipient in list order, the first shift k = 0, 1, … for which every step, at
 * `date` + its day offset + k days at hour:minute in the recipient's zone, falls on a UTC day with room under its
 * cap (day 0 = the UTC day of `now`, the last cap repeating). Returns each recipient's UTC instants and its k.
 */
function oracle(c: Case, nowIso: string): { utc: string[]; shift: number }[] {
  const firstDay = DateTime.fromISO(nowIso, { zone: "utc" }).startOf("day");
  const used = new Map<number, number>();
  const cap = (day: number) => c.caps[Math.min(day, c.caps.length - 1)];
  return c.zones.map((z) => {
    for (let k = 0; ; k++) {
      const sends = [0, ...c.later].map((d) =>
        DateTime.fromISO(c.date, { zone: ZONES[z] })
          .set({ hour: c.hour, minute: c.minute })
          .plus({ days: d + k })
          .toUTC(),
      );
      const days = sends.map((s) => Math.floor(s.diff(firstDay, "days").days));
      const wanted = new Map<number, number>();
      for (const d of days) wanted.set(d, (wanted.get(d) ?? 0) + 1);
      if ([...wanted].every(([d, w]) => (used.get(d) ?? 0) + w <= cap(d))) {
        for (const [d, w] of wanted) used.set(d, (used.get(d) ?? 0) + w);
        return { utc: sends.map((s) => s.toISO({ suppressMilliseconds: false })!), shift: k };
      }
    }
  });
}

function files(c: Case) {
  const dir = path.join(tmp, `case-${++n}`);
  fs.mkdirSync(dir);
  const list = path.join(dir, "list.csv");
  fs.writeFileSync(
    list,
    ["id,email,timezone", ...c.zones.map((z, i) => `r${i},r${i}@example.com,${ZONES[z]}`)].join("\n") + "\n",
  );
  const caps = path.join(dir, "caps.txt");
  fs.writeFileSync(caps, c.caps.join("\n") + "\n");
  return { dir, list, caps };
}

const args = (c: Case, f: ReturnType<typeof files>, now: string) => [
  ...["--recipients", f.list, "--date", c.date, "--hour", String(c.hour), "--minute", String(c.minute)],
  ...c.later.flatMap((d) => ["--step", `+${d}d`]),
  ...["--now", now, "--ramp", f.caps],
];

const caseArb: fc.Arbitrary<Case> = fc.record({
  zones: fc.array(fc.integer({ min: 0, max: ZONES.length - 1 }), { minLength: 1, maxLength: 30 }),
  later: fc.uniqueArray(fc.integer({ min: 1, max: 4 }), { maxLength: 2 }).map((a) => a.sort()),
  // 09:00-20:59: never in a DST gap or fold of these zones (their changes are at 02:00-03:00 local).
  hour: fc.integer({ min: 9, max: 20 }),
  minute: fc.integer({ min: 0, max: 59 }),
  caps: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 6 }),
  date: fc.constantFrom("2026-03-06", "2026-04-03", "2026-12-01"),
});

describe("--ramp: each UTC day's sends within its cap, recipients moved in list order (held to luxon)", function () {
  this.timeout(120_000);

  it("property: every recipient's sends are where the independent computation puts them; moved ones are noted", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const now = DateTime.fromISO(c.date, { zone: "utc" }).minus({ days: 2 }).toISO()!;
        const f = files(c);
        const r = await runMain(launchMain, [
          ...["--campaign", "warm", "--template", "t", "--templates", "none", "--dry-run", "--json"],
          ...["--out", path.join(f.dir, "out")],
          ...args(c, f, now),
        ]);
        assert.strictEqual(r.code, 0, r.stderr);
        const want = oracle(c, now);
        const got = new Map<string, string[]>();
        for (const line of fs
          .readFileSync(path.join(f.dir, "out", "plan.jsonl"), "utf8")
          .trim()
          .split("\n")) {
          const row = JSON.parse(line);
          (got.get(row.recipient_id) ?? got.set(row.recipient_id, []).get(row.recipient_id)!)[row.step - 1] = row.utc;
        }
        want.forEach((w, i) => assert.deepStrictEqual(got.get(`r${i}`), w.utc, `r${i} (${ZONES[c.zones[i]]})`));
        const noted = fs
          .readFileSync(path.join(f.dir, "out", "notes.csv"), "utf8")
          .split("\n")
          .filter((l) => l.includes("ramp: moved"))
          .map((l) => l.split(",")[1]);
        assert.deepStrictEqual(
          noted,
          want.flatMap((w, i) => (w.shift ? [`r${i}`] : [])),
        );
        const summary = JSON.parse(r.stdout);
        assert.strictEqual(summary.ramp.moved, noted.length);
        for (const d of summary.utcDays) assert.ok(d.sends <= d.cap, `${d.date}: ${d.sends} of ${d.cap}`);
        // size-window counts the same days.
        const sized = await runMain(sizeMain, [...args(c, f, now), "--json"]);
        assert.strictEqual(sized.code, 0, sized.stderr);
        assert.deepStrictEqual(JSON.parse(sized.stdout).ramp.days, summary.utcDays);
      }),
      { numRuns: RUNS > 0 ? RUNS : 25 },
    );
  });

  it("an example by hand: caps 2, 3 (repeating), Auckland, Tokyo and New York at 09:00, steps +0d and +1d", async () => {
    // UTC: Auckland 09:00 NZDT = 20:00Z the day before; Tokyo = 00:00Z; New York EST = 14:00Z. Day 0 = 2026-11-30.
    // r1, r2 (Auckland): 11-30 and 12-01. r3 (Tokyo): 12-01, 12-02: 12-01 is full (3). r4 (Tokyo) → 12-02, 12-03;
    // r5 (New York) 12-01 full → 12-02 (3: full), 12-03; r6 (New York) → 12-01 full, 12-02 full → 12-03, 12-04.
    const dir = path.join(tmp, "by-hand");
    fs.mkdirSync(dir);
    const list = path.join(dir, "l.csv");
    fs.writeFileSync(
      list,
      "id,email,timezone\nr1,a@x.com,Pacific/Auckland\nr2,b@x.com,Pacific/Auckland\nr3,c@x.com,Asia/Tokyo\nr4,d@x.com,Asia/Tokyo\nr5,e@x.com,America/New_York\nr6,f@x.com,America/New_York\n",
    );
    fs.writeFileSync(path.join(dir, "caps.txt"), "2\n# then\n3\n");
    const r = await runMain(launchMain, [
      ...["--campaign", "warm", "--recipients", list, "--template", "t", "--templates", "none", "--dry-run"],
      ...["--date", "2026-12-01", "--hour", "9", "--step", "+1d", "--now", "2026-11-30T00:00:00Z"],
      ...["--ramp", path.join(dir, "caps.txt"), "--out", path.join(dir, "out")],
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^ {2}days \(UTC, sends\/cap, --ramp .*caps\.txt\): 2026-11-30 2\/2, 2026-12-01 3\/3, 2026-12-02 3\/3, 2026-12-03 3\/3, 2026-12-04 1\/3; 3 recipients moved to a later day \(notes\.csv\)$/m,
    );
    const notes = fs.readFileSync(path.join(dir, "out", "notes.csv"), "utf8");
    assert.match(
      notes,
      /^7,r6,"ramp: moved 2 days later, each step at its local time: 2026-12-01 \(UTC\) had no room left under its cap of 3 sends \(--ramp .*caps\.txt\)",given,$/m,
    );
    const plan = fs.readFileSync(path.join(dir, "out", "plan.jsonl"), "utf8");
    assert.match(plan, /"schedule_name":"r6-1","send_at":"2026-12-03T09:00:00","timezone":"America\/New_York"/);
    const sized = await runMain(sizeMain, [
      ...["--recipients", list, "--date", "2026-12-01", "--hour", "9", "--step", "+1d"],
      ...["--now", "2026-11-30T00:00:00Z", "--ramp", path.join(dir, "caps.txt")],
    ]);
    assert.match(
      sized.stdout,
      /^Days \(UTC; --ramp .*caps\.txt: 3 recipients moved to a later day\)\n {2}2026-11-30 +2 of 2\n/m,
    );
  });

  it("the new-identity preset: 2,000, doubling under 100,000, × 1.5 under 400,000, × 1.25 up to 1,000,000", () => {
    assert.deepStrictEqual(
      RAMP_PRESETS["new-identity"](),
      [
        2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 192_000, 288_000, 432_000, 540_000, 675_000, 843_750,
        1_000_000,
      ],
    );
  });

  it("bad input: one line naming the file and line, or what is allowed (exit 2)", async () => {
    const dir = path.join(tmp, "bad");
    fs.mkdirSync(dir);
    const bad = path.join(dir, "caps.txt");
    fs.writeFileSync(bad, "2000\n0\n");
    const empty = path.join(dir, "empty.txt");
    fs.writeFileSync(empty, "# nothing\n\n");
    const base = ["--recipients", "tests/fixtures/campaign.csv", "--date", "2026-12-01", "--hour", "9"];
    const cases: [string[], RegExp][] = [
      [["--ramp", bad], /caps\.txt:2: "0" is not a cap: one whole number of sends \(1 or more\) a line/],
      [["--ramp", empty], /empty\.txt: no cap in the file/],
      [
        ["--ramp", "newidentity"],
        /--ramp newidentity: neither a preset \(new-identity\) nor a readable file \(ENOENT\)/,
      ],
    ];
    for (const [flags, message] of cases) {
      const r = await runMain(sizeMain, [...base, ...flags]);
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
    }
    const every = await runMain(sizeMain, [
      ...["--recipients", "tests/fixtures/campaign.csv", "--every", "daily", "--hour", "9", "--until", "2026-12-31"],
      ...["--ramp", "new-identity"],
    ]);
    assert.strictEqual(every.code, 2);
    assert.match(every.stderr, /--ramp does not apply to --every daily/);
  });
});
