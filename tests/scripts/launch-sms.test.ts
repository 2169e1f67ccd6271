/**
 * Text steps in the launcher, end to end (`launch-campaign --dry-run`): an email step then a text step, the rows a
 * text cannot be sent to rejected with their reason, legal hours per recipient, the text templates' checks, the SMS
 * flags and a campaign file's `channel: sms`. Expected instants by hand, checked with Python's zoneinfo:
 *   python3 -c "from datetime import *; from zoneinfo import ZoneInfo as Z;
 *     print(datetime(2026,12,6,8,0,tzinfo=Z('America/New_York')).astimezone(timezone.utc))"   # 13:00Z
 * 2026-12-05 is a Saturday, 2026-12-06 a Sunday (Texas: from noon; Canada's weekend: 10:00-18:00).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parsePlanRow, PlanRow } from "../../infra/core/plan/plan-row";
import { main as launchMain } from "../../scripts/launch-campaign";
import { runMain } from "../helpers/cli";

const LIST = "tests/fixtures/sms/recipients.csv";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-sms-"));
let runs = 0;

async function launch(args: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  const r = await runMain(launchMain, [...args, "--dry-run", "--out", out]);
  const read = (f: string) => (fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : "");
  const plan = read("plan.jsonl").split("\n").filter(Boolean).map(parsePlanRow);
  const summary = JSON.parse(read("summary.json") || "null");
  return { ...r, plan, rejects: read("rejects.csv"), notes: read("notes.csv"), summary };
}

const EMAIL_THEN_TEXT = [
  "--campaign",
  "spring",
  "--recipients",
  LIST,
  "--template",
  "spring-sale",
  "--date",
  "2026-12-05",
  "--hour",
  "7",
  "--step",
  "+1d:sms:spring-sale-sms",
  "--now",
  "2026-12-01T00:00:00Z",
];

const byName = (plan: PlanRow[]) => new Map(plan.map((r) => [r.schedule_name, r]));

describe("launch-campaign: an email step, then a text step", () => {
  it("plans each recipient's email and text, the text inside the legal hours of their zone and area code", async () => {
    const r = await launch([...EMAIL_THEN_TEXT, "--legal-hours", "us,ca"]);
    assert.equal(r.code, 0, r.stderr);
    const rows = byName(r.plan);
    // Step 1: an email at 07:00 local on Saturday, no legal hours (an email's channel).
    assert.deepEqual(
      ["fl-1", "ny-1", "tx-1", "on-1"].map((n) => [rows.get(n)?.utc, rows.get(n)?.channel]),
      [
        ["2026-12-05T12:00:00.000Z", undefined],
        ["2026-12-05T12:00:00.000Z", undefined],
        ["2026-12-05T13:00:00.000Z", undefined],
        ["2026-12-05T12:00:00.000Z", undefined],
      ],
    );
    // Step 2 (Sunday 07:00 local): Florida 08-20, New York (federal) 08-21, Texas Sunday 12-21, Ontario weekend 10-18.
    const texts = ["fl-2", "ny-2", "tx-2", "on-2"].map((n) => rows.get(n)!);
    assert.deepEqual(
      texts.map((t) => [t.utc, t.send_at, t.until, t.same_subject_limit]),
      [
        ["2026-12-06T13:00:00.000Z", "2026-12-06T08:00:00", "2026-12-07T01:00:00.000Z", 3],
        ["2026-12-06T13:00:00.000Z", "2026-12-06T08:00:00", "2026-12-07T02:00:00.000Z", undefined],
        ["2026-12-06T18:00:00.000Z", "2026-12-06T12:00:00", "2026-12-07T03:00:00.000Z", undefined],
        ["2026-12-06T15:00:00.000Z", "2026-12-06T10:00:00", "2026-12-06T23:00:00.000Z", undefined],
      ],
    );
    const fl = texts[0];
    assert.equal(fl.channel, "sms");
    assert.equal(fl.phone, "+13055550100");
    assert.equal(fl.template, "spring-sale-sms");
    assert.equal(fl.email, "ann@example.com");
    assert.equal(fl.body, "Hi Ann, the spring sale is on: 30% off everything until Sunday. Reply STOP to opt out.");
    assert.equal(fl.segments, 1);
    assert.equal(fl.template_data.step, "2");
    assert.equal(texts[3].phone, "+14165550100", "a national number read with its country");
    // The fields of a text's row follow the email row's, in the contract's order.
    const line = JSON.stringify(fl);
    assert.ok(
      /"schedule_expression":"at\(2026-12-06T08:00:00\)","channel":"sms","phone":"\+13055550100","body":".*","segments":1,"until":"2026-12-07T01:00:00.000Z","same_subject_limit":3}$/.test(
        line,
      ),
      line,
    );
    assert.match(r.notes, /fl,step 2 \(text\) moved from 2026-12-06T12:00:00.000Z to 2026-12-06T13:00:00.000Z/);
    assert.equal(r.summary.sms.texts, 4);
    assert.equal(r.summary.sms.parts, 4);
    assert.equal(r.summary.sms.moved, 4);
    assert.deepEqual(r.summary.steps[1], {
      step: 2,
      offset: "+1d",
      template: "spring-sale-sms",
      schedules: 4,
      channel: "sms",
      parts: 4,
    });
    assert.match(r.stdout, /steps: 1 \+0d spring-sale: 4; 2 \+1d spring-sale-sms \(sms, 4 parts\): 4/);
    assert.match(r.stdout, /texts: 4 texts, 4 message parts \(at most 3 a text\)/);
  });

  it("rejects a row without a phone, with an invalid one, or whose text is over --max-segments: one reason each", async () => {
    const r = await launch([...EMAIL_THEN_TEXT, "--legal-hours", "us"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.rejects.trim().split("\n").slice(1);
    assert.equal(lines.length, 3, r.rejects);
    assert.match(r.rejects, /nophone,"?no phone: step 2 is a text/);
    assert.match(r.rejects, /badphone,"phone ""\+1 999 555 0100"" is not a valid number/);
    assert.match(r.rejects, /long,"?text of step 2 \(spring-sale-sms\): 4 message parts .* where --max-segments is 3/);
    assert.deepEqual(r.summary.rejected.byReason, { "missing-phone": 1, "invalid-phone": 1, "too-many-segments": 1 });
    // Nothing of a rejected row is planned, its email neither: the row is rejected whole, as every row check does.
    assert.ok(!r.plan.some((p) => ["nophone", "badphone", "long"].includes(p.recipient_id)));
    // --max-segments 4 takes the long text (4 parts of 153 GSM-7 septets).
    const wider = await launch([...EMAIL_THEN_TEXT, "--legal-hours", "us", "--max-segments", "4"]);
    assert.equal(byName(wider.plan).get("long-2")?.segments, 4);
  });

  it("without --legal-hours: a warning, the text at its own moment, until 72 hours later", async () => {
    const r = await launch(EMAIL_THEN_TEXT);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: step 2 is a text and no --legal-hours is given/);
    const ny = byName(r.plan).get("ny-2")!;
    assert.equal(ny.utc, "2026-12-06T12:00:00.000Z");
    assert.equal(ny.until, "2026-12-09T12:00:00.000Z");
    assert.equal(ny.same_subject_limit, undefined);
  });

  it("--legal-hours-miss skip: a text outside legal hours is not planned, and listed", async () => {
    const r = await launch([...EMAIL_THEN_TEXT, "--legal-hours", "us", "--legal-hours-miss", "skip"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(byName(r.plan).has("ny-1") && !byName(r.plan).has("ny-2"));
    assert.match(r.notes, /ny,"step 2 \(text\) not sent: outside legal hours \(America\/New_York US\)/);
    assert.equal(r.summary.sms.skipped, 4);
  });

  it("never plans a 4th text in 24 hours (and the window) to a Florida number; a New York number gets all four", async () => {
    const steps = ["+1h", "+2h", "+3h", "+4h"].flatMap((s) => ["--step", `${s}:sms:spring-sale-sms`]);
    const args = EMAIL_THEN_TEXT.filter((a) => a !== "--step" && a !== "+1d:sms:spring-sale-sms");
    const r = await launch([...args.map((a) => (a === "7" ? "9" : a)), ...steps, "--legal-hours", "us"]);
    assert.equal(r.code, 0, r.stderr);
    const rows = byName(r.plan);
    // Florida: 10, 11, 12 o'clock New York time on Saturday; the 4th (13:00) waits until the first can no longer count:
    // the first may fire up to its window (3 minutes) after 15:00, and the sender holds a text's slot 24 h 5 min, so
    // 15:00 + 3 min + 24 h 5 min = 15:08 on Sunday.
    assert.deepEqual(
      [2, 3, 4, 5].map((k) => rows.get(`fl-${k}`)?.utc),
      ["2026-12-05T15:00:00.000Z", "2026-12-05T16:00:00.000Z", "2026-12-05T17:00:00.000Z", "2026-12-06T15:08:00.000Z"],
    );
    assert.deepEqual(
      [2, 3, 4, 5].map((k) => rows.get(`ny-${k}`)?.utc),
      ["2026-12-05T15:00:00.000Z", "2026-12-05T16:00:00.000Z", "2026-12-05T17:00:00.000Z", "2026-12-05T18:00:00.000Z"],
    );
    assert.match(r.notes, /fl,step 5 \(text\) moved .*same-subject limit/);
  });
});

describe("launch-campaign: text templates and flags", () => {
  const templates = path.join(tmp, "templates");
  const write = (name: string, text: string) => {
    fs.mkdirSync(path.join(templates, name), { recursive: true });
    fs.writeFileSync(path.join(templates, name, "sms.txt"), text);
  };
  before(() => {
    write("hello", "Hi {{first_name}}!\n");
    write("nick", "Hi {{nickname}}!\n");
    write("huge", "x".repeat(500));
  });
  const textOnly = (template: string, more: string[] = []) =>
    launch([
      "--campaign",
      "t",
      "--recipients",
      LIST,
      "--channel",
      "sms",
      "--template",
      template,
      "--templates",
      templates,
      "--date",
      "2026-12-07",
      "--hour",
      "10",
      "--now",
      "2026-12-01T00:00:00Z",
      "--legal-hours",
      "us",
      ...more,
    ]);

  it("--channel sms: the first step is a text, from sms.txt", async () => {
    const r = await textOnly("hello");
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      r.plan.map((p) => [p.schedule_name, p.channel, p.body]),
      [
        ["fl-1", "sms", "Hi Ann!"],
        ["ny-1", "sms", "Hi Bob!"],
        ["tx-1", "sms", "Hi Cy!"],
        ["on-1", "sms", "Hi Fay!"],
      ],
    );
  });

  it("refuses before planning a template that is missing, uses a column the list lacks, or is over the limit alone", async () => {
    const missing = await textOnly("helo");
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /text template "helo" \(step 1\) not in .*: add .*helo\/sms.txt \(did you mean "hello"\?\)/,
    );
    const unknown = await textOnly("nick");
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /text template nick \(step 1\) uses "nickname" outside an \{\{#if\}\} block and .* has no such column/,
    );
    const huge = await textOnly("huge");
    assert.equal(huge.code, 2);
    assert.match(
      huge.stderr,
      /huge\/sms.txt: its text alone \(every variable empty\) is 4 message parts .* --max-segments is 3/,
    );
    for (const r of [missing, unknown, huge]) assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  });

  it("refuses what a text step cannot be: a text step without its template, a bad --legal-hours", async () => {
    const noTemplate = await launch([
      ...EMAIL_THEN_TEXT.slice(0, -4),
      "--step",
      "+1d:sms",
      "--now",
      "2026-12-01T00:00:00Z",
    ]);
    assert.match(noTemplate.stderr, /--step \+1d:sms: a text step names its template/);
    const legal = await launch([...EMAIL_THEN_TEXT, "--legal-hours", "eu"]);
    assert.equal(legal.code, 2);
    assert.match(legal.stderr, /--legal-hours/);
    assert.match(legal.stderr, /us, ca/);
  });

  it("a campaign file's channel: sms and a step written as a mapping mean the flags", async () => {
    const file = path.join(tmp, "campaign.yaml");
    fs.writeFileSync(
      file,
      [
        "campaign: spring",
        `recipients: ${path.relative(tmp, LIST)}`,
        "template: spring-sale",
        "date: 2026-12-05",
        "hour: 7",
        "steps:",
        "  - {offset: +1d, channel: sms, template: spring-sale-sms}",
        "legalHours: us,ca",
        "now: 2026-12-01T00:00:00Z",
      ].join("\n"),
    );
    const fromFile = await launch(["--config", file]);
    const fromFlags = await launch([...EMAIL_THEN_TEXT, "--legal-hours", "us,ca"]);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.deepEqual(fromFile.plan, fromFlags.plan);
    fs.writeFileSync(file, "campaign: spring\nsteps:\n  - {offset: +1d, channel: fax}\n");
    const bad = await launch(["--config", file]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /key "steps": item 1: channel "fax": email or sms/);
  });

  it("under legal hours, a number without a known zone and a number an earlier row has are rejected, with why", async () => {
    const args = EMAIL_THEN_TEXT.map((a) => (a === LIST ? "tests/fixtures/sms/unsure.csv" : a));
    const r = await launch([...args, "--legal-hours", "us"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...byName(r.plan).keys()].sort(), ["fl-1", "fl-2"]);
    const rejects = r.rejects.split("\n").slice(1).filter(Boolean);
    // A toll-free number has no area-code zone and the row no timezone: texting by the default zone (UTC) could
    // be 03:00 in New York. (305) 555-0100 with US is +13055550100, line 3's number.
    assert.match(rejects[0], /^2,tollfree,"legal hours \(--legal-hours us\) need the recipient's zone/);
    assert.match(rejects[1], /^4,fl-again,number \+13055550100 is also row fl's \(line 3\)/);
    assert.match(r.stdout, /2 rejected \(unknown-zone 1, duplicate-phone 1\)/);
    // Without legal hours, the toll-free row is planned by the default zone (a warning says legal hours are off).
    const off = await launch(args);
    assert.deepEqual([...byName(off.plan).keys()].sort(), ["fl-1", "fl-2", "tollfree-1", "tollfree-2"]);
  });

  it("--legal-hours-miss skip on a texts-only campaign: the rows left with no send count as skipped texts too", async () => {
    const args = EMAIL_THEN_TEXT.filter((a) => a !== "--step" && a !== "+1d:sms:spring-sale-sms").map((a) =>
      a === "spring-sale" ? "spring-sale-sms" : a,
    );
    const r = await launch([...args, "--channel", "sms", "--legal-hours", "us", "--legal-hours-miss", "skip"]);
    assert.equal(r.code, 0, r.stderr);
    // 07:00 local on Saturday is before 08:00 (federal, Florida) and 09:00 (Texas): fl, ny, tx and long have no send
    // left; on (Toronto) is under no US rule, and is planned.
    const noSend = r.rejects.split("\n").filter((l) => l.includes("(text) not sent"));
    assert.deepEqual(
      noSend.map((l) => l.split(",")[1]),
      ["fl", "ny", "tx", "long"],
    );
    assert.equal(r.summary.sms.skipped, 4);
    assert.match(r.stdout, /0 moved, 4 skipped \(notes.csv; a row left with no send: rejects.csv\)/);
  });

  it("a text campaign on a list without a phone column stops at the header: one line, exit 2, nothing planned", async () => {
    const list = path.join(tmp, "no-phone.csv");
    fs.writeFileSync(list, "id,email,Phone,timezone\na,a@example.com,+13055550100,America/New_York\n");
    const args = EMAIL_THEN_TEXT.map((a) => (a === LIST ? list : a));
    const r = await launch(args);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /no-phone\.csv:1: step 2 is a text: the header needs a "phone" column .*found: id, email, Phone, timezone\)\n$/,
    );
    assert.deepEqual(r.plan, []);
  });
});
