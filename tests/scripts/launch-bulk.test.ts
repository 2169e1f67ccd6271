/**
 * launch-campaign --bulk and size-window --bulk: the bulk plan as the fan-out and SendBulkEmail would receive it.
 * Expected instants come from luxon, expected links from the unsubscribe contract, expected sizes from
 * JSON.stringify of the SES request; none from the planner's own output.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import fc from "fast-check";
import { DateTime } from "luxon";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { mockClient } from "aws-sdk-client-mock";
import { main } from "../../scripts/launch-campaign";
import { main as sizeWindow } from "../../scripts/size-window";
import { isValidSchedulerName, scheduleName } from "../../infra/core/plan/naming";
import {
  BulkEntry,
  BulkPlanRow,
  bulkEmailEntry,
  bulkEntryInputBytes,
  bulkEntryJson,
  bulkEntrySizes,
  BULK_INPUT_RESERVED_BYTES,
  jsonTextBytes,
  formatBulkPlanRow,
  parseBulkPlanRow,
} from "../../infra/core/plan/bulk-plan-row";
import { MAX_PLAN_ROW_BYTES } from "../../infra/core/plan/plan-row";
import { scheduler, ses } from "../../infra/core/plan/quotas";
import { bulkRowProblem } from "../../infra/core/plan/bulk-request";
import { unsubscribeHeaders, unsubscribeUrl } from "../../infra/core/consent/unsubscribe";
import { PLAIN_JSON_TEXT } from "../../scripts/lib/planning/bulk";
import { BulkChunks, MAX_OPEN_CHARS } from "../../scripts/lib/planning/bulk-chunks";
import { PLACEHOLDER_UNSUBSCRIBE_URL, UnsubscribeLinks } from "../../scripts/lib/planning/unsubscribe-links";
import { readUnsubscribeKey } from "../../scripts/lib/aws/unsubscribe-key";
import { unsubscribeKeyFromParameter } from "../../infra/core/consent/unsubscribe-endpoint";
import { Deadline } from "../../scripts/lib/aws/call";
import { DeadlineExceeded } from "../../infra/core/errors";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-bulk-"));
let runs = 0;
const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 25);

function writeList(rows: string[][], header = "id,email,timezone,first_name"): string {
  const file = path.join(tmp, `list-${++runs}.csv`);
  fs.writeFileSync(file, [header, ...rows.map((r) => r.join(","))].join("\n") + "\n");
  return file;
}

const BASE = [
  "--campaign",
  "bulk1",
  "--template",
  "welcome",
  "--date",
  "2026-12-01",
  "--hour",
  "9",
  "--now",
  "2026-11-20T00:00:00Z",
  "--templates",
  "none",
];

async function launch(file: string, more: string[] = []) {
  const out = path.join(tmp, `out-${++runs}`);
  const r = await runMain(main, [
    ...BASE,
    "--recipients",
    file,
    "--dry-run",
    "--bulk",
    "--json",
    ...more,
    "--out",
    out,
  ]);
  const planFile = path.join(out, "plan.jsonl");
  const text = fs.existsSync(planFile) ? fs.readFileSync(planFile, "utf8") : "";
  const lines = text.split("\n").filter(Boolean);
  return {
    ...r,
    text,
    lines,
    plan: lines.map(parseBulkPlanRow),
    summary: r.code === 0 ? JSON.parse(r.stdout) : undefined,
  };
}

/** 9:00 local on 2026-12-01 plus `days`, as an ISO instant: luxon's answer, not the planner's. */
function expectedUtc(zone: string, days: number): string {
  return DateTime.fromObject({ year: 2026, month: 12, day: 1 + days, hour: 9 }, { zone })
    .toUTC()
    .toISO()!;
}

/** The SendBulkEmail entries of a line and the bytes they take in the schedule's Input (with its reserve). */
function inputBytes(row: BulkPlanRow): number {
  return Buffer.byteLength(JSON.stringify(row.entries.map(bulkEmailEntry))) - 2 + BULK_INPUT_RESERVED_BYTES;
}

