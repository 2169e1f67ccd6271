/**
 * Recurring sends (`--every … --until …`): the occurrences in a zone, the launcher's plan, the fan-out's requests,
 * the flags it refuses, size-window, and the Pinpoint importer's command. Expected instants come from luxon (its own
 * IANA data through Intl) or by hand, never from the code under test.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DateTime } from "luxon";
import { campaignTag } from "../../infra/core/send/email-events";
import { fanOutDefinition, FanOutParameters } from "../../infra/state-machines/fanout-definition";
import { parsePlanRow } from "../../infra/core/plan/plan-row";
import { RecurringTime } from "../../infra/core/plan/schedule-expression";
import { main as importMain } from "../../scripts/import-pinpoint";
import { main as launchMain } from "../../scripts/launch-campaign";
import { main as sizeMain } from "../../scripts/size-window";
import { endOfLocalDate, nextOccurrence, occurrences } from "../../infra/core/timing/recurrence";
import { runStateMachine } from "../helpers/asl-interpreter";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-recurring-"));
let runs = 0;
const write = (name: string, text: string) => {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
};

/** The instant of a local wall-clock time in `zone`, by luxon; undefined when that time does not exist (a DST gap). */
function luxonInstant(zone: string, y: number, mo: number, d: number, h: number, mi: number): number | undefined {
  const t = DateTime.fromObject({ year: y, month: mo, day: d, hour: h, minute: mi }, { zone });
  return t.hour === h && t.minute === mi ? t.toMillis() : undefined;
}
const iso = (ms: number) => new Date(ms).toISOString();

async function dryRun(args: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  const r = await runMain(launchMain, ["--templates", "none", ...args, "--dry-run", "--out", out]);
  const read = (f: string) => (fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : "");
  return {
    ...r,
    plan: read("plan.jsonl").split("\n").filter(Boolean).map(parsePlanRow),
    planText: read("plan.jsonl"),
    rejects: read("rejects.csv"),
    summary: JSON.parse(read("summary.json") || "null"),
  };
}

const DIGEST = write(
  "digest.csv",
  [
    "id,email,timezone,first_name",
    "ny,ny@example.com,America/New_York,Nina",
    "kat,kat@example.com,Asia/Kathmandu,Bikash",
    "kir,kir@example.com,Pacific/Kiritimati,Teuea",
    "lhi,lhi@example.com,Australia/Lord_Howe,Lou",
    "none,none@example.com,,Emma",
  ].join("\n") + "\n",
);
const weekly = (...more: string[]) => [
  "--campaign",
  "digest",
  "--recipients",
  DIGEST,
  "--template",
  "weekly-digest",
  "--every",
  "weekly:MON,THU",
  "--until",
  "2027-03-31",
  "--hour",
  "9",
  "--now",
  "2026-11-30T12:00:00Z",
  ...more,
];

