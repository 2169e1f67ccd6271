/**
 * The promises as properties (fast-check, shrinking to a minimal failure), over random recipient lists and flags
 * through the real launcher (in process, plans written to a temp dir) and random journeys and events through
 * decide(). Quiet time is checked here with luxon, independently of infra/core/timing/quiet-time.ts and promises.ts.
 * Bounded for npm test; SENDTIME_PROPERTY_RUNS=N runs each property N times.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import fc from "fast-check";
import { DateTime } from "luxon";
import { parseJourneys } from "../../infra/core/journeys/journeys-definition";
import { parsePlanRow } from "../../infra/core/plan/plan-row";
import { main as launchMain } from "../../scripts/launch-campaign";
import { COMMAND as SIZE_WINDOW, main as sizeMain } from "../../scripts/size-window";
import { configKey } from "../../scripts/lib/cli/config-file";
import type { Flag, FlagTable } from "../../scripts/lib/cli/flags";
import { LAUNCH_FLAGS } from "../../scripts/lib/cli/launch-flags";
import { parseDocument } from "yaml";
import { decide } from "../../infra/core/journeys/journeys";
import { runMain } from "../helpers/cli";

const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 0);
const runs = (n: number) => (RUNS > 0 ? RUNS : n);
const MINUTE = 60_000;
const ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"];
const DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-properties-"));
let launches = 0;

interface Quiet {
  start?: number;
  end?: number;
  days: number[];
}

/** Whether the local minute of `utcMs` in `zone` is quiet, by luxon (weekday 1 = Monday … 7 = Sunday). */
function quietAt(q: Quiet, zone: string, utcMs: number): boolean {
  const t = DateTime.fromMillis(utcMs, { zone });
  if (q.days.includes(t.weekday % 7)) return true;
  if (q.start === undefined || q.end === undefined) return false;
  const m = t.hour * 60 + t.minute;
  return q.start < q.end ? m >= q.start && m < q.end : m >= q.start || m < q.end;
}

/** The first quiet minute of [t, t + window), or undefined. */
function quietMinuteIn(q: Quiet, zone: string, t: number, windowMinutes: number): string | undefined {
  for (let m = 0; m < windowMinutes; m++)
    if (quietAt(q, zone, t + m * MINUTE)) return new Date(t + m * MINUTE).toISOString();
  return undefined;
}

const hhmm = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;

/** Quiet hours of 1 to 14 hours (or none) and up to 2 quiet days (or none), never both absent. */
const quietArb: fc.Arbitrary<Quiet> = fc
  .record({
    hours: fc.option(
      fc.record({ start: fc.integer({ min: 0, max: 1439 }), length: fc.integer({ min: 60, max: 14 * 60 }) }),
      {
        nil: undefined,
      },
    ),
    days: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { maxLength: 2 }),
  })
  .filter((q) => q.hours !== undefined || q.days.length > 0)
  .map((q) => ({
    ...(q.hours ? { start: q.hours.start, end: (q.hours.start + q.hours.length) % 1440 } : {}),
    days: q.days,
  }));

const rowArb = fc.record({
  zone: fc.constantFrom(...ZONES, "Mars/Olympus"),
  // A row's own time: none, a send_at in the DST weeks, or a send_hour.
  own: fc.oneof(
    fc.constant({}),
    fc.record({
      sendAt: fc
        .integer({ min: 0, max: 5 * 24 * 60 - 1 })
        .map((m) => new Date(Date.UTC(2026, 2, 6) + m * MINUTE).toISOString().slice(0, 16)),
    }),
    fc.record({ sendHour: fc.integer({ min: 0, max: 23 }) }),
  ),
});

