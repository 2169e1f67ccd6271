/**
 * The launcher and size-window with the timing and audience rules, end to end on tests/fixtures/timing.csv.
 * Expected instants and buckets come from Python (zoneinfo, hashlib), not from this code, e.g.
 *   python3 -c "import hashlib; print(int.from_bytes(hashlib.sha256(b'winback:ana').digest()[:8], 'big') % 10000)"  # 5082
 *   python3 -c "from datetime import *; from zoneinfo import ZoneInfo as Z;
 *     print(datetime(2026,11,27,8,0,tzinfo=Z('America/New_York')).astimezone(timezone.utc))"             # 13:00Z
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { fanOutDefinition, FanOutParameters } from "../../infra/state-machines/fanout-definition";
import { parsePlanRow, PlanRow } from "../../infra/core/plan/plan-row";
import { main as launchMain } from "../../scripts/launch-campaign";
import { main as sizeMain } from "../../scripts/size-window";
import { runStateMachine, StatesError } from "../helpers/asl-interpreter";
import { runMain } from "../helpers/cli";

const FIXTURE = "tests/fixtures/timing.csv";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-timing-"));
let runs = 0;

async function launch(args: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  const r = await runMain(launchMain, ["--templates", "none", ...args, "--dry-run", "--out", out]);
  const read = (f: string) =>
    fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : undefined;
  const planText = read("plan.jsonl") ?? "";
  return {
    ...r,
    planText,
    plan: planText.split("\n").filter(Boolean).map(parsePlanRow),
    rejects: read("rejects.csv"),
    holdout: read("holdout.csv"),
    summary: JSON.parse(read("summary.json") ?? "null"),
  };
}

/** Win-back: 30 days after last_login at 10:00 local, a 36-hour reminder, quiet nights, an A/B test with a 10% holdout. */
const WINBACK = [
  "--campaign",
  "winback",
  "--recipients",
  FIXTURE,
  "--template",
  "winback",
  "--after",
  "last_login:+30d",
  "--hour",
  "10",
  "--step",
  "+36h:winback-2-{variant}",
  "--quiet-hours",
  "21:00-08:00",
  "--variant",
  "A:45",
  "--variant",
  "B:45:winback-b",
  "--holdout",
  "10",
  "--now",
  "2026-11-20T00:00:00Z",
];

const byStep = (plan: PlanRow[]) =>
  Object.fromEntries(plan.map((r) => [r.schedule_name, { utc: r.utc, variant: r.variant, template: r.template }]));

