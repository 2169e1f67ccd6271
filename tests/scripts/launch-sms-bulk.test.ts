/**
 * Texts in bulk (`launch-campaign --dry-run --bulk` with a text step, docs/sms.md "Texts in bulk"): the texts of one
 * step that share an instant share a bulk line of channel sms, at most min(20, ⌊mps ÷ parts a text⌋) a line; the
 * fan-out turns one such line into the sender's SMS input (through the ASL interpreter, as fanout-sms.test.ts); a
 * redrive rebuilds from it. Expected instants by hand (December: New York is UTC−5, Chicago UTC−6, Toronto UTC−5):
 *   2026-12-06 (Sunday) 07:00 local, under --legal-hours us,ca: Florida and New York 08:00 EST = 13:00Z, Texas
 *   (Sunday from noon) 12:00 CST = 18:00Z, Ontario (weekend 10-18) 10:00 EST = 15:00Z; Florida's window closes 20:00
 *   EST = 01:00Z, New York's 21:00 EST = 02:00Z.
 *   2026-12-07 (Monday) 10:00 New York = 15:00Z, inside 08-21 (closing 02:00Z on the 8th).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as launchMain } from "../../scripts/launch-campaign";
import { runMain } from "../helpers/cli";
import { parseSmsBulkPlanRow, SmsBulkPlanRow } from "../../infra/core/plan/sms-bulk-plan-row";
import { smsBulkEntriesPerLine } from "../../scripts/lib/planning/sms-bulk";
import { fanOutDefinition, FanOutInput, FanOutParameters } from "../../infra/state-machines/fanout-definition";
import { runStateMachine, StatesError } from "../helpers/asl-interpreter";
import { fanOutTestParameters, SENDER_ARN } from "../helpers/fanout-params";
import { campaignTag } from "../../infra/core/send/email-events";
import { redriveInput } from "../../scripts/lib/planning/dead-letters";

const LIST = "tests/fixtures/sms/recipients.csv";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-sms-bulk-"));
let runs = 0;

async function launch(args: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  const r = await runMain(launchMain, [...args, "--dry-run", "--out", out]);
  const read = (f: string) => (fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : "");
  const lines = read("plan.jsonl").split("\n").filter(Boolean);
  const texts = lines.filter((l) => JSON.parse(l).channel === "sms");
  return {
    ...r,
    lines,
    texts,
    parsed: texts.map(parseSmsBulkPlanRow),
    summary: JSON.parse(read("summary.json") || "null"),
  };
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
  "--legal-hours",
  "us,ca",
  "--bulk",
  "--now",
  "2026-12-01T00:00:00Z",
];

const BODY = (name: string) =>
  `Hi ${name}, the spring sale is on: 30% off everything until Sunday. Reply STOP to opt out.`;

/** A list of `n` New York recipients. */
function newYorkers(n: number): string {
  const file = path.join(tmp, `ny-${n}.csv`);
  const rows = Array.from({ length: n }, (_, i) => {
    const k = String(i).padStart(2, "0");
    return `n${k},n${k}@example.com,N${k},+1212555${String(100 + i).padStart(4, "0")},America/New_York`;
  });
  fs.writeFileSync(file, ["id,email,first_name,phone,timezone", ...rows, ""].join("\n"));
  return file;
}

const textOnly = (file: string, more: string[]) =>
  launch([
    ...["--campaign", "t", "--recipients", file, "--channel", "sms", "--template", "spring-sale-sms"],
    ...["--date", "2026-12-07", "--hour", "10", "--legal-hours", "us", "--bulk", "--now", "2026-12-01T00:00:00Z"],
    ...more,
  ]);