const launchArb = fc.record({
  rows: fc.array(rowArb, { minLength: 1, maxLength: 12 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  // Later steps: distinct offsets in hours (as +Nh) or days (+Nd); refused equal ones are filtered out.
  steps: fc.uniqueArray(
    fc.oneof(
      fc.integer({ min: 1, max: 30 }).map((h) => `+${h}h`),
      fc.integer({ min: 1, max: 3 }).map((d) => `+${d}d`),
    ),
    {
      maxLength: 3,
    },
  ),
  missed: fc.constantFrom("skip", "send-now", "next-day"),
  grace: fc.integer({ min: 0, max: 600 }),
  quiet: fc.option(quietArb, { nil: undefined }),
  policy: fc.constantFrom("delay", "skip"),
  window: fc.option(fc.integer({ min: 1, max: 180 }), { nil: undefined }),
  // --now from 2 days before the campaign date to 12 hours into it.
  nowMinutes: fc.integer({ min: -2 * 1440, max: 12 * 60 }),
});

describe("the promises, as properties", function () {
  // npm run test:properties runs each property 2,000 times: the slowest (a launch per run) then takes minutes.
  this.timeout(RUNS > 0 ? Math.max(60_000, RUNS * 250) : 60_000);

  it("launcher: no recipient twice within 60 minutes, steps in order, no minute of a window quiet, nothing before the cutoff, rows = planned + rejected + held out", async () => {
    await fc.assert(
      fc.asyncProperty(launchArb, async (c) => {
        const steps = new Set(
          c.steps.map((s) => (s.endsWith("d") ? Number(s.slice(1, -1)) * 24 : Number(s.slice(1, -1)))),
        );
        fc.pre(steps.size === c.steps.length && !steps.has(0));
        const hours =
          c.quiet && c.quiet.start !== undefined ? `${hhmm(c.quiet.start)}-${hhmm(c.quiet.end!)}` : undefined;
        const lines = ["id,email,timezone,send_at,send_hour"];
        c.rows.forEach((r, i) =>
          lines.push(
            `r${i},r${i}@example.com,${r.zone},${"sendAt" in r.own ? r.own.sendAt : ""},${"sendHour" in r.own ? r.own.sendHour : ""}`,
          ),
        );
        const file = path.join(tmp, `list-${++launches}.csv`);
        fs.writeFileSync(file, lines.join("\n") + "\n");
        const out = path.join(tmp, `out-${launches}`);
        const now = new Date(Date.UTC(2026, 2, 8) + c.nowMinutes * MINUTE).toISOString();
        const args = [
          ...[
            "--campaign",
            "prop",
            "--recipients",
            file,
            "--template",
            "t",
            "--date",
            "2026-03-08",
            "--hour",
            String(c.hour),
            "--minute",
            String(c.minute),
          ],
          ...c.steps.flatMap((s) => ["--step", s]),
          ...["--missed", c.missed, "--grace-minutes", String(c.grace), "--now", now],
          ...(hours ? ["--quiet-hours", hours] : []),
          ...(c.quiet?.days.length ? ["--quiet-days", c.quiet.days.map((d) => DAY_NAMES[d]).join(",")] : []),
          ...(c.quiet ? ["--quiet", c.policy] : []),
          ...(c.window !== undefined ? ["--window-minutes", String(c.window)] : []),
          ...["--dry-run", "--json", "--out", out, "--templates", "none"],
        ];
        const r = await runMain(launchMain, args);
        if (r.code === 2) {
          // Only a window longer than quiet time's free stretch is refused here.
          assert.match(r.stderr, /--window-minutes \d+: longer than the longest free time/);
          return;
        }
        assert.ok(r.code === 0 || r.code === 1, r.stderr);
        const s = JSON.parse(r.stdout);
        assert.strictEqual(s.rows, c.rows.length);
        assert.strictEqual(s.rows, s.recipientsPlanned + s.rejected.total + s.heldOut);
        const planText = fs.existsSync(path.join(out, "plan.jsonl"))
          ? fs.readFileSync(path.join(out, "plan.jsonl"), "utf8")
          : "";
        const plan = planText.split("\n").filter(Boolean).map(parsePlanRow);
        const cutoff = Date.parse(s.missed.cutoff);
        const byRecipient = new Map<string, { step: number; t: number }[]>();
        for (const p of plan) {
          const t = Date.parse(p.utc);
          assert.ok(t >= cutoff, `${p.schedule_name} at ${p.utc} before the cutoff ${s.missed.cutoff}`);
          const zone = c.rows[Number(p.recipient_id.slice(1))].zone;
          const recipientZone = ZONES.includes(zone) ? zone : "UTC";
          if (c.quiet) {
            const quiet = quietMinuteIn(c.quiet, recipientZone, t, s.window.minutes);
            assert.strictEqual(
              quiet,
              undefined,
              `${p.schedule_name} at ${p.utc}: ${quiet} of its ${s.window.minutes}-minute window is quiet`,
            );
          }
          byRecipient.set(p.recipient_id, [...(byRecipient.get(p.recipient_id) ?? []), { step: p.step, t }]);
        }
        for (const [id, sends] of byRecipient) {
          sends.sort((a, b) => a.step - b.step);
          for (let k = 1; k < sends.length; k++) {
            assert.ok(sends[k].t > sends[k - 1].t, `${id}: step ${sends[k].step} before step ${sends[k - 1].step}`);
            assert.ok(
              sends[k].t - sends[k - 1].t >= 60 * MINUTE,
              `${id}: steps ${sends[k - 1].step} and ${sends[k].step} within 60 minutes`,
            );
          }
        }
      }),
      { numRuns: runs(40) },
    );
  });

  it("launcher: every send planned at another instant than its asked local time has a line in notes.csv", async () => {
    // The instants a local wall time denotes, by luxon: none in a DST gap, two in a fall-back hour.
    const instantsOf = (zone: string, wall: DateTime): number[] => {
      const utcWall = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
      const offsets = new Set([-1, 1].map((d) => DateTime.fromMillis(utcWall + d * 86_400_000, { zone }).offset));
      return [...offsets]
        .map((o) => utcWall - o * MINUTE)
        .filter((t) => {
          const back = DateTime.fromMillis(t, { zone });
          return back.toFormat("yyyy-MM-dd HH:mm") === wall.toFormat("yyyy-MM-dd HH:mm");
        });
    };
    const caseArb = fc.record({
      zones: fc.array(fc.constantFrom(...ZONES), { minLength: 1, maxLength: 6 }),
      // Around the spring-forward nights of 2026 (New York 03-08, London 03-29) and Lord Howe's (10-04).
      date: fc.constantFrom("2026-03-07", "2026-03-08", "2026-03-28", "2026-03-29", "2026-10-03", "2026-10-04"),
      hour: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 3 }), weight: 3 }, fc.integer({ min: 0, max: 23 })),
      minute: fc.integer({ min: 0, max: 59 }),
      days: fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }),
      missed: fc.constantFrom("skip", "send-now", "next-day"),
      quiet: fc.option(quietArb, { nil: undefined }),
      nowMinutes: fc.integer({ min: -2 * 1440, max: 2 * 1440 }),
    });
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const file = path.join(tmp, `moves-${++launches}.csv`);
        fs.writeFileSync(
          file,
          ["id,email,timezone", ...c.zones.map((z, i) => `r${i},r${i}@example.com,${z}`)].join("\n") + "\n",
        );
        const out = path.join(tmp, `out-${launches}`);
        const now = new Date(Date.parse(`${c.date}T00:00:00Z`) + c.nowMinutes * MINUTE).toISOString();
        const hours = c.quiet?.start !== undefined ? `${hhmm(c.quiet.start)}-${hhmm(c.quiet.end!)}` : undefined;
        const r = await runMain(launchMain, [
          ...["--campaign", "moves", "--recipients", file, "--template", "t", "--date", c.date],
          ...["--hour", String(c.hour), "--minute", String(c.minute), "--missed", c.missed, "--now", now],
          ...c.days.flatMap((d) => ["--step", `+${d}d`]),
          ...(hours ? ["--quiet-hours", hours] : []),
          ...(c.quiet?.days.length ? ["--quiet-days", c.quiet.days.map((d) => DAY_NAMES[d]).join(",")] : []),
          ...["--dry-run", "--out", out, "--templates", "none"],
        ]);
        assert.ok(r.code === 0 || r.code === 1, r.stderr);
        const read = (f: string) =>
          fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : "";
        const plan = read("plan.jsonl").split("\n").filter(Boolean).map(parsePlanRow);
        const notes = read("notes.csv");
        const offsets = [0, ...c.days];
        for (const p of plan) {
          const zone = c.zones[Number(p.recipient_id.slice(1))];
          const asked = DateTime.fromISO(c.date, { zone })
            .plus({ days: offsets[p.step - 1] })
            .set({ hour: c.hour, minute: c.minute });
          const wall = DateTime.fromObject(
            { year: asked.year, month: asked.month, day: asked.day, hour: c.hour, minute: c.minute },
            { zone: "UTC" },
          );
          if (instantsOf(zone, wall).includes(Date.parse(p.utc))) continue;
          const noted = notes
            .split("\n")
            .some((l) => l.includes(`,${p.recipient_id},`) && new RegExp(`^[^,]*,[^,]*,"?step ${p.step} `).test(l));
          assert.ok(
            noted,
            `${p.recipient_id} step ${p.step} asked ${wall.toFormat("yyyy-MM-dd HH:mm")} in ${zone}, sent ${p.utc}: no note\n${notes}`,
          );
        }
      }),
      { numRuns: runs(40) },
    );
  });

  it("launcher, recurring: across DST nights no occurrence's window holds a quiet minute, or the plan is refused naming exactly the zones and nights where one would", async () => {
    // The occurrences, by luxon: each local date's hh:mm, none where it does not exist, the earlier of two.
    const occurrenceAt = (zone: string, date: DateTime, hour: number, minute: number): number | undefined => {
      const t = DateTime.fromObject({ year: date.year, month: date.month, day: date.day, hour, minute }, { zone });
      if (t.hour !== hour || t.minute !== minute) return undefined;
      let earliest = t.toMillis();
      for (let back = 30; back <= 120; back += 30) {
        const e = DateTime.fromMillis(t.toMillis() - back * MINUTE, { zone });
        if (e.toISODate() === t.toISODate() && e.hour === hour && e.minute === minute) earliest = e.toMillis();
      }
      return earliest;
    };
    const caseArb = fc.record({
      zones: fc.uniqueArray(fc.constantFrom(...ZONES, "Europe/Paris", "Mars/Olympus"), { minLength: 1, maxLength: 4 }),
      every: fc.constantFrom("daily", "weekly:SUN", "daily", "weekdays"),
      // Mostly in the night hours the clocks change in (quiet time starting up to 4 hours after the send), with a
      // window that ends up to an hour before quiet time: the nights a clock moves forward or back can reach it.
      hour: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 2 }), weight: 4 }, fc.integer({ min: 0, max: 23 })),
      minute: fc.integer({ min: 0, max: 59 }),
      quiet: fc.record({ after: fc.integer({ min: 1, max: 240 }), length: fc.integer({ min: 30, max: 14 * 60 }) }),
      window: fc.oneof(
        { arbitrary: fc.integer({ min: 0, max: 60 }).map((short) => -short), weight: 3 },
        fc.integer({ min: 1, max: 240 }),
      ),
      // Noon UTC, a few days before the spring-forward weekends (Europe, America) or the October ones (Lord Howe, Europe).
      now: fc.constantFrom("2027-03-10", "2027-03-24", "2027-09-29", "2027-10-27", "2027-04-01"),
      days: fc.integer({ min: 7, max: 40 }),
    });
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const start = (c.hour * 60 + c.minute + c.quiet.after) % 1440;
        const q = { start, end: (start + c.quiet.length) % 1440, days: [] };
        const window = c.window > 0 ? c.window : Math.max(1, c.quiet.after + c.window);
        const file = path.join(tmp, `recurring-${++launches}.csv`);
        fs.writeFileSync(
          file,
          ["id,email,timezone", ...c.zones.map((z, i) => `r${i},r${i}@example.com,${z}`)].join("\n") + "\n",
        );
        const now = DateTime.fromISO(`${c.now}T12:00:00Z`);
        const until = now.plus({ days: c.days }).toISODate()!;
        const args = [
          ...["--campaign", "prop", "--recipients", file, "--template", "t", "--every", c.every, "--until", until],
          ...[
            "--hour",
            String(c.hour),
            "--minute",
            String(c.minute),
            "--quiet-hours",
            `${hhmm(q.start)}-${hhmm(q.end)}`,
          ],
          ...["--window-minutes", String(window), "--now", now.toISO()!],
          ...["--dry-run", "--json", "--out", path.join(tmp, `out-${launches}`), "--templates", "none"],
        ];
        const r = await runMain(launchMain, args);
        if (r.code === 2 && !/falls inside the/.test(r.stderr)) {
          // Refused before planning: a time inside quiet hours, a window longer than the recurrence or the free time.
          assert.match(r.stderr, /is inside --quiet-hours|is too long for --every|longer than the longest free time/);
          return;
        }
        // Expected, per zone: rejected when its window is quiet every night; otherwise the nights a window is quiet.
        const cutoff = now.toMillis() + 6 * MINUTE; // now + fan-out (≤ 1 s) + the 5-minute margin, a minute early
        const firesOn = (d: DateTime) =>
          c.every === "daily" ? true : c.every === "weekdays" ? d.weekday <= 5 : d.weekday === 7;
        const quietNights: string[] = [];
        const rejected = new Set<string>();
        for (const raw of c.zones) {
          const zone = ZONES.includes(raw) || raw === "Europe/Paris" ? raw : "UTC";
          const normal = DateTime.fromObject(
            { year: 2027, month: 1, day: 15, hour: c.hour, minute: c.minute },
            { zone },
          );
          if (quietMinuteIn(q, zone, normal.toMillis(), window) !== undefined) {
            rejected.add(raw);
            continue;
          }
          for (let d = now.setZone(zone).startOf("day"); d.toISODate()! <= until; d = d.plus({ days: 1 })) {
            const t = firesOn(d) ? occurrenceAt(zone, d, c.hour, c.minute) : undefined;
            if (t === undefined || t < cutoff) continue;
            if (quietMinuteIn(q, zone, t, window) !== undefined) quietNights.push(`${zone} on ${d.toISODate()}`);
          }
        }
        if (r.code === 2) {
          assert.ok(quietNights.length > 0, `refused, but no window is quiet by luxon: ${r.stderr}`);
          const named = [...r.stderr.matchAll(/([A-Za-z_]+(?:\/[A-Za-z_]+)*) on (\d{4}-\d{2}-\d{2}) \(/g)].map(
            (m) => `${m[1]} on ${m[2]}`,
          );
          assert.deepStrictEqual(new Set(named), new Set(quietNights.slice(0, 8)), r.stderr);
          return;
        }
        assert.deepStrictEqual(quietNights, [], `planned (exit ${r.code}) with quiet windows: ${r.stderr}`);
        const s = JSON.parse(r.stdout);
        assert.strictEqual(s.rejected.byReason["quiet-hours"] ?? 0, rejected.size, r.stdout);
      }),
      { numRuns: runs(40) },
    );
  });

  it("journeys: created steps are 60 minutes apart, in order, outside quiet time over the window, never due before now + 1 minute; late ones within the grace are sent", () => {
    const stepArb = fc.oneof(
      fc.integer({ min: 0, max: 48 }).map((h) => ({ after: `+${h}h` })),
      fc
        .record({
          d: fc.integer({ min: 0, max: 3 }),
          at: fc.option(fc.integer({ min: 0, max: 1439 }), { nil: undefined }),
        })
        .map((s) => ({
          after: `+${s.d}d`,
          ...(s.at !== undefined ? { at: hhmm(s.at) } : {}),
        })),
    );
    const caseArb = fc.record({
      steps: fc.array(stepArb, { minLength: 1, maxLength: 4 }),
      quiet: fc.option(quietArb, { nil: undefined }),
      grace: fc.option(fc.integer({ min: 0, max: 240 }), { nil: undefined }),
      zone: fc.constantFrom(...ZONES),
      // Triggers around the spring-forward and fall-back weeks of 2026.
      trigger: fc.oneof(
        fc.integer({ min: 0, max: 6 * 1440 }).map((m) => Date.UTC(2026, 2, 4) + m * MINUTE + 17_000),
        fc.integer({ min: 0, max: 6 * 1440 }).map((m) => Date.UTC(2026, 9, 22) + m * MINUTE),
      ),
      delayMinutes: fc.integer({ min: -5, max: 300 }),
      window: fc.integer({ min: 1, max: 60 }),
    });
    fc.assert(
      fc.property(caseArb, (c) => {
        const raw = {
          name: "p",
          trigger: { source: "app", detailType: "Signup" },
          steps: c.steps.map((s, k) => ({ ...s, template: `t${k}` })),
          ...(c.quiet?.start !== undefined ? { quietHours: `${hhmm(c.quiet.start)}-${hhmm(c.quiet.end!)}` } : {}),
          ...(c.quiet?.days.length ? { quietDays: c.quiet.days.map((d) => DAY_NAMES[d]) } : {}),
          ...(c.grace !== undefined ? { lateGraceMinutes: c.grace } : {}),
        };
        let journey;
        try {
          journey = parseJourneys([raw], "p")[0];
        } catch (e) {
          // Only equal offsets are refused among these definitions.
          assert.match((e as Error).message, /has the same offset as/);
          return;
        }
        const now = c.trigger + c.delayMinutes * MINUTE;
        const event = {
          source: "app",
          "detail-type": "Signup",
          time: new Date(c.trigger).toISOString(),
          detail: { recipient: { id: "s", email: "s@example.com", timezone: c.zone } },
        };
        const target = {
          partition: "aws",
          targetRoleArn: "arn:aws:iam::123456789012:role/r",
          deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:q",
          fromAddress: "a@example.com",
          maxEventAgeSeconds: 3600,
          maxRetryAttempts: 3,
        };
        const d = decide(journey, "trigger", event, { target: target as any, windowMinutes: c.window }, now);
        assert.strictEqual(d.outcome, "enrol");
        if (d.outcome !== "enrol") return;
        const created = d.steps.filter((s) => s.status === "planned");
        const quiet = c.quiet && { ...c.quiet, days: journey.quietDays ? c.quiet.days : [] };
        let last: number | undefined;
        for (const s of created) {
          const t = Date.parse(s.utc);
          assert.ok(
            t >= now + MINUTE,
            `step ${s.step} at ${s.utc} is due before it can be created (now ${new Date(now).toISOString()})`,
          );
          if (last !== undefined) {
            assert.ok(t > last, `step ${s.step} before an earlier step`);
            assert.ok(t - last >= 60 * MINUTE, `step ${s.step} within 60 minutes of an earlier step`);
          }
          last = t;
          if (quiet)
            assert.strictEqual(
              quietMinuteIn(quiet, c.zone, t, c.window),
              undefined,
              `step ${s.step} at ${s.utc} touches quiet time`,
            );
          // A step sent late was handled within the grace after its time.
          if (s.late !== undefined) assert.ok(now - Date.parse(s.late) <= (c.grace ?? 60) * MINUTE);
        }
        for (const s of d.steps.filter((x) => x.status === "late"))
          assert.ok(now - Date.parse(s.utc) > (c.grace ?? 60) * MINUTE);
      }),
      { numRuns: runs(300) },
    );
  });
});