describe("timing and audience, end to end", () => {
  it("plans the win-back campaign: instants, variants, templates, rejects and the holdout", async () => {
    const r = await launch(WINBACK);
    assert.strictEqual(r.code, 0, r.stderr);
    // Buckets (campaign "winback"): ana 5082 B, bo 2683 A, chloe 9730 holdout, dmitri 6389 B, eunji 8247 B,
    // grace 9880 holdout; A = [0, 4500), B = [4500, 9000), holdout = [9000, 10000).
    assert.deepStrictEqual(byStep(r.plan), {
      // 2026-10-28 + 30 d at send_hour 7:30 EST is quiet → 08:00 EST; step 2 = 07:30 + 36 h = 11-28 19:30 EST
      "ana-1": { utc: "2026-11-27T13:00:00.000Z", variant: "B", template: "winback-b" },
      "ana-2": { utc: "2026-11-29T00:30:00.000Z", variant: "B", template: "winback-2-B" },
      // 2026-10-31T23:30Z is 11-01 in Paris: 12-01 10:00 CET; step 2 = 12-02 22:00 CET, quiet → 12-03 08:00 CET
      "bo-1": { utc: "2026-12-01T09:00:00.000Z", variant: "A", template: "winback" },
      "bo-2": { utc: "2026-12-03T07:00:00.000Z", variant: "A", template: "winback-2-A" },
      // send_at 2026-12-02T12:00 PST; step 2 = 12-04 00:00 PST, quiet → 08:00 PST
      "dmitri-1": { utc: "2026-12-02T20:00:00.000Z", variant: "B", template: "winback-b" },
      "dmitri-2": { utc: "2026-12-04T16:00:00.000Z", variant: "B", template: "winback-2-B" },
      // "2026-10-30 18:00:00+09" → 11-29 10:00 KST; step 2 = 11-30 22:00 KST, quiet → 12-01 08:00 KST
      "eunji-1": { utc: "2026-11-29T01:00:00.000Z", variant: "B", template: "winback-b" },
      "eunji-2": { utc: "2026-11-30T23:00:00.000Z", variant: "B", template: "winback-2-B" },
    });
    for (const row of r.plan) assert.strictEqual(row.schedule_expression, `at(${row.send_at})`);
    assert.strictEqual(
      r.rejects,
      [
        "line,id,reason",
        '7,femi,"last_login ""2026-11-01T10:00:00"" is a time without Z or an offset (ambiguous)"',
        '9,hiro,"send_hour ""25"": expected a whole hour 0–23"',
        `10,ines,"send_at ""2026-12-01T25:00"": expected a local time YYYY-MM-DDTHH:MM in the row's zone (no offset)"`,
        '11,jonas,"last_login """" is empty"',
        "",
      ].join("\n"),
    );
    // hiro's bucket (9305) is in the holdout range, but a row that could not be sent is a reject, not held out
    assert.strictEqual(r.holdout, "line,id,email\n4,chloe,chloe@example.com\n8,grace,grace@example.com\n");
    const s = r.summary;
    assert.strictEqual(s.rows, s.recipientsPlanned + s.rejected.total + s.heldOut);
    assert.deepStrictEqual([s.rows, s.recipientsPlanned, s.rejected.total, s.heldOut], [10, 4, 4, 2]);
    assert.deepStrictEqual(s.rejected.byReason, { "invalid-date": 2, "invalid-send-time": 2 });
    assert.deepStrictEqual(s.audience, {
      variants: [
        { name: "A", percent: 45, step1Template: "winback", recipients: 1, schedules: 2 },
        { name: "B", percent: 45, step1Template: "winback-b", recipients: 3, schedules: 6 },
      ],
      holdout: { percent: 10, recipients: 2 },
    });
    assert.deepStrictEqual(s.quiet, { rule: "21:00-08:00 local", policy: "delay", delayed: 4, skipped: 0 });
    assert.match(
      r.stdout,
      /^Campaign winback: 10 rows → 4 recipients planned, 8 schedules; 4 rejected \(invalid-date 2, invalid-send-time 2\); 2 held out$/m,
    );
    assert.match(r.stdout, /^  variants: A 45% \(winback\): 1; B 45% \(winback-b\): 3; holdout 10%: 2$/m);
    assert.match(
      r.stdout,
      /^  quiet time \(21:00-08:00 local, --quiet delay, over each send's 1-minute window\): 4 delayed, 0 skipped$/m,
    );
  });

  it("--json reports the same counts", async () => {
    const r = await launch([...WINBACK, "--json"]);
    const json = JSON.parse(r.stdout);
    assert.deepStrictEqual(
      [json.heldOut, json.audience.variants.map((v: { recipients: number }) => v.recipients), json.quiet.delayed],
      [2, [1, 3], 4],
    );
  });

  it("is deterministic: the same input and flags give a byte-identical plan", async () => {
    const [a, b] = [await launch(WINBACK), await launch(WINBACK)];
    assert.ok(a.planText.length > 0);
    assert.strictEqual(a.planText, b.planText);
    assert.strictEqual(a.holdout, b.holdout);
  });

  it("size-window with the same flags gives exactly the plan's instants", async () => {
    const plan = (await launch(WINBACK)).plan;
    const expected = new Map<string, number>();
    for (const row of plan) expected.set(row.utc, (expected.get(row.utc) ?? 0) + 1);
    const t = WINBACK.indexOf("--template");
    const sized = await runMain(sizeMain, [
      "--templates",
      "none",
      ...WINBACK.slice(0, t),
      ...WINBACK.slice(t + 2),
      "--json",
    ]);
    assert.strictEqual(sized.code, 0, sized.stderr);
    const report = JSON.parse(sized.stdout);
    assert.deepStrictEqual(
      report.instants.map((i: { utc: string; count: number }) => [i.utc, i.count]),
      [...expected.entries()].sort(),
    );
    assert.deepStrictEqual(
      [report.heldOut, report.rejected, report.quiet],
      [2, { "invalid-date": 2, "invalid-send-time": 2 }, { delayed: 4, skipped: 0 }],
    );
  });

  it("a step that quiet time moves onto another is not planned, and counted as a collision, not as a delayed send", async () => {
    const list = path.join(tmp, "early.csv");
    fs.writeFileSync(list, "id,email,timezone\nana,ana@example.com,UTC\n");
    // Step 1 at 06:00 UTC and step 2 (+1h) at 07:00 are both quiet (21:00-08:00): both would go at 08:00.
    const flags = [
      "--campaign",
      "early",
      "--recipients",
      list,
      "--date",
      "2026-12-01",
      "--hour",
      "6",
      "--step",
      "+1h:t2",
    ];
    const quiet = ["--quiet-hours", "21:00-08:00", "--now", "2026-11-20T00:00:00Z"];
    const r = await launch([...flags, "--template", "t", ...quiet]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.plan.map((p) => [p.step, p.utc]),
      [[1, "2026-12-01T08:00:00.000Z"]],
    );
    assert.deepStrictEqual(r.summary.collisions, [{ step: 2, with: 1, recipients: 1, reason: "too-close" }]);
    assert.deepStrictEqual(r.summary.quiet, { rule: "21:00-08:00 local", policy: "delay", delayed: 1, skipped: 0 });
    const sized = await runMain(sizeMain, ["--templates", "none", ...flags, ...quiet, "--json"]);
    assert.strictEqual(sized.code, 0, sized.stderr);
    assert.deepStrictEqual(JSON.parse(sized.stdout).quiet, { delayed: 1, skipped: 0 });
  });

  it("--quiet skip drops quiet sends; a row left with none is rejected quiet-hours", async () => {
    const r = await launch([
      "--campaign",
      "late",
      "--recipients",
      FIXTURE,
      "--template",
      "late",
      "--date",
      "2026-12-01",
      "--hour",
      "22",
      "--quiet-hours",
      "21:00-08:00",
      "--quiet",
      "skip",
      "--now",
      "2026-11-20T00:00:00Z",
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    // chloe's send_hour 20 and dmitri's send_at 12:00 are not quiet; the rest (22:00, ana's 07:30) are.
    assert.deepStrictEqual(
      r.plan.map((p) => [p.recipient_id, p.utc]),
      [
        ["chloe", "2026-12-01T11:00:00.000Z"], // 20:00 JST
        ["dmitri", "2026-12-02T20:00:00.000Z"], // 12:00 PST
      ],
    );
    assert.deepStrictEqual(r.summary.rejected.byReason, { "quiet-hours": 6, "invalid-send-time": 2 });
    assert.match(
      r.rejects!,
      /^2,ana,no send left: quiet time \(21:00-08:00 local\) skips every send that was not missed$/m,
    );
    assert.strictEqual(r.holdout, undefined);
  });

  it("the Black Friday eve send: one instant for everyone, quiet time still respected", async () => {
    const r = await launch([
      "--campaign",
      "bf-eve",
      "--recipients",
      FIXTURE,
      "--template",
      "bf-eve",
      "--at",
      "2026-11-26T09:00-05:00",
      "--quiet-hours",
      "22:00-07:00",
      "--now",
      "2026-11-20T00:00:00Z",
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const at = Object.fromEntries(r.plan.map((p) => [p.recipient_id, [p.utc, p.send_at, p.timezone]]));
    // 14:00Z is 09:00 in New York, 15:00 in Paris, 23:00 in Tokyo and Seoul (quiet → 07:00 the next day = 22:00Z),
    // 15:00 in Lagos, 01:00 in Sydney on the 27th (quiet → 07:00 AEDT = 20:00Z on the 26th).
    assert.deepStrictEqual(at.ana, ["2026-11-26T14:00:00.000Z", "2026-11-26T09:00:00", "America/New_York"]);
    assert.deepStrictEqual(at.bo, ["2026-11-26T14:00:00.000Z", "2026-11-26T15:00:00", "Europe/Paris"]);
    assert.deepStrictEqual(at.chloe, ["2026-11-26T22:00:00.000Z", "2026-11-27T07:00:00", "Asia/Tokyo"]);
    assert.deepStrictEqual(at.femi, ["2026-11-26T14:00:00.000Z", "2026-11-26T15:00:00", "Africa/Lagos"]);
    assert.deepStrictEqual(at.grace, ["2026-11-26T20:00:00.000Z", "2026-11-27T07:00:00", "Australia/Sydney"]);
    // send_hour is not read under --at; send_at still replaces the rule (dmitri), and a bad one is still rejected (ines)
    assert.deepStrictEqual(at.hiro, ["2026-11-26T14:00:00.000Z", "2026-11-26T14:00:00", "UTC"]);
    assert.deepStrictEqual(at.dmitri, ["2026-12-02T20:00:00.000Z", "2026-12-02T12:00:00", "America/Los_Angeles"]);
    assert.deepStrictEqual(r.summary.rejected.byReason, { "invalid-send-time": 1 });
  });

  it("best hour per recipient: send_hour and send_minute replace --hour and --minute", async () => {
    const r = await launch([
      "--campaign",
      "best",
      "--recipients",
      FIXTURE,
      "--template",
      "t",
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--now",
      "2026-11-20T00:00:00Z",
    ]);
    const at = Object.fromEntries(r.plan.map((p) => [p.recipient_id, p.utc]));
    assert.strictEqual(at.ana, "2026-12-01T12:30:00.000Z"); // 07:30 EST
    assert.strictEqual(at.chloe, "2026-12-01T11:00:00.000Z"); // 20:00 JST
    assert.strictEqual(at.grace, "2026-12-01T11:00:00.000Z"); // 22:00 AEDT
    assert.strictEqual(at.bo, "2026-12-01T08:00:00.000Z"); // --hour 9 CET
    // control columns are not personalization; the --after column would be (last_login is)
    const data = r.plan.find((p) => p.recipient_id === "ana")!.template_data;
    assert.deepStrictEqual(Object.keys(data), ["first_name", "last_login", "step"]);
  });

  it("{variant} in --template: each variant gets its own step-1 template", async () => {
    const args = WINBACK.map((a, i) =>
      WINBACK[i - 1] === "--template" ? "wb-{variant}" : a === "B:45:winback-b" ? "B:45" : a,
    );
    const r = await launch(args);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.plan.filter((p) => p.step === 1).map((p) => [p.recipient_id, p.template]),
      [
        ["ana", "wb-B"],
        ["bo", "wb-A"],
        ["dmitri", "wb-B"],
        ["eunji", "wb-B"],
      ],
    );
    // {variant} without variants is refused
    const bad = await runMain(launchMain, [
      "--templates",
      "none",
      "--campaign",
      "c",
      "--recipients",
      FIXTURE,
      "--template",
      "wb-{variant}",
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--dry-run",
      "--out",
      path.join(tmp, "bad"),
    ]);
    assert.strictEqual(bad.code, 2);
    assert.match(bad.stderr, /--template: \{variant\} in a template name needs --variant/);
  });

  it("bad flags are one line and exit 2", async () => {
    const common = ["--campaign", "c", "--recipients", FIXTURE, "--template", "t", "--now", "2026-11-20T00:00:00Z"];
    const cases: [string[], RegExp][] = [
      [
        ["--date", "2026-12-01", "--hour", "9", "--at", "2026-12-01T09:00Z"],
        /^error: --date and --at are two send-time rules/,
      ],
      [
        ["--date", "2026-12-01", "--hour", "9", "--variant", "A:50", "--variant", "B:40"],
        /the percents must sum to 100 \(50 \+ 40 = 90\)/,
      ],
      [
        ["--date", "2026-12-01", "--hour", "9", "--step", "+1d:r-{variant}"],
        /\{variant\} in a template name needs --variant/,
      ],
      [
        ["--date", "2026-12-01", "--hour", "9", "--quiet-hours", "08:00-08:00"],
        /--quiet-hours 08:00-08:00: start and end are the same/,
      ],
      [["--date", "2026-12-01", "--hour", "9", "--quiet-days", "SAT,SOM"], /--quiet-days SAT,SOM: unknown day "SOM"/],
      [["--after", "signup:+3d", "--hour", "9"], /:1: --after signup: the header has no column "signup"/],
      // A flag that takes one value, given twice, is not "the last one wins" (a 20% holdout silently became 10%).
      [
        [
          "--date",
          "2026-12-01",
          "--hour",
          "9",
          "--variant",
          "A:45",
          "--variant",
          "B:45",
          "--holdout",
          "20",
          "--holdout",
          "10",
        ],
        /^error: --holdout is given twice \(20, 10\): give it once/,
      ],
      [
        ["--date", "2026-12-01", "--hour", "9", "--campaign", "other"],
        /^error: --campaign is given twice \(c, other\)/,
      ],
    ];
    for (const [flags, message] of cases) {
      const r = await runMain(launchMain, [
        "--templates",
        "none",
        ...common,
        ...flags,
        "--dry-run",
        "--out",
        path.join(tmp, "bad"),
      ]);
      assert.strictEqual(r.code, 2, `${flags.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.strictEqual(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
  });

  it("the fan-out turns a plan with variants into CreateSchedule requests with the plan's expressions", async () => {
    const r = await launch(WINBACK);
    const params: FanOutParameters = {
      partition: "aws",
      targetRoleArn: "arn:aws:iam::123456789012:role/target",
      deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
      resultsBucket: "bucket",
      fromAddress: "news@mail.example.com",
      configurationSetName: "sendtime-dev",
      maxConcurrency: 10,
      batchSize: 3,
      innerConcurrency: 2,
      toleratedFailurePercentage: 0,
      maxEventAgeSeconds: 7200,
      maxRetryAttempts: 5,
      senderArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev",
    };
    const requests: any[] = [];
    runStateMachine(
      fanOutDefinition(params),
      {
        campaign_id: "winback",
        plan_bucket: "bucket",
        plan_key: "plans/winback/x.jsonl",
        window_minutes: 1,
        campaign_tag: "winback",
      },
      {
        getObject: () => r.planText,
        sdk: (service, action, p) => {
          if (action === "createScheduleGroup") return {};
          if (action !== "createSchedule") throw new StatesError("Unexpected", `${service}.${action}`);
          requests.push(p);
          return { ScheduleArn: "arn" };
        },
      },
    );
    assert.strictEqual(requests.length, r.plan.length);
    const byName = new Map(requests.map((q) => [q.Name, q]));
    for (const row of r.plan) {
      const q = byName.get(row.schedule_name);
      assert.strictEqual(q.ScheduleExpression, row.schedule_expression);
      assert.strictEqual(q.ScheduleExpressionTimezone, row.timezone);
      const { bulk } = JSON.parse(q.Target.Input);
      assert.strictEqual(bulk.DefaultContent.Template.TemplateName, row.template);
      assert.deepStrictEqual(
        bulk.DefaultEmailTags.find((t: { Name: string }) => t.Name === "variant"),
        { Name: "variant", Value: row.variant },
      );
    }
    // the quiet-delayed first step of ana: the expression is the delayed local time
    assert.strictEqual(byName.get("ana-1").ScheduleExpression, "at(2026-11-27T08:00:00)");
  });
});

describe("the summary counts what the plan holds", () => {
  it("with more distinct send times than are counted at once (60,100 rows, each its own send_at)", async () => {
    // Rows sharing a zone and send time are counted together and taken into the summary in batches of 50,000 kinds;
    // here every row has its own, the last 100 repeat the first 100's, and some rows' zone is unknown (defaulted).
    const zones = ["UTC", "Asia/Kolkata", "America/New_York", "Mars/Olympus"];
    const base = Date.UTC(2026, 11, 10); // send_at values from 2026-12-10T00:00 local, a minute apart
    const lines = ["id,email,timezone,send_at"];
    const rows: { zone: string; hour: number; minute: number }[] = [];
    for (let i = 0; i < 60_100; i++) {
      const n = i < 60_000 ? i : i - 60_000;
      const at = new Date(base + n * 60_000).toISOString().slice(0, 16);
      lines.push(`u${i},u${i}@example.com,${zones[n % 4]},${at}`);
      rows.push({ zone: zones[n % 4], hour: Math.floor(n / 60) % 24, minute: n % 60 });
    }
    const file = path.join(tmp, "distinct-send-times.csv");
    fs.writeFileSync(file, lines.join("\n") + "\n");
    const r = await launch([
      ...[
        "--campaign",
        "kinds",
        "--recipients",
        file,
        "--template",
        "t-{variant}",
        "--date",
        "2026-12-10",
        "--hour",
        "9",
      ],
      ...[
        "--step",
        "+36h:t2",
        "--quiet-hours",
        "22:00-07:00",
        "--variant",
        "A:45",
        "--variant",
        "B:45",
        "--holdout",
        "10",
      ],
      ...["--now", "2026-12-01T00:00:00Z", "--max-schedules", "1000000"],
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const s = r.summary;
    // Independent counts: the plan's own lines, the holdout file, and the quiet hours by hand (22:00-07:00 local;
    // step 2 is 36 hours after step 1 as requested, 12 hours later on the clock: no zone here changes offset).
    const heldOut = new Set(
      (r.holdout ?? "")
        .split("\n")
        .slice(1, -1)
        .map((l) => l.split(",")[1]),
    );
    // Quiet time covers each send's window: W = ⌈60,101 lines × 2 steps ÷ 1,000/s ÷ 60⌉ = 3 minutes, the bound the
    // computed window cannot exceed; a send at 21:58 or 21:59 has minutes of its window after 22:00.
    const W = Math.ceil((60_101 * 2) / 1_000 / 60);
    assert.strictEqual(s.window.quietCheckedMinutes, W);
    assert.ok(s.window.minutes <= W);
    const quiet = (h: number, m: number) => h >= 22 || h < 7 || (h === 21 && m + W > 60);
    let delayed = 0,
      defaulted = 0;
    rows.forEach((row, i) => {
      if (heldOut.has(`u${i}`)) return;
      delayed += Number(quiet(row.hour, row.minute)) + Number(quiet((row.hour + 12) % 24, row.minute));
      defaulted += Number(row.zone === "Mars/Olympus");
    });
    const count = (f: (p: PlanRow) => boolean) => r.plan.filter(f).length;
    const recipients = (v: string) => new Set(r.plan.filter((p) => p.variant === v).map((p) => p.recipient_id)).size;
    assert.strictEqual(s.rows, 60_100);
    assert.strictEqual(s.heldOut, heldOut.size);
    assert.strictEqual(s.recipientsPlanned, 60_100 - heldOut.size);
    assert.strictEqual(s.schedules, r.plan.length);
    assert.strictEqual(r.plan.length, 2 * s.recipientsPlanned);
    assert.deepStrictEqual(
      s.steps.map((x: { schedules: number }) => x.schedules),
      [count((p) => p.step === 1), count((p) => p.step === 2)],
    );
    assert.deepStrictEqual(
      s.audience.variants.map((v: { recipients: number; schedules: number }) => [v.recipients, v.schedules]),
      [
        [recipients("A"), count((p) => p.variant === "A")],
        [recipients("B"), count((p) => p.variant === "B")],
      ],
    );
    assert.deepStrictEqual(
      s.scheduled,
      [1, 2].flatMap((step) =>
        ["A", "B"].map((variant) => ({
          step,
          variant,
          schedules: count((p) => p.step === step && p.variant === variant),
        })),
      ),
    );
    assert.deepStrictEqual(s.quiet, { rule: "22:00-07:00 local", policy: "delay", delayed, skipped: 0 });
    assert.strictEqual(s.zones.defaulted, defaulted);
    const utcs = r.plan.map((p) => p.utc).sort();
    assert.deepStrictEqual([s.firstSend, s.lastSend], [utcs[0], utcs[utcs.length - 1]]);
  });
});