describe("launch-campaign --bulk: texts in bulk lines of channel sms", () => {
  it("an email step then a text step: the texts of one instant share a line, with their bodies and legal windows", async () => {
    const r = await launch([...EMAIL_THEN_TEXT, "--sms-mps", "100"]);
    assert.equal(r.code, 0, r.stderr);
    // The email step is still SendBulkEmail's lines (no channel), the text step's are of channel sms.
    assert.deepEqual(
      r.lines.map((l) => [JSON.parse(l).schedule_name, JSON.parse(l).channel]),
      [
        ["bulk.1.20261205T1200Z.0", undefined],
        ["bulk.1.20261205T1300Z.0", undefined],
        ["bulk.2.20261206T1300Z.0", "sms"],
        ["bulk.2.20261206T1800Z.0", "sms"],
        ["bulk.2.20261206T1500Z.0", "sms"],
      ],
    );
    assert.deepEqual(r.parsed[0], {
      schedule_name: "bulk.2.20261206T1300Z.0",
      send_at: "2026-12-06T13:00:00",
      timezone: "UTC",
      utc: "2026-12-06T13:00:00.000Z",
      schedule_expression: "at(2026-12-06T13:00:00)",
      step: 2,
      template: "spring-sale-sms",
      variant: null,
      channel: "sms",
      entries: [
        {
          recipient_id: "fl",
          phone: "+13055550100",
          body: BODY("Ann"),
          segments: 1,
          until: "2026-12-07T01:00:00.000Z",
          same_subject_limit: 3,
        },
        {
          recipient_id: "ny",
          phone: "+12125550101",
          body: BODY("Bob"),
          segments: 1,
          until: "2026-12-07T02:00:00.000Z",
        },
      ],
    });
    assert.deepEqual(
      r.parsed.slice(1).map((l) => [l.utc, l.entries.map((e) => e.recipient_id)]),
      [
        ["2026-12-06T18:00:00.000Z", ["tx"]],
        ["2026-12-06T15:00:00.000Z", ["on"]],
      ],
    );
    // Schedules: 2 email lines and 3 text lines; entries: 4 emails and 4 texts (the rows a text cannot reach are rejected).
    assert.equal(r.summary.schedules, 5);
    assert.equal(r.summary.bulk.entries, 8);
  });

  it("at most min(20, ⌊mps ÷ parts a text⌋) texts a line: 45 texts of one instant", async () => {
    const file = newYorkers(45);
    const counts = async (more: string[]) => {
      const r = await textOnly(file, more);
      assert.equal(r.code, 0, r.stderr);
      for (const l of r.parsed) assert.equal(l.utc, "2026-12-07T15:00:00.000Z");
      return r.parsed.map((l) => l.entries.length);
    };
    // A short code (100 MPS), one part a text: 20, the sender's texts an execution.
    assert.deepEqual(await counts(["--sms-mps", "100", "--max-segments", "1"]), [20, 20, 5]);
    // 6 MPS at 2 parts a text: 3 a line, 15 lines.
    assert.deepEqual(await counts(["--sms-mps", "6", "--max-segments", "2"]), new Array(15).fill(3));
    // One 10DLC number (1 MPS, the default) at 3 parts: one text a line.
    assert.deepEqual(await counts([]), new Array(45).fill(1));
    const r = await textOnly(file, ["--sms-mps", "100", "--max-segments", "1"]);
    assert.deepEqual(r.parsed[2].entries[4], {
      recipient_id: "n44",
      phone: "+12125550144",
      body: BODY("N44"),
      segments: 1,
      until: "2026-12-08T02:00:00.000Z",
    });
    assert.deepEqual(
      r.parsed.map((l) => l.schedule_name),
      ["bulk.1.20261207T1500Z.0", "bulk.1.20261207T1500Z.1", "bulk.1.20261207T1500Z.2"],
    );
  });

  it("smsBulkEntriesPerLine: the cap by hand", () => {
    assert.deepEqual(
      [
        [1, 3],
        [3, 1],
        [3, 3],
        [7, 2],
        [100, 3],
        [100, 1],
      ].map(([mps, partsPerText]) => smsBulkEntriesPerLine({ mps, partsPerText })),
      [1, 3, 1, 3, 20, 20],
    );
  });
});

const PARAMS: FanOutParameters = fanOutTestParameters({ toleratedFailurePercentage: 100, senderArn: SENDER_ARN });
const INPUT: FanOutInput = {
  campaign_id: "spring",
  plan_bucket: "recipients-bucket",
  plan_key: "plans/spring/launch-1.jsonl",
  window_minutes: 7,
  campaign_tag: campaignTag("spring"),
};

describe("a planned bulk line of texts, downstream", () => {
  let line: string;
  let row: SmsBulkPlanRow;
  before(async () => {
    const r = await launch([...EMAIL_THEN_TEXT, "--sms-mps", "100"]);
    assert.equal(r.code, 0, r.stderr);
    [line, row] = [r.texts[0], r.parsed[0]];
  });

  /** The sender's SMS input sms.md describes for Ann and Bob's line, written out by hand. */
  const expected = (ids: string[]) => {
    const entries = {
      fl: {
        DestinationPhoneNumber: "+13055550100",
        MessageBody: BODY("Ann"),
        Until: "2026-12-07T01:00:00.000Z",
        SameSubjectLimit: 3,
      },
      ny: { DestinationPhoneNumber: "+12125550101", MessageBody: BODY("Bob"), Until: "2026-12-07T02:00:00.000Z" },
    } as Record<string, object>;
    return {
      channel: "sms",
      sms: { MessageType: "PROMOTIONAL", Entries: ids.map((id) => entries[id]) },
      recipients: ids,
      campaign: campaignTag("spring"),
      step: 2,
      schedule: "<aws.scheduler.schedule-arn>",
      scheduled_time: "<aws.scheduler.scheduled-time>",
    };
  };

  it("the fan-out makes one schedule at the line's instant whose Input is the sender's SMS input of both texts", () => {
    const created: any[] = [];
    runStateMachine(fanOutDefinition(PARAMS), INPUT, {
      getObject: () => line,
      writeResults: () => undefined,
      sdk: (_service: string, action: string, p: any) => {
        if (action === "createScheduleGroup") return {};
        if (action !== "createSchedule") throw new StatesError("Unexpected", action);
        created.push(p);
        return { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${p.GroupName}/${p.Name}` };
      },
    });
    assert.equal(created.length, 1);
    assert.equal(created[0].Name, "bulk.2.20261206T1300Z.0");
    assert.equal(created[0].ScheduleExpression, "at(2026-12-06T13:00:00)");
    assert.equal(created[0].Target.Arn, SENDER_ARN);
    assert.deepEqual(JSON.parse(created[0].Target.Input), expected(["fl", "ny"]));
  });

  it("a redrive of one text of the line is that text's SMS input alone", () => {
    const found = { kind: "bulk" as const, row, where: "plan.jsonl:3", launch: undefined };
    const fields = { fromAddress: "news@example.com", configurationSetName: "cs" };
    assert.deepEqual(redriveInput(fields, "spring", found, ["ny"]), expected(["ny"]));
  });

  it("a line of texts read back refuses what the sender cannot send: 21 entries, a number not E.164", () => {
    const value = JSON.parse(line);
    const many = { ...value, entries: Array.from({ length: 21 }, () => value.entries[1]) };
    assert.throws(() => parseSmsBulkPlanRow(JSON.stringify(many)), /has 21 entries: 1 to 20/);
    const bad = { ...value, entries: [{ ...value.entries[0], phone: "212 555 0101" }] };
    assert.throws(() => parseSmsBulkPlanRow(JSON.stringify(bad)), /entry 0: phone must be E\.164/);
    assert.deepEqual(parseSmsBulkPlanRow(line), row);
  });
});
