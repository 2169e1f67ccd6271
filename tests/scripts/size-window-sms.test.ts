/**
 * size-window sizes the texts the launcher plans (issue 37; docs/sms.md, "Sizing texts"): the same list and flags
 * through `size-window --recipients` and `launch-campaign --dry-run` give the same send instants, the same counts
 * per instant and per UTC day, and the same rejects by reason. Expected instants by hand (luxon): 2026-12-05 is a
 * Saturday, 2026-12-06 a Sunday; the email at 07:00 local Saturday, the text at 07:00 local Sunday, which
 * `--legal-hours us` moves to 08:00 (Florida, New York) or noon (Texas on Sunday); a Canadian number is outside `us`.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DateTime } from "luxon";
import { parsePlanRow } from "../../infra/core/plan/plan-row";
import { main as sizeMain } from "../../scripts/size-window";
import { main as launchMain } from "../../scripts/launch-campaign";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-size-sms-"));
let runs = 0;

const CAMPAIGN = [
  ...["--recipients", "tests/fixtures/sms/recipients.csv", "--template", "spring-sale"],
  ...["--date", "2026-12-05", "--hour", "7", "--step", "+1d:sms:spring-sale-sms", "--now", "2026-12-01T00:00:00Z"],
];

const at = (zone: string, day: number, hour: number) =>
  DateTime.fromObject({ year: 2026, month: 12, day, hour }, { zone }).toUTC().toISO()!;

/** Both CLIs on the same flags: size-window's report, and the launcher's plan counted by instant and its summary. */
async function both(flags: string[]) {
  const sized = await runMain(sizeMain, [...CAMPAIGN, ...flags, "--json"]);
  assert.equal(sized.code, 0, sized.stderr);
  const out = path.join(tmp, `run-${++runs}`);
  const launched = await runMain(launchMain, [
    "--campaign",
    "spring",
    ...CAMPAIGN,
    ...flags,
    "--dry-run",
    "--out",
    out,
  ]);
  assert.equal(launched.code, 0, launched.stderr);
  const plan = fs.readFileSync(path.join(out, "plan.jsonl"), "utf8").split("\n").filter(Boolean).map(parsePlanRow);
  const byInstant = new Map<string, number>();
  for (const p of plan) byInstant.set(p.utc, (byInstant.get(p.utc) ?? 0) + 1);
  const planned = [...byInstant].sort(([a], [b]) => a.localeCompare(b));
  const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
  const report = JSON.parse(sized.stdout);
  const sizedInstants = report.instants.map((i: { utc: string; count: number }) => [i.utc, i.count]);
  return { report, summary, planned, sizedInstants, stderr: sized.stderr };
}

/** Counts per UTC day of [instant, count] pairs. */
const perDay = (instants: [string, number][]) =>
  instants.reduce<Record<string, number>>(
    (d, [utc, n]) => ({ ...d, [utc.slice(0, 10)]: (d[utc.slice(0, 10)] ?? 0) + n }),
    {},
  );

describe("size-window --recipients with a text step: the launcher's instants and counts", function () {
  this.timeout(60_000);

  it("--legal-hours us: the same instants and counts as launch-campaign --dry-run, the same rejects", async () => {
    const r = await both(["--legal-hours", "us"]);
    // By hand: emails Saturday 07:00 local (fl, ny, on: 12:00Z; tx: 13:00Z); texts fl, ny 08:00 New York, tx noon
    // Chicago (Texas, Sunday), on 07:00 Toronto (a Canadian number: no US legal hours).
    const expected = [
      [at("America/New_York", 5, 7), 3],
      [at("America/Chicago", 5, 7), 1],
      [at("America/Toronto", 6, 7), 1],
      [at("America/New_York", 6, 8), 2],
      [at("America/Chicago", 6, 12), 1],
    ].map(([utc, n]) => [new Date(utc).toISOString(), n]);
    assert.deepEqual(r.planned, expected, "the launcher's plan");
    assert.deepEqual(r.sizedInstants, expected, "size-window's instants");
    assert.deepEqual(perDay(r.sizedInstants), { "2026-12-05": 4, "2026-12-06": 4 });
    assert.deepEqual(perDay(r.sizedInstants), perDay(r.planned));
    // The rows a text cannot be sent to, rejected whole by both with the launcher's reasons.
    const reasons = { "missing-phone": 1, "invalid-phone": 1, "too-many-segments": 1 };
    assert.deepEqual(r.summary.rejected.byReason, reasons);
    assert.deepEqual(r.report.rejected, reasons);
    assert.equal(r.report.recipients, 4);
    assert.equal(
      r.report.schedules,
      r.planned.reduce((n: number, [, c]: [string, number]) => n + c, 0),
    );
    // The texts: 4 of one part each, 3 moved by legal hours (fl, ny, tx), as the launcher's summary says.
    const { texts, parts, moved, skipped, legalHours, windowCheckedMinutes } = r.report.texts;
    assert.deepEqual(
      { texts, parts, moved, skipped, legalHours },
      { texts: 4, parts: 4, moved: 3, skipped: 0, legalHours: "us" },
    );
    assert.deepEqual(r.report.texts, r.summary.sms);
    assert.equal(windowCheckedMinutes, r.summary.sms.windowCheckedMinutes);
  });

  it("--legal-hours-miss skip: the texts outside legal hours left out by both", async () => {
    const r = await both(["--legal-hours", "us", "--legal-hours-miss", "skip"]);
    // The long row's text is skipped before its body is made: its email is sent, and nothing is over --max-segments.
    const expected = [
      [at("America/New_York", 5, 7), 4],
      [at("America/Chicago", 5, 7), 1],
      [at("America/Toronto", 6, 7), 1],
    ].map(([utc, n]) => [new Date(utc).toISOString(), n]);
    assert.deepEqual(r.planned, expected);
    assert.deepEqual(r.sizedInstants, expected);
    assert.equal(r.report.texts.skipped, 4);
    assert.deepEqual(r.report.rejected, { "missing-phone": 1, "invalid-phone": 1 });
    assert.deepEqual(r.report.texts, r.summary.sms);
    assert.deepEqual(r.report.rejected, r.summary.rejected.byReason);
  });

  it("without --legal-hours: the launcher's warning, and the rows without a valid phone still rejected", async () => {
    const r = await both([]);
    assert.match(r.stderr, /warning: step 2 is a text and no --legal-hours is given/);
    assert.deepEqual(r.sizedInstants, r.planned);
    assert.deepEqual(r.report.rejected, { "missing-phone": 1, "invalid-phone": 1, "too-many-segments": 1 });
    assert.equal(r.report.texts.legalHours, "none");
  });

  it("--max-segments 4 takes the long text, as the launcher does; text lines in the human report", async () => {
    const r = await both(["--legal-hours", "us", "--max-segments", "4"]);
    assert.deepEqual(r.sizedInstants, r.planned);
    assert.equal(r.report.texts.parts, 4 + 4, "the long row's text: 4 parts");
    const human = await runMain(sizeMain, [...CAMPAIGN, "--legal-hours", "us"]);
    assert.match(
      human.stdout,
      /not sent: 3 rejected as the launcher would \(missing-phone 1, invalid-phone 1, too-many-segments 1\)/,
    );
    assert.match(
      human.stdout,
      /texts: 4 texts, 4 message parts \(at most 3 a text\); legal hours us .*: 3 moved, 0 skipped/,
    );
  });
});