/** Every check a bulk plan must pass against the list it came from (ids → zone, steps as offsets in days). */
function checkPlan(
  plan: BulkPlanRow[],
  lines: string[],
  recipients: Map<string, { zone: string; email: string }>,
  steps: { number: number; days: number; template: string }[],
) {
  const seen = new Map<string, number>();
  const names = new Set<string>();
  const groups = new Map<string, number>();
  plan.forEach((row, i) => {
    assert.ok(isValidSchedulerName(row.schedule_name), row.schedule_name);
    assert.ok(!names.has(row.schedule_name), `name ${row.schedule_name} twice`);
    names.add(row.schedule_name);
    assert.ok(row.entries.length >= 1 && row.entries.length <= ses.maxBulkEntries);
    assert.strictEqual(row.timezone, "UTC");
    assert.strictEqual(new Date(row.send_at + "Z").toISOString(), row.utc);
    assert.strictEqual(row.schedule_expression, `at(${row.send_at})`);
    assert.ok(Buffer.byteLength(lines[i]) <= MAX_PLAN_ROW_BYTES, "a plan line fits one batch");
    assert.ok(inputBytes(row) <= scheduler.maxTargetInputBytes, "the schedule's Input fits 256 KB");
    const step = steps.find((s) => s.number === row.step)!;
    assert.strictEqual(row.template, step.template);
    for (const e of row.entries) {
      const who = recipients.get(e.recipient_id)!;
      assert.strictEqual(
        row.utc,
        new Date(expectedUtc(who.zone, step.days)).toISOString(),
        `${e.recipient_id} step ${row.step}`,
      );
      assert.strictEqual(e.email, who.email);
      assert.strictEqual(e.template_data.step, String(row.step));
      // A dry run has no key: the token is the address and a zero signature (32 zero bytes are 43 A's in base64url).
      const unsigned = `${Buffer.from(who.email.toLowerCase()).toString("base64url")}.${"A".repeat(43)}`;
      const link = `${PLACEHOLDER_UNSUBSCRIBE_URL}?t=${unsigned}`;
      assert.strictEqual(e.template_data.unsubscribe_url, link);
      // The line carries the link once; the Input's headers are made from it.
      assert.strictEqual("headers" in e, false);
      assert.deepStrictEqual(bulkEmailEntry(e).ReplacementHeaders, unsubscribeHeaders(link));
      const request = bulkEmailEntry(e);
      assert.ok(
        request.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData.length <= ses.maxTemplateDataChars,
      );
      assert.ok(request.ReplacementHeaders.length <= ses.maxHeaders);
      for (const h of request.ReplacementHeaders)
        assert.ok(h.Value.length <= ses.header.maxValueChars && /^[ -~]+$/.test(h.Value));
      const key = `${e.recipient_id} ${row.step}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    const g = `${row.step} ${row.utc} ${row.variant}`;
    groups.set(g, (groups.get(g) ?? 0) + 1);
  });
  // Every recipient-step in exactly one entry.
  for (const id of recipients.keys())
    for (const s of steps) assert.strictEqual(seen.get(`${id} ${s.number}`), 1, `${id} step ${s.number}`);
  assert.strictEqual(seen.size, recipients.size * steps.length);
  // The fewest schedules 50 allows: ⌈n ÷ 50⌉ per group of (step, instant, variant), n counted from luxon's instants.
  const expected = new Map<string, number>();
  for (const who of recipients.values())
    for (const s of steps) {
      const g = `${s.number} ${new Date(expectedUtc(who.zone, s.days)).toISOString()} null`;
      expected.set(g, (expected.get(g) ?? 0) + 1);
    }
  assert.deepStrictEqual(
    new Map([...groups].sort()),
    new Map([...expected].map(([g, n]) => [g, Math.ceil(n / 50)] as [string, number]).sort()),
  );
}

const ZONES = ["America/New_York", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "UTC"];

describe("launch-campaign --bulk", function () {
  this.timeout(60_000);

  it("plans every recipient-step in exactly one entry, schedules of one instant and template, the fewest 50 allows", async () => {
    const recipients = new Map<string, { zone: string; email: string }>();
    const rows: string[][] = [];
    for (let i = 0; i < 263; i++) {
      const zone = ZONES[i % 4 === 0 ? 0 : i % ZONES.length];
      const who = { zone, email: `User${i}@Example.com` };
      recipients.set(`r${i}`, who);
      rows.push([`r${i}`, who.email, zone, `Name ${i}`]);
    }
    const r = await launch(writeList(rows), ["--step", "+3d:followup"]);
    assert.strictEqual(r.code, 0, r.stderr);
    checkPlan(r.plan, r.lines, recipients, [
      { number: 1, days: 0, template: "welcome" },
      { number: 2, days: 3, template: "followup" },
    ]);
    assert.strictEqual(r.summary.schedules, r.plan.length);
    assert.strictEqual(r.summary.bulk.entries, 263 * 2);
    assert.strictEqual(r.summary.bulk.unsubscribe.placeholder, true);
    assert.match(r.summary.bulk.unsubscribe.source, /unsigned.*not valid/);
    // Counts per step stay entries (one per recipient and step), as the campaign report reads them.
    assert.deepStrictEqual(
      r.summary.steps.map((s: { schedules: number }) => s.schedules),
      [263, 263],
    );
    // So does the launch record's `scheduled` (the report's scheduled column), and its bulk schedules sit under `bulk`.
    assert.strictEqual(
      r.summary.scheduled.reduce((sum: number, c: { schedules: number }) => sum + c.schedules, 0),
      263 * 2,
    );
    assert.strictEqual(r.summary.bulk.schedules, r.plan.length);
  });

  it("gives the same schedules under the same names on a re-run of the same list (idempotent)", async () => {
    const rows = Array.from({ length: 120 }, (_, i) => [`r${i}`, `u${i}@example.com`, ZONES[i % 3], `N${i}`]);
    const file = writeList(rows);
    const a = await launch(file, ["--step", "+3d"]);
    const b = await launch(file, ["--step", "+3d"]);
    assert.strictEqual(a.code, 0, a.stderr);
    assert.strictEqual(a.text, b.text);
    // The names, by hand: step, UTC minute (luxon), chunk — 40 recipients a zone, one chunk each.
    const minutes = ZONES.slice(0, 3).map((z) =>
      DateTime.fromISO(expectedUtc(z, 0)).toUTC().toFormat("yyyyMMdd'T'HHmm"),
    );
    const later = ZONES.slice(0, 3).map((z) => DateTime.fromISO(expectedUtc(z, 3)).toUTC().toFormat("yyyyMMdd'T'HHmm"));
    assert.deepStrictEqual(
      a.plan.map((p) => p.schedule_name).sort(),
      [...minutes.map((m) => `bulk.1.${m}Z.0`), ...later.map((m) => `bulk.2.${m}Z.0`)].sort(),
    );
    // Never a recipient's own name (`<id>-<step>`), whatever the id.
    for (const p of a.plan) assert.ok(!/-\d+$/.test(p.schedule_name) && p.schedule_name !== scheduleName("x", 1));
  });

  it("keeps variants apart: a schedule's entries share its variant and the variant's template", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => [`r${i}`, `u${i}@example.com`, "Europe/Berlin", `N${i}`]);
    const r = await launch(writeList(rows), ["--variant", "A:50:welcome-a", "--variant", "B:50:welcome-b"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const byVariant = new Map<string, number>();
    for (const p of r.plan) {
      assert.ok(p.variant === "A" || p.variant === "B");
      assert.strictEqual(p.template, p.variant === "A" ? "welcome-a" : "welcome-b");
      assert.ok(p.schedule_name.endsWith(`.${p.variant}.${p.schedule_name.split(".").pop()}`));
      byVariant.set(p.variant!, (byVariant.get(p.variant!) ?? 0) + p.entries.length);
    }
    const variants = r.summary.audience.variants as { name: string; recipients: number }[];
    for (const v of variants) {
      assert.strictEqual(byVariant.get(v.name), v.recipients);
      assert.strictEqual(r.plan.filter((p) => p.variant === v.name).length, Math.ceil(v.recipients / 50));
    }
  });

  it("splits a group by bytes when entries are large, each schedule's Input within 256 KB", async () => {
    // 12 recipients at one instant, each with 60,000 characters of personalization: four fit an Input, not five.
    const big = "x".repeat(60_000);
    const rows = Array.from({ length: 12 }, (_, i) => [`r${i}`, `u${i}@example.com`, "UTC", big]);
    const r = await launch(writeList(rows));
    assert.strictEqual(r.code, 0, r.stderr);
    const perEntry = Buffer.byteLength(JSON.stringify(bulkEmailEntry(r.plan[0].entries[0])));
    const fit = Math.floor((scheduler.maxTargetInputBytes - BULK_INPUT_RESERVED_BYTES + 1) / (perEntry + 1));
    assert.strictEqual(fit, 4, `${perEntry} bytes an entry`);
    assert.deepStrictEqual(
      r.plan.map((p) => p.entries.length),
      [4, 4, 4],
    );
    for (const p of r.plan) assert.ok(inputBytes(p) <= scheduler.maxTargetInputBytes);
  });

  it("rejects a row whose entry alone cannot fit a schedule, and plans the others", async () => {
    const rows = [
      ["ok", "ok@example.com", "UTC", "fine"],
      ["huge", "huge@example.com", "UTC", '"' + '""'.repeat(127_000) + '"'],
    ];
    const r = await launch(writeList(rows));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.plan.flatMap((p) => p.entries.map((e) => e.recipient_id)),
      ["ok"],
    );
    assert.strictEqual(r.summary.rejected.byReason["too-large"], 1);
  });

  it("refuses --bulk with --every, and a list column named unsubscribe_url (exit 2, one line)", async () => {
    const file = writeList([["a", "a@example.com", "UTC", "A"]]);
    const every = await runMain(main, [
      "--campaign",
      "c",
      "--recipients",
      file,
      "--template",
      "t",
      "--every",
      "daily",
      "--until",
      "2026-12-10",
      "--hour",
      "9",
      "--now",
      "2026-11-20T00:00:00Z",
      "--dry-run",
      "--bulk",
      "--out",
      path.join(tmp, "every"),
    ]);
    assert.strictEqual(every.code, 2);
    assert.match(every.stderr, /^error: --bulk does not apply to --every daily: .*\n$/);
    const reserved = await launch(writeList([["a", "a@example.com", "UTC", "x"]], "id,email,timezone,unsubscribe_url"));
    assert.strictEqual(reserved.code, 2);
    assert.match(reserved.stderr, /column "unsubscribe_url" is reserved with --bulk/);
    assert.strictEqual(reserved.stderr.split("\n").filter(Boolean).length, 1);
  });

  it("a launch needs the stack's unsubscribe outputs before any AWS call", async () => {
    const outputs = path.join(tmp, "outputs.json");
    fs.writeFileSync(
      outputs,
      JSON.stringify({
        bucketName: "b",
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:f",
        region: "us-east-1",
      }),
    );
    const file = writeList([["a", "a@example.com", "UTC", "A"]]);
    const r = await runMain(main, [
      ...BASE,
      "--recipients",
      file,
      "--bulk",
      "--outputs",
      outputs,
      "--out",
      path.join(tmp, "nokey"),
    ]);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /missing stack outputs: unsubscribeUrl, unsubscribeKeyParameter/);
  });

  it("sizes the window on the larger need: emails at the SES rate, schedules at the invocation quota", async () => {
    // 150 recipients at one instant: 150 emails, 3 schedules. By hand: emails at 1/s need ⌈150 ÷ 60⌉ = 3 minutes;
    // schedules at 0.01/s need ⌈3 ÷ 0.6⌉ = 5 minutes, so the window is 5.
    const rows = Array.from({ length: 150 }, (_, i) => [`r${i}`, `u${i}@example.com`, "UTC", "A"]);
    const file = writeList(rows);
    const r = await launch(file, ["--ses-rate", "1", "--invocation-tps", "0.01"]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.summary.bulk.window.emails.minutes, 3);
    assert.strictEqual(r.summary.bulk.window.invocations.minutes, 5);
    assert.strictEqual(r.summary.window.minutes, 5);
    // Emails at 0.25/s need ⌈150 ÷ 15⌉ = 10 minutes: now the emails bind.
    const e = await launch(file, ["--ses-rate", "0.25", "--invocation-tps", "0.01"]);
    assert.strictEqual(e.summary.window.minutes, 10);
    // size-window --bulk gives the same needs and counts the schedules, not the emails.
    const s = await runMain(sizeWindow, [
      "--recipients",
      file,
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--bulk",
      "--ses-rate",
      "1",
      "--invocation-tps",
      "0.01",
      "--json",
    ]);
    assert.strictEqual(s.code, 0, s.stderr);
    const report = JSON.parse(s.stdout);
    assert.strictEqual(report.windowMinutes, 5);
    assert.strictEqual(report.schedules, 3);
    assert.strictEqual(report.bulk.emails, 150);
    assert.deepStrictEqual([report.bulk.window.emails.minutes, report.bulk.window.invocations.minutes], [3, 5]);
  });

  it("property: random lists plan every recipient-step once, in the fewest valid schedules", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(fc.constantFrom(...ZONES), fc.constantFrom("", "Ann", 'Qu"ote', "back\\slash", "ünï", "😀")),
          { maxLength: 160 },
        ),
        async (people) => {
          const recipients = new Map<string, { zone: string; email: string }>();
          const rows = people.map(([zone, name], i) => {
            recipients.set(`p${i}`, { zone, email: `p${i}@example.com` });
            return [`p${i}`, `p${i}@example.com`, zone, `"${name.replace(/"/g, '""')}"`];
          });
          const r = await launch(writeList(rows), ["--step", "+1d:second"]);
          if (!people.length) return r.code === 1; // nothing to send
          assert.strictEqual(r.code, 0, r.stderr);
          checkPlan(r.plan, r.lines, recipients, [
            { number: 1, days: 0, template: "welcome" },
            { number: 2, days: 1, template: "second" },
          ]);
          return true;
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe("launch-campaign --bulk --allow-duplicate-emails (issue 32)", function () {
  this.timeout(60_000);
  const SENDER = { fromAddress: "news@mail.example.com", configurationSetName: "sendtime-dev" };

  it("never puts one address twice in one schedule: a repeated address starts the group's next schedule", async () => {
    // d1, d2 and d3 are one address (case and spaces aside, as SES and the opt-out table read it), all at 09:00 UTC.
    const file = writeList([
      ["d1", "dup@example.com", "UTC", "A"],
      ["o1", "o1@example.com", "UTC", "B"],
      ["d2", "DUP@example.com", "UTC", "C"],
      ["o2", "o2@example.com", "UTC", "D"],
      ["d3", " dup@example.com", "UTC", "E"],
    ]);
    const r = await launch(file, ["--allow-duplicate-emails"]);
    assert.strictEqual(r.code, 0, r.stderr);
    for (const row of r.plan) assert.strictEqual(bulkRowProblem(row, SENDER, "bulk1"), undefined, row.schedule_name);
    // In list order: [d1 o1], then d2 repeats d1's address: [d2 o2], then d3: [d3].
    assert.deepStrictEqual(
      r.plan.map((row) => row.entries.map((e) => e.recipient_id)),
      [["d1", "o1"], ["d2", "o2"], ["d3"]],
    );
  });

  it("property: with repeated addresses every line passes bulkRowProblem and every recipient-step is in one entry", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom("UTC", "Asia/Kolkata"), fc.integer({ min: 0, max: 5 }), fc.boolean()), {
          minLength: 1,
          maxLength: 160,
        }),
        async (people) => {
          const rows = people.map(([zone, who, upper], i) => [
            `p${i}`,
            upper ? `A${who}@EXAMPLE.com` : `a${who}@example.com`,
            zone,
            "x",
          ]);
          const r = await launch(writeList(rows), ["--allow-duplicate-emails", "--step", "+1d:second"]);
          assert.strictEqual(r.code, 0, r.stderr);
          const seen = new Map<string, number>();
          for (const row of r.plan) {
            assert.strictEqual(bulkRowProblem(row, SENDER, "bulk1"), undefined, row.schedule_name);
            for (const e of row.entries)
              seen.set(`${e.recipient_id} ${row.step}`, (seen.get(`${e.recipient_id} ${row.step}`) ?? 0) + 1);
          }
          assert.strictEqual(seen.size, 2 * people.length);
          assert.ok([...seen.values()].every((n) => n === 1));
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe("bulk plan lines and their requests", () => {
  const entry = (data: Record<string, string>, email = "a@example.com"): BulkEntry => {
    const link = unsubscribeUrl("https://u.example/", Buffer.from("k".repeat(32)), email);
    return {
      recipient_id: "r",
      email,
      template_data: { ...data, unsubscribe_url: link },
    };
  };

  it("bulkEntryInputBytes is the byte length of the BulkEmailEntry's JSON, whatever the data", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: "binary" }), fc.string({ unit: "binary" })),
        fc.string({ unit: "binary" }),
        (given, recipientId) => {
          const e = { ...entry(given), recipient_id: recipientId };
          const bytes = Buffer.byteLength(JSON.stringify(bulkEmailEntry(e)));
          const headersOnTheWire = unsubscribeHeaders(e.template_data.unsubscribe_url);
          const [id, email, data, headers] = [e.recipient_id, e.email, e.template_data, headersOnTheWire].map((v) =>
            JSON.stringify(v),
          );
          const sizes = bulkEntrySizes(Buffer.byteLength(id), email.length, jsonTextBytes(data), headers.length);
          return (
            bulkEntryInputBytes(email, data, headers) === bytes &&
            sizes.inputBytes === bytes &&
            sizes.lineBytes === Buffer.byteLength(bulkEntryJson(id, email, data)) &&
            sizes.lineBytes === Buffer.byteLength(JSON.stringify(e))
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("formats and parses a bulk line back to the same row; the parser names what is wrong", () => {
    const row: BulkPlanRow = {
      schedule_name: "bulk.1.20261201T1400Z.0",
      send_at: "2026-12-01T14:00:00",
      timezone: "UTC",
      utc: "2026-12-01T14:00:00.000Z",
      schedule_expression: "at(2026-12-01T14:00:00)",
      step: 1,
      template: "welcome",
      variant: null,
      entries: [entry({ first_name: 'A "b" \\ c' })],
    };
    const line = formatBulkPlanRow(row);
    assert.ok(line.endsWith("}\n") && !line.slice(0, -1).includes("\n"));
    assert.deepStrictEqual(parseBulkPlanRow(line), row);
    assert.deepStrictEqual(JSON.parse(line), row);
    const bad = (change: Partial<BulkPlanRow>) => formatBulkPlanRow({ ...row, ...change });
    assert.throws(() => parseBulkPlanRow(bad({ entries: Array(51).fill(row.entries[0]) })), /51 entries: 1 to 50/);
    assert.throws(() => parseBulkPlanRow(bad({ entries: [] })), /0 entries/);
    assert.throws(() => parseBulkPlanRow(bad({ schedule_expression: "cron(0 9 * * ? *)" })), /one-time only/);
    const fat = entry({ x: "y".repeat(60_000) });
    assert.throws(
      () => parseBulkPlanRow(bad({ entries: [fat, fat, fat, fat, fat] })),
      /bytes of the schedule's Input: at most/,
    );
  });

  it("UnsubscribeLinks gives exactly unsubscribeUrl (and the texts and sizes made of it) for any address and endpoint", () => {
    const key = Buffer.from("0123456789abcdef0123456789abcdef");
    for (const base of [
      "https://abc.lambda-url.us-east-1.on.aws/",
      "https://u.example/path?x=1",
      "https://u.example/p?t=old&y=2#frag",
    ]) {
      const links = new UnsubscribeLinks(base, key);
      fc.assert(
        fc.property(fc.emailAddress(), (email) => {
          const token = links.token(email);
          const link = unsubscribeUrl(base, key, email);
          if (typeof token !== "string") return false;
          const data = `"unsubscribe_url":${JSON.stringify(link)},`;
          const headers = JSON.stringify(unsubscribeHeaders(link));
          const sizes = links.sizes(token);
          return (
            links.text("link", token) === link &&
            links.text("json", token) === JSON.stringify(link) &&
            links.text("headers", token) === headers &&
            links.text("data", token) === data &&
            sizes.headersBytes === Buffer.byteLength(headers) &&
            sizes.dataBytes === Buffer.byteLength(data) &&
            // A second JSON.stringify escapes each `"` and `\`: the escapes are the growth.
            sizes.dataEscapes === JSON.stringify(data).length - 2 - data.length
          );
        }),
        { numRuns: 100 },
      );
    }
    const long = new UnsubscribeLinks("https://u.example/", key).token(`${"a".repeat(300)}@example.com`);
    assert.ok(typeof long !== "string" && /too long for an unsubscribe token/.test(long.problem));
  });
});

describe("bulk chunks in memory", () => {
  /** Adds one entry of `chars` ASCII characters to each of `groups` groups (one instant each), then closes. */
  async function chunk(groups: number, chars: number) {
    const lines: number[] = [];
    const chunks = new BulkChunks((bytes) => {
      lines.push(bytes.length);
      return undefined;
    });
    const start = `{"recipient_id":"r","email":"r@example.com","template_data":{"x":"`;
    const tail = Buffer.from(`"step":"1"}}`);
    const head = `${start}${"a".repeat(chars - start.length - 2 - tail.length)}",`;
    for (let i = 0; i < groups; i++) {
      const g = chunks.group(1, Date.UTC(2026, 11, 1) + i * 60_000, null, '"t"', "null");
      await chunks.add(g, head, head.length, tail, head.length + tail.length, `r${i}@example.com`);
    }
    await chunks.close();
    return { stats: chunks.stats, lines, entryChars: head.length + tail.length };
  }

  it("property: each line is its group's entries in order, 50 a line, exact UTF-8, whatever the text (buffers grow and are reused)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            group: fc.integer({ min: 0, max: 4 }),
            text: fc.string({ unit: "grapheme", maxLength: 400, size: "medium" }),
          }),
          // Enough for full lines (more than 50 a group) and for buffers to grow.
          { minLength: 260, maxLength: 600 },
        ),
        async (adds) => {
          const lines: string[] = [];
          // A write's bytes are copied at once (as the plan writer does): a reused buffer must not change them.
          const chunks = new BulkChunks((bytes) => void lines.push(Buffer.from(bytes).toString("utf8")));
          const tail = Buffer.from(`"step":"1"}}`);
          const groups = [0, 1, 2, 3, 4].map((k) =>
            chunks.group(1, Date.UTC(2026, 11, 1) + k * 60_000, null, '"t"', "null"),
          );
          for (const [i, { group, text }] of adds.entries()) {
            const head = `{"recipient_id":"r","email":"r@example.com","template_data":{"x":${JSON.stringify(text)},`;
            await chunks.add(groups[group], head, Buffer.byteLength(head), tail, 0, `r${i}@example.com`);
          }
          await chunks.close();
          // By hand: a group's texts, in order, cut into lines of 50 (the last may be shorter).
          const got = new Map<string, string[][]>();
          for (const line of lines) {
            assert.ok(line.endsWith("]}\n"));
            const row = JSON.parse(line);
            const texts = row.entries.map((e: { template_data: { x: string } }) => e.template_data.x);
            got.set(row.utc, [...(got.get(row.utc) ?? []), texts]);
          }
          for (let k = 0; k < 5; k++) {
            const expected = adds.filter((a) => a.group === k).map((a) => a.text);
            const utc = new Date(Date.UTC(2026, 11, 1) + k * 60_000).toISOString();
            const chunked = got.get(utc) ?? [];
            assert.deepStrictEqual(chunked.flat(), expected);
            chunked.forEach((c, i) => assert.strictEqual(c.length, i < chunked.length - 1 ? 50 : c.length));
            assert.ok(chunked.every((c) => c.length >= 1 && c.length <= 50));
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("property: an id the fast path quotes as it is is one JSON.stringify writes so, a byte a character", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.stringMatching(/^[ -~]{0,20}$/)), (id) => {
        if (PLAIN_JSON_TEXT.test(id)) {
          assert.strictEqual(JSON.stringify(id), `"${id}"`);
          assert.strictEqual(Buffer.byteLength(id), id.length);
        }
      }),
      { numRuns: 500 },
    );
    for (const id of ["r1", "a b/c~", ""]) assert.ok(PLAIN_JSON_TEXT.test(id), id);
    for (const id of ['a"b', "a\\b", "é", "a\tb", "\u007f"]) assert.ok(!PLAIN_JSON_TEXT.test(id), id);
  });

  it("writes no chunk early while open entries stay under the bound, however many groups are open", async () => {
    // From a hostile review: 40,000 open chunks of one small entry each (by hand 40,000 × 150 = 6,000,000 characters,
    // a tenth of the 64 Mi bound) were split early when the bound counted each chunk's buffer instead of its entries.
    const { stats, lines } = await chunk(40_000, 150);
    assert.strictEqual(stats.splitEarly, 0);
    assert.strictEqual(stats.schedules, 40_000);
    assert.strictEqual(lines.length, 40_000);
  });

  it("writes the oldest chunks early once open entries pass the bound (memory stays bounded)", async () => {
    // 300 groups × one entry of 240,000 characters = 72,000,000 > 64 Mi (67,108,864): by hand, the chunk whose entry
    // passes the bound and each later one is written at once, 300 - ⌊67,108,864 ÷ 240,000⌋ = 300 - 279 = 21 early.
    const { stats, entryChars } = await chunk(300, 240_000);
    assert.strictEqual(entryChars, 240_000);
    assert.strictEqual(MAX_OPEN_CHARS, 64 * 1024 * 1024);
    assert.strictEqual(stats.splitEarly, 300 - Math.floor(MAX_OPEN_CHARS / 240_000));
    assert.strictEqual(stats.schedules, 300);
  });
});