describe("recurring sends", () => {
  describe("occurrences in a zone, as Scheduler evaluates a cron", () => {
    const daily = (hour: number, minute: number): RecurringTime => ({ recurrence: { kind: "daily" }, hour, minute });

    it("daily 02:30 in New York skips the spring-forward day (no 02:30) and fires once on the fall-back day", () => {
      const zone = "America/New_York";
      const got = occurrences(daily(2, 30), zone, Date.UTC(2027, 2, 12), Date.UTC(2027, 2, 17)).map(iso);
      const want = [12, 13, 14, 15, 16]
        .map((d) => luxonInstant(zone, 2027, 3, d, 2, 30))
        .filter((t): t is number => t !== undefined)
        .map(iso);
      assert.strictEqual(want.length, 4, "luxon: 2027-03-14 02:30 does not exist in New York");
      assert.deepStrictEqual(got, want);
      // 2027-11-07 01:30 happens twice (EDT, then EST): one send, at the earlier (05:30Z, by hand).
      const fallBack = occurrences(daily(1, 30), zone, Date.UTC(2027, 10, 7), Date.UTC(2027, 10, 8));
      assert.deepStrictEqual(fallBack.map(iso), ["2027-11-07T05:30:00.000Z"]);
    });

    it("weekly:MON,THU and weekdays fire on those local days only, in the recipient's zone", () => {
      const zone = "Pacific/Kiritimati"; // UTC+14: its Monday 09:00 is Sunday 19:00 UTC
      const mondayThursday: RecurringTime = { recurrence: { kind: "weekly", days: [1, 4] }, hour: 9, minute: 0 };
      const got = occurrences(mondayThursday, zone, Date.UTC(2026, 10, 29), Date.UTC(2026, 11, 11)).map(iso);
      // By hand: Mondays 2026-11-30 and 12-07, Thursdays 12-03 and 12-10, at 09:00+14:00.
      assert.deepStrictEqual(got, [
        "2026-11-29T19:00:00.000Z",
        "2026-12-02T19:00:00.000Z",
        "2026-12-06T19:00:00.000Z",
        "2026-12-09T19:00:00.000Z",
      ]);
      const weekdays = occurrences(
        { recurrence: { kind: "weekdays" }, hour: 9, minute: 0 },
        "UTC",
        Date.UTC(2026, 10, 27),
        Date.UTC(2026, 11, 5),
      );
      // 2026-11-27 is a Friday; then Monday 11-30 to Friday 12-04.
      assert.deepStrictEqual(
        weekdays.map((t) => iso(t).slice(0, 10)),
        ["2026-11-27", "2026-11-30", "2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04"],
      );
    });

    it("monthly:31 sends nothing in months without a 31st; the end is local midnight after --until (luxon)", () => {
      const t: RecurringTime = { recurrence: { kind: "monthly", day: 31 }, hour: 9, minute: 0 };
      const got = occurrences(t, "Europe/Paris", Date.UTC(2027, 0, 1), Date.UTC(2027, 7, 1)).map((ms) =>
        iso(ms).slice(0, 10),
      );
      assert.deepStrictEqual(got, ["2027-01-31", "2027-03-31", "2027-05-31", "2027-07-31"]);
      for (const zone of ["Asia/Kathmandu", "America/New_York", "Pacific/Kiritimati", "Australia/Lord_Howe"])
        assert.strictEqual(
          iso(endOfLocalDate(zone, { year: 2027, month: 3, day: 31 })),
          DateTime.fromObject({ year: 2027, month: 4, day: 1 }, { zone }).toUTC().toISO(),
          zone,
        );
      assert.strictEqual(
        nextOccurrence(t, "Europe/Paris", Date.UTC(2027, 3, 1), Date.UTC(2027, 4, 1)),
        undefined,
        "no 31 April",
      );
    });
  });

  describe("launch-campaign --every", () => {
    it("plans one cron schedule per recipient in its zone, from the launch cutoff to local midnight after --until", async () => {
      const r = await dryRun(weekly());
      assert.strictEqual(r.code, 0, r.stderr);
      // The cutoff: now + 6 lines at 4,750/s (1 s) + 5 minutes.
      const start = "2026-11-30T12:05:01.000Z";
      const byId = new Map(r.plan.map((row) => [row.recipient_id, row]));
      for (const [id, zone] of [
        ["ny", "America/New_York"],
        ["kat", "Asia/Kathmandu"],
        ["kir", "Pacific/Kiritimati"],
        ["lhi", "Australia/Lord_Howe"],
        ["none", "UTC"],
      ]) {
        const row = byId.get(id)!;
        assert.strictEqual(row.schedule_expression, "cron(0 9 ? * MON,THU *)", id);
        assert.strictEqual(row.timezone, zone, id);
        assert.strictEqual(row.start_date, start, id);
        assert.strictEqual(
          row.end_date,
          DateTime.fromObject({ year: 2027, month: 4, day: 1 }, { zone }).toUTC().toISO(),
          id,
        );
        // The first Monday or Thursday 09:00 local at or after the start, by luxon.
        let first: number | undefined;
        for (let d = 0; first === undefined; d++) {
          const day = DateTime.fromISO("2026-11-29", { zone }).plus({ days: d });
          const at = luxonInstant(zone, day.year, day.month, day.day, 9, 0);
          if ((day.weekday === 1 || day.weekday === 4) && at !== undefined && at >= Date.parse(start)) first = at;
        }
        assert.strictEqual(row.utc, iso(first), id);
        assert.strictEqual(
          DateTime.fromISO(row.send_at, { zone }).toMillis(),
          first,
          `${id}: send_at is the first occurrence's wall clock`,
        );
      }
      assert.strictEqual(r.summary.schedules, 5);
      assert.deepStrictEqual(r.summary.recurring, {
        startDate: start,
        lastEndDate: "2027-04-01T04:00:00.000Z", // New York, EDT from 2027-03-14: the latest end of the five zones
        sizedOnDays: 14,
      });
      assert.match(r.stdout, /send time: every Monday, Thursday at 09:00 local until 2027-03-31/);
      assert.doesNotMatch(r.stdout, /missed \(--missed/);
    });

    it("variants split the recipients as for a one-time send, each variant's template on its schedules", async () => {
      const r = await dryRun(weekly("--variant", "A:50", "--variant", "B:50:digest-b"));
      assert.strictEqual(r.code, 0, r.stderr);
      assert.ok(r.plan.every((p) => (p.variant === "B" ? p.template === "digest-b" : p.template === "weekly-digest")));
      const lines = r.stdout.split("\n");
      assert.match(
        lines[lines.findIndex((l) => l.startsWith("  steps:")) + 1],
        /^  variants: A 50% \(weekly-digest\): \d+; B 50% \(digest-b\): \d+$/,
      );
    });

    it("the fan-out creates that plan's schedules: cron(...), the zone, StartDate and EndDate", async () => {
      const r = await dryRun(weekly());
      const params: FanOutParameters = {
        partition: "aws",
        targetRoleArn: "arn:aws:iam::123456789012:role/target",
        deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
        resultsBucket: "b",
        fromAddress: "news@example.com",
        configurationSetName: "cs",
        maxConcurrency: 2,
        batchSize: 2,
        innerConcurrency: 2,
        toleratedFailurePercentage: 0,
        maxEventAgeSeconds: 3600,
        maxRetryAttempts: 3,
        senderArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev",
      };
      const requests: any[] = [];
      runStateMachine(
        fanOutDefinition(params),
        {
          campaign_id: "digest",
          plan_bucket: "b",
          plan_key: "k",
          window_minutes: r.summary.window.minutes,
          campaign_tag: campaignTag("digest"),
        },
        {
          getObject: () => r.planText,
          sdk: (_s, action, request) => {
            if (action === "createSchedule") requests.push(request);
            return {};
          },
        },
      );
      assert.strictEqual(requests.length, 5);
      const kat = requests.find((q) => q.Name === "kat-1");
      assert.deepStrictEqual(
        [kat.ScheduleExpression, kat.ScheduleExpressionTimezone, kat.StartDate, kat.EndDate, kat.ActionAfterCompletion],
        // Kathmandu is UTC+05:45 all year: local midnight 2027-04-01 is 2027-03-31T18:15Z (by hand).
        ["cron(0 9 ? * MON,THU *)", "Asia/Kathmandu", "2026-11-30T12:05:01.000Z", "2027-03-31T18:15:00.000Z", "DELETE"],
      );
      for (const q of requests) assert.ok(q.StartDate && q.EndDate && q.ScheduleExpression.startsWith("cron("), q.Name);
    });

    it("a row's send_hour makes its own cron; a send_at value or a send_hour in quiet hours rejects the row", async () => {
      const file = write(
        "hours.csv",
        "id,email,timezone,send_hour,send_at\na,a@example.com,Europe/Paris,7,\nb,b@example.com,Europe/Paris,23,\nc,c@example.com,Europe/Paris,,2026-12-03T09:00\n",
      );
      const r = await dryRun([...weekly("--quiet-hours", "22:00-06:00")].map((a) => (a === DIGEST ? file : a)));
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(
        r.plan.map((p) => [p.recipient_id, p.schedule_expression]),
        [["a", "cron(0 7 ? * MON,THU *)"]],
      );
      assert.match(
        r.rejects,
        /^3,b,no send left: its recurring time 23:00 local is in quiet time \(22:00-06:00 local\)/m,
      );
      assert.match(r.rejects, /^4,c,"send_at ""2026-12-03T09:00"" is a one-time send time/m);
      assert.deepStrictEqual(r.summary.rejected.byReason, { "quiet-hours": 1, "invalid-send-time": 1 });
    });

    it("a row whose recurring time is free but whose window reaches quiet time is rejected saying so", async () => {
      // 21:30 is not quiet under 22:00-06:00, but a 60-minute window [21:30, 22:30) is from 22:00 on.
      const file = write("late.csv", "id,email,timezone,send_hour,send_minute\nb,b@example.com,Europe/Paris,21,30\n");
      const r = await dryRun(
        [...weekly("--quiet-hours", "22:00-06:00", "--window-minutes", "60")].map((a) => (a === DIGEST ? file : a)),
      );
      assert.strictEqual(r.code, 1, r.stderr); // nothing would be sent
      assert.deepStrictEqual(r.plan, []);
      assert.match(
        r.rejects,
        /^2,b,no send left: its recurring time 21:30 local with its 60-minute window reaches quiet time \(22:00-06:00 local\) at every occurrence/m,
      );
    });

    it("refuses what does not make sense for a recurring send, one line naming the flag (exit 2)", async () => {
      const cases: [string[], RegExp][] = [
        [
          ["--until", "2027-01-01"].concat(weekly().slice(0, 6), ["--date", "2026-12-01", "--hour", "9"]),
          /^--until 2027-01-01 goes with --every/,
        ],
        [
          weekly().filter((_, i, a) => a[i] !== "--until" && a[i - 1] !== "--until"),
          /^--every weekly:MON,THU needs --until YYYY-MM-DD/,
        ],
        [weekly("--date", "2026-12-01"), /^--date and --every are two send-time rules/],
        [weekly("--step", "+3d:followup"), /^--step \+3d:followup does not apply to --every weekly:MON,THU/],
        [weekly("--missed", "send-now"), /^--missed does not apply to --every/],
        [weekly("--grace-minutes", "30"), /^--grace-minutes does not apply to --every/],
        [weekly("--quiet-days", "SAT,SUN"), /^--quiet-days SAT,SUN does not apply to --every .*weekly:MON,TUE/],
        [weekly("--quiet-hours", "08:00-10:00"), /^--hour\/--minute 09:00 is inside --quiet-hours 08:00-10:00/],
        [
          weekly().map((a) => (a === "weekly:MON,THU" ? "weekly:MON,FUN" : a)),
          /^--every weekly:MON,FUN: expected daily, weekdays/,
        ],
        [weekly().map((a) => (a === "weekly:MON,THU" ? "monthly:32" : a)), /^--every monthly:32: expected/],
        [
          weekly().map((a) => (a === "2027-03-31" ? "2026-11-28" : a)),
          /^--until 2026-11-28: that date has ended in every time zone/,
        ],
        [weekly().map((a) => (a === "2027-03-31" ? "2032-01-01" : a)), /^--until 2032-01-01: more than 5 years ahead/],
        [weekly().map((a) => (a === "2027-03-31" ? "2027-02-30" : a)), /^--until 2027-02-30: no such date/],
      ];
      for (const [args, message] of cases) {
        const r = await dryRun(args);
        assert.strictEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.match(r.stderr.trim().replace(/^error: /, ""), message);
        assert.strictEqual(r.stderr.trim().split("\n").length, 1);
      }
    });

    it("an --until that ends before the first occurrence plans nothing (exit 1), each row saying why", async () => {
      // Monday 2026-11-30 15:00Z: the last Monday 09:00 of these zones, New York's (14:00Z), has passed; no Thursday.
      const args = weekly().map((a) =>
        a === "2027-03-31" ? "2026-11-30" : a === "2026-11-30T12:00:00Z" ? "2026-11-30T15:00:00Z" : a,
      );
      const r = await dryRun(args);
      assert.strictEqual(r.code, 1, r.stderr);
      assert.strictEqual(r.plan.length, 0);
      assert.match(r.stdout, /Nothing would be sent/);
      assert.match(
        r.rejects,
        /^3,kat,"no occurrence \(every Monday, Thursday at 09:00 local until 2026-11-30\) after 2026-11-30T15:05:01\.000Z/m,
      );
    });
  });

  it("size-window --every sizes the spike of one occurrence and its neighbours; a schedule is counted once", async () => {
    const many = write(
      "many.csv",
      "id,email,timezone\n" +
        Array.from(
          { length: 600 },
          (_, i) => `u${i},u${i}@example.com,${i % 2 ? "America/New_York" : "America/Bogota"}`,
        ).join("\n") +
        "\n",
    );
    const size = async (until: string) => {
      const r = await runMain(sizeMain, [
        "--templates",
        "none",
        ...[
          "--recipients",
          many,
          "--every",
          "daily",
          "--until",
          until,
          "--hour",
          "9",
          "--tps",
          "5",
          "--now",
          "2026-11-30T12:00:00Z",
          "--json",
        ],
      ]);
      assert.strictEqual(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    const r = await size("2027-06-30");
    assert.strictEqual(r.schedules, 600);
    // New York (EST) and Bogota are both UTC-5 in December: 600 sends at 14:00Z each day; at 5/s that is 2 minutes.
    assert.strictEqual(r.windowMinutes, 2);
    assert.deepStrictEqual(r.peak, { utc: "2026-11-30T14:00:00.000Z", count: 600 });
    assert.strictEqual(r.instants.length, 14, "two weeks of daily occurrences");
    const text = await runMain(sizeMain, [
      "--templates",
      "none",
      ...[
        "--recipients",
        many,
        "--every",
        "daily",
        "--until",
        "2027-06-30",
        "--hour",
        "9",
        "--tps",
        "5",
        "--now",
        "2026-11-30T12:00:00Z",
      ],
    ]);
    assert.match(
      text.stdout,
      /^Recipients: 600 rows × 1 step = 600 schedules\n  recurring: one schedule per recipient; below, its occurrences in the first 14 days/,
    );
    assert.match(
      text.stdout,
      /\nFirst occurrence 2026-11-30 14:00 UTC: a launch after 2026-11-30 13:54 UTC starts with a later one/,
    );
  });

  it("size-window --every: a spike is sized whole even when the first occurrences of its zones fall in different weeks", async () => {
    // Launched Monday 2026-11-30 09:30Z: UTC's Monday 09:00 has passed (its first is 12-07 09:00Z), Cape Verde's
    // (UTC-1, 10:00Z) has not. On 12-07 both send, an hour apart: 1,800 each at 0.1/s needs, by hand, a window W with
    // 2 × 1,800 / (60 W) ≤ 0.1, so W = 600 minutes (one spike alone would need 300).
    const rows = Array.from(
      { length: 3600 },
      (_, i) => `u${i},u${i}@example.com,${i % 2 ? "Atlantic/Cape_Verde" : "UTC"}`,
    );
    const file = write("two-zones.csv", "id,email,timezone\n" + rows.join("\n") + "\n");
    const r = await runMain(sizeMain, [
      "--templates",
      "none",
      ...["--recipients", file, "--every", "weekly:MON", "--until", "2027-06-30", "--hour", "9", "--tps", "0.1"],
      ...["--now", "2026-11-30T09:30:00Z", "--json"],
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(JSON.parse(r.stdout).windowMinutes, 600);
  });

  it("the Pinpoint importer's command for a recurring campaign is one the launcher accepts and plans", async () => {
    const campaign = JSON.parse(fs.readFileSync("tests/fixtures/pinpoint/campaign-weekly.json", "utf8"));
    campaign.CampaignResponse.Schedule.QuietTime = { Start: "21:00", End: "08:00" };
    const file = write("pinpoint-weekly.json", JSON.stringify(campaign));
    const imported = await runMain(importMain, [
      "--campaign-file",
      file,
      "--json",
      "--recipients",
      DIGEST,
      "--out",
      path.join(tmp, "pinpoint-weekly"),
    ]);
    assert.strictEqual(imported.code, 0, imported.stderr);
    const command: string[] = JSON.parse(imported.stdout).campaign.command;
    assert.ok(command.includes("--every") && command.includes("--quiet-hours"), command.join(" "));
    const r = await dryRun([...command, "--now", "2026-12-01T00:00:00Z"]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.ok(r.plan.length === 5 && r.plan.every((p) => p.schedule_expression === "cron(0 14 ? * THU *)"));
  });
});