/**
 * Campaign files against the flags they stand for: random values (well-formed and hostile: 0012, 9.0, 0x1E, 1e1, a
 * 20-digit id) for random flags of the command, each setting (Flag.oneOf) wholly in the file or wholly on the command
 * line, the file in YAML (plain or quoted scalars) or JSON (numbers as numbers where they are JSON numbers). The run
 * from the file must be the flags' run: the same exit code, output and error line, and the same files, byte for byte.
 */
describe("campaign files, as properties", function () {
  this.timeout(120_000);
  const LIST = ["id,email,timezone,first_name,signup,send_hour"]
    .concat([
      "a1,ann@example.com,America/New_York,Ann,2026-03-15,",
      "a2,bob@example.com,Asia/Kathmandu,Bob,2026-03-16T10:00:00Z,7",
      "a3,cy@example.com,europe/paris,Cy,2026-03-17,",
      "a4,dee@example.com,Mars/Olympus,Dee,,",
      "a5,ann@example.com,UTC,Ann2,2026-03-18,22",
      "a6,eve@example.com,Australia/Lord_Howe,Eve,2026-03-19,",
    ])
    .join("\n");
  /** Values each flag may take (paths are relative to the case's folder). Booleans and lists are drawn apart. */
  const VALUES: Record<string, string[]> = {
    campaign: ["spring", "0012", "1e3", "0x1F", "12"],
    recipients: ["list.csv"],
    template: ["t", "0042", "spring-{variant}", "1e3"],
    schedules: ["5000", "5e3", "05000", "5000.0"],
    date: ["2026-03-20", "2026-03-08", "2026-3-20"],
    hour: ["9", "09", "9.0", "0x9", "1e1", "23", "2"],
    minute: ["0", "30", "0x1E", "30.0", "059", "7"],
    after: ["signup:+1d", "signup:+3h", "signup:+1e1d"],
    at: ["2026-03-20T08:00:00Z", "2026-03-20T08:00:00"],
    every: ["daily", "weekly:MON", "monthly:0x1"],
    until: ["2026-04-30", "2026-4-30"],
    "default-timezone": ["UTC", "Europe/Paris", "europe/paris"],
    "infer-zone": ["country", "none", "country,country", "latlon,country", "latlon", "postal,phone"],
    "ambiguous-zone": ["never-early", "skip", "late"],
    now: ["2026-03-10T12:00:00Z", "2026-03-20T08:30:00Z", "2026-03-10T12:00:00"],
    "quiet-hours": ["21:00-08:00", "1260-480", "03:00-04:00"],
    "quiet-days": ["SUN", "SAT,SUN", "1e1"],
    quiet: ["delay", "skip", "0"],
    holdout: ["10", "1e1", "10.0", "010", "0"],
    missed: ["skip", "send-now", "next-day", "0"],
    "grace-minutes": ["60", "6e1", "060", "60.0"],
    "window-minutes": ["5", "05", "5.0", "0x5", "1e1"],
    tps: ["10", "0.5", "1e1", ".5", "0x10"],
    "invocation-tps": ["1000", "1e3"],
    "ses-rate": ["14", "14.0", "1.4e1"],
    ramp: ["new-identity"],
    "sms-mps": ["1", "3", "01", "1.5"],
    "sms-daily-cap": ["10000", "2000", "1e4"],
    encoding: ["utf8", "latin1", "UTF8"],
    "create-tps": ["100", "1e2"],
    "margin-minutes": ["5", "05", "5.0", "0x5"],
    out: ["out"],
    templates: ["none", "templates-here"],
    "launch-id": ["L1", "12345678901234567890", "0012", "1e3"],
    "max-schedules": ["3", "1e1", "100"],
    "poll-seconds": ["5", "5.0"],
    outputs: ["outputs.json"],
    "timeout-seconds": ["60", "6e1"],
    channel: ["email", "sms", "fax"],
    "max-segments": ["3", "1", "03", "3.0"],
    "legal-hours": ["us", "us,ca", "none", "eu"],
    "legal-hours-miss": ["delay", "skip", "1e1"],
  };
  const LISTS: Record<string, string[]> = {
    step: ["+3d:followup", "+12h", "+1d", "+0x1d", "+1e1h", "+1d:sms:t-sms"],
    variant: ["A:50", "B:50", "A:45", "B:45", "C:10", "A:5e1", "a:50"],
    "zone-alias": ["mars/olympus=Europe/Paris", "EST=America/Chicago", "utc=Asia/Tokyo"],
  };
  // Flags a dry run cannot take here: --stack runs the Pulumi CLI; the others name AWS resources.
  const LEFT_OUT = new Set(["config", "stack", "region", "bucket", "state-machine-arn"]);

  /** The flags of each send-time rule and rate; a case takes one of each (or none), now and then a stray other. */
  const FORMS: Record<string, string[]> = {
    date: ["date", "hour", "minute"],
    after: ["after", "hour", "minute"],
    at: ["at"],
    every: ["every", "until", "hour", "minute"],
    tps: ["tps"],
    quotas: ["invocation-tps", "ses-rate"],
  };
  /**
   * Random values for random flags of `flags` (those in `always`, and those of the chosen rule and rate, mostly
   * given; any other, now and then), well-formed three times in four; each setting's flags on one side (file or
   * command line).
   */
  const caseOf = (flags: FlagTable, always: string[]) => {
    const names = Object.keys(flags).filter((n) => !LEFT_OUT.has(n));
    const groups = [...new Set(names.map((n) => flags[n].oneOf?.group ?? n))];
    const drawn = (name: string): fc.Arbitrary<string | boolean | string[]> => {
      const f = flags[name];
      if (f.type === "boolean") return fc.boolean();
      if (f.multiple) return fc.array(fc.constantFrom(...LISTS[name]), { minLength: 1, maxLength: 3 });
      return fc.oneof(
        { arbitrary: fc.constant(VALUES[name][0]), weight: 3 },
        { arbitrary: fc.constantFrom(...VALUES[name]), weight: 1 },
      );
    };
    // A stray way of giving a setting another case gives (two rules, --tps with --ses-rate) is rarer still.
    const given = (name: string, likely: boolean) =>
      fc.oneof(
        { arbitrary: drawn(name), weight: likely ? 9 : 1 },
        { arbitrary: fc.constant(undefined), weight: likely ? 1 : flags[name].oneOf ? 25 : 5 },
      );
    return fc
      .record({
        rule: fc.constantFrom("date", "after", "at", "every"),
        rate: fc.constantFrom("none", "tps", "quotas"),
        inFile: fc.record(Object.fromEntries(groups.map((g) => [g, fc.boolean()]))),
        json: fc.boolean(),
        quoted: fc.boolean(),
      })
      .chain((c) => {
        const likely = new Set([...always, ...FORMS[c.rule], ...(FORMS[c.rate] ?? [])]);
        return fc
          .record(Object.fromEntries(names.map((n) => [n, always.includes(n) ? drawn(n) : given(n, likely.has(n))])))
          .map((values) => ({ ...c, values }));
      });
  };

  /** The command line of `values` (paths within `dir`), and the campaign file's text for those in the file. */
  function write(
    flags: FlagTable,
    c: { values: Record<string, unknown>; inFile: Record<string, boolean>; json: boolean; quoted: boolean },
    dir: string,
  ) {
    const all: string[] = [];
    const rest: string[] = [];
    const doc: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(c.values)) {
      if (v === undefined) continue;
      const f = flags[name] as Flag;
      const args =
        v === true
          ? [`--${name}`]
          : v === false
            ? []
            : Array.isArray(v)
              ? v.flatMap((x) => [`--${name}`, x])
              : [
                  `--${name}`,
                  f.path && v !== "none" && !f.words?.includes(v as string)
                    ? path.join(dir, v as string)
                    : (v as string),
                ];
      all.push(...args);
      if (c.inFile[f.oneOf?.group ?? name]) doc[configKey(name, f)] = v;
      else rest.push(...args);
    }
    // A JSON number as written (1e1, 9.0, 20 digits), unless quoted: JSON's own text, which JSON.stringify would change.
    const jsonScalar = (v: unknown) =>
      typeof v === "string" && !c.quoted && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(v) ? v : JSON.stringify(v);
    const plain = (v: string) => {
      if (c.quoted) return JSON.stringify(v);
      const d = parseDocument(`k: ${v}`, { schema: "failsafe" });
      return d.errors.length || d.warnings.length || (d.toJS() as { k: unknown }).k !== v ? JSON.stringify(v) : v;
    };
    const text = c.json
      ? `{${Object.entries(doc)
          .map(
            ([k, v]) =>
              `${JSON.stringify(k)}: ${Array.isArray(v) ? `[${v.map(jsonScalar).join(", ")}]` : jsonScalar(v)}`,
          )
          .join(", ")}}`
      : Object.entries(doc)
          .map(([k, v]) =>
            Array.isArray(v)
              ? `${k}:\n${v.map((x) => `  - ${plain(x)}`).join("\n")}`
              : `${k}: ${typeof v === "boolean" ? v : plain(v as string)}`,
          )
          .join("\n") + "\n";
    return { all, rest, text };
  }

  let cases = 0;
  async function sameRuns(main: typeof launchMain, flags: FlagTable, c: Parameters<typeof write>[1], always: string[]) {
    const dir = path.join(tmp, `config-${++cases}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "list.csv"), LIST + "\n");
    fs.writeFileSync(path.join(dir, "outputs.json"), JSON.stringify({ maxSchedules: 12 }));
    const { all, rest, text } = write(flags, c, dir);
    const file = path.join(dir, c.json ? "campaign.json" : "campaign.yaml");
    fs.writeFileSync(file, text);
    const out = path.join(dir, "out");
    const files = () =>
      fs.existsSync(out)
        ? Object.fromEntries(fs.readdirSync(out).map((f) => [f, fs.readFileSync(path.join(out, f), "utf8")]))
        : {};
    const byFlags = await runMain(main, [...always, ...all]);
    const flagFiles = files();
    fs.rmSync(out, { recursive: true, force: true });
    const byFile = await runMain(main, [...always, "--config", file, ...rest]);
    assert.deepStrictEqual(
      { code: byFile.code, stdout: byFile.stdout, stderr: byFile.stderr, files: files() },
      { code: byFlags.code, stdout: byFlags.stdout, stderr: byFlags.stderr, files: flagFiles },
      `${text}\ncommand line: ${rest.join(" ")}`,
    );
  }

  it("launch-campaign: a file equal to a flag set plans what the flags plan, or is refused with the same line", async () => {
    // Always a dry run (placed at random like the others), to the case's folder.
    await fc.assert(
      fc.asyncProperty(
        caseOf(LAUNCH_FLAGS, ["dry-run", "out", "recipients", "campaign", "template", "now", "templates"]),
        async (c) => {
          fc.pre(c.values["dry-run"] === true);
          await sameRuns(launchMain, LAUNCH_FLAGS, c, []);
        },
      ),
      { numRuns: runs(30) },
    );
  });

  it("size-window: a file equal to a flag set sizes what the flags size, or is refused with the same line", async () => {
    await fc.assert(
      fc.asyncProperty(caseOf(SIZE_WINDOW.flags, ["recipients", "now", "templates"]), async (c) => {
        await sameRuns(sizeMain, SIZE_WINDOW.flags, c, []);
      }),
      { numRuns: runs(30) },
    );
  });
});