describe("the unsubscribe signing key (SSM)", () => {
  it("is read with decryption and decoded as the endpoint decodes it (32 bytes of base64url), so both sign alike", async () => {
    const ssm = mockClient(SSMClient);
    // A value the stack makes: 32 random bytes, base64url (here bytes 0..31; by hand: AAECAwQF…Hh8).
    const value = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString("base64url");
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: value } });
    const d = new Deadline(5);
    try {
      const key = await readUnsubscribeKey(d, new SSMClient({ region: "us-east-1" }), "/sendtime/dev/unsubscribe-key");
      assert.deepStrictEqual(key, Buffer.from(Array.from({ length: 32 }, (_, i) => i)));
      assert.deepStrictEqual(key, unsubscribeKeyFromParameter(value));
      assert.deepStrictEqual(ssm.commandCalls(GetParameterCommand)[0].args[0].input, {
        Name: "/sendtime/dev/unsubscribe-key",
        WithDecryption: true,
      });
      for (const bad of ["short", "k".repeat(44), value + "A"]) {
        ssm.on(GetParameterCommand).resolves({ Parameter: { Value: bad } });
        await assert.rejects(
          readUnsubscribeKey(d, new SSMClient({ region: "us-east-1" }), "p"),
          /not a key the stack made: expected 32 bytes as base64url/,
          bad,
        );
      }
    } finally {
      d.dispose();
      ssm.restore();
    }
  });

  it("is bounded by the command's time limit when SSM does not answer", async () => {
    const ssm = mockClient(SSMClient);
    ssm.on(GetParameterCommand).callsFake(() => new Promise(() => {}));
    const d = new Deadline(0.2);
    try {
      await assert.rejects(
        readUnsubscribeKey(d, new SSMClient({ region: "us-east-1" }), "p"),
        (e: unknown) => e instanceof DeadlineExceeded,
      );
    } finally {
      d.dispose();
      ssm.restore();
    }
  });
});
