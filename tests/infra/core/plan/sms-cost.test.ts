/**
 * The SMS orchestration cost (infra/core/plan/send-cost.ts smsOrchestrationPerMillion), worked out by hand from the
 * price list, and docs/cost.md's "A million texts" table held to it.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import {
  executionUnits,
  Occurrence,
  smsEventBytes,
  smsOrchestrationPerMillion,
  UnitTally,
} from "../../../../infra/core/plan/send-cost";
import { formatSmsBulkPlanRow } from "../../../../infra/core/plan/sms-bulk-plan-row";
import { ROOT } from "../../../helpers/cli";

const OCC: Occurrence = {
  scheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/bulk.1.20261201T1400Z.0",
  scheduledTime: "2026-12-01T14:00:00Z",
  campaign: "spring",
  startTime: "2026-12-01T14:00:00.210Z",
  executionId: `arn:aws:states:us-east-1:123456789012:express:sendtime-sender-dev:${"0".repeat(36)}:${"0".repeat(36)}`,
};
const ENTRIES = Array.from({ length: 50 }, (_, i) => ({ recipient: `r${i}`, email: "" }));

/** The user guide's example record with sendtime's Context, as compact JSON typed out by hand: 629 bytes. */
const RECORD =
  '{"eventType":"TEXT_SUCCESSFUL","eventVersion":"1.0","eventTimestamp":1686975103470,"isFinal":true,' +
  '"originationPhoneNumber":"+12065550152","destinationPhoneNumber":"+14255550156","isInternationalSend":false,' +
  '"isoCountryCode":"US","mcc":"310","mnc":"800","messageId":"862a8790-60c0-4430-9b2b-658bdexample",' +
  '"messageRequestTimestamp":1686975103170,"messageEncoding":"GSM","messageType":"PROMOTIONAL",' +
  '"messageStatus":"SUCCESSFUL","messageStatusDescription":"Message has been accepted by phone carrier",' +
  '"context":{"campaign":"spring","step":"1","variant":"A"},"totalMessageParts":1,"totalMessagePrice":0.00581,' +
  '"totalCarrierFee":0.00302}';
const CONTEXT = { campaign: "spring", step: "1", variant: "A" };

/** Express GB-seconds of one 64 MB chunk for one second: 0.0625 GB × $0.00001667. */
const GBS = 0.0625 * 0.00001667;

function model(perSchedule: number, concurrency = 1) {
  const occ =
    perSchedule === 1 ? { ...OCC, scheduleArn: OCC.scheduleArn.replace("bulk.1.20261201T1400Z.0", "r7-1") } : OCC;
  const tally = new UnitTally();
  for (let i = 0; i < 100; i++)
    tally.add(executionUnits(occ, ENTRIES.slice(0, perSchedule), { optOuts: false }), perSchedule);
  const plan =
    perSchedule === 1
      ? { schedules: 100, entries: 100, lineBytes: 700, batchSize: 400, innerConcurrency: 25 }
      : { schedules: 100, entries: 5_000, lineBytes: 24_000, batchSize: Number.MAX_SAFE_INTEGER, innerConcurrency: 25 };
  return smsOrchestrationPerMillion(plan, tally, { eventBytes: smsEventBytes(CONTEXT), concurrency });
}

/**
 * A bulk line of 20 texts as the planner writes it (sms-bulk.ts): 160-character bodies, one part each. Its bytes are
 * the fan-out's to read.
 */
const LINE_OF_20 = formatSmsBulkPlanRow({
  schedule_name: "bulk.2.20261201T1400Z.0",
  send_at: "2026-12-01T14:00:00",
  timezone: "UTC",
  utc: "2026-12-01T14:00:00.000Z",
  schedule_expression: "at(2026-12-01T14:00:00)",
  step: 2,
  template: "spring-sale-sms",
  variant: null,
  channel: "sms",
  entries: Array.from({ length: 20 }, (_, i) => ({
    recipient_id: `r${String(i).padStart(2, "0")}`,
    phone: "+12125550100",
    body: "x".repeat(160),
    segments: 1,
    until: "2026-12-02T01:00:00.000Z",
  })),
});

/** `texts` texts a schedule (lines of `lineBytes`), sent 10 at a time as the sender does (SENDER_CONCURRENCY.texts). */
function bulkTexts(texts: number, lineBytes: number) {
  const tally = new UnitTally();
  for (let i = 0; i < 100; i++) tally.add(executionUnits(OCC, ENTRIES.slice(0, texts), { optOuts: false }), texts);
  const plan = {
    schedules: 100,
    entries: 100 * texts,
    lineBytes,
    batchSize: Number.MAX_SAFE_INTEGER,
    innerConcurrency: 25,
  };
  return smsOrchestrationPerMillion(plan, tally, { eventBytes: smsEventBytes(CONTEXT), concurrency: 10 });
}

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

describe("the SMS orchestration cost per million texts", () => {
  it("an event record is the bytes of the user guide's example with the Context", () => {
    assert.strictEqual(RECORD.length, 629);
    assert.strictEqual(smsEventBytes(CONTEXT), 629);
  });

  it("one schedule per text: $4.59 without the event logs, $5.25 with them", () => {
    const m = model(1);
    // 374 lines of 700 bytes fill a 256 KB batch: 2,674 children, each a transition, a request and 1.5 s (15 rounds of 25 calls at 0.1 s).
    close(m.fanOut, 2674 * (0.000025 + 0.000001 + 1.5 * GBS), "fan-out");
    close(m.invocations, 1.0, "Scheduler");
    // A million executions, each 1 s plus one 0.1 s call.
    close(m.sender, 1_000_000 * (0.000001 + 1.1 * GBS), "sender");
    // A claim and a record (1 WRU each) and a state read (1 RRU) per execution.
    close(m.ledgerWrites + m.ledgerReads, 2 * 0.625 + 0.125, "ledger");
    // Two events of 629 + 26 bytes per text: 1.31 GB at $0.50.
    close(m.logsIngestion, (1_000_000 * 2 * 655 * 0.5) / 1e9, "Logs");
    close(m.total, m.withoutEventLogs + m.logsIngestion, "total");
    assert.strictEqual(m.withoutEventLogs.toFixed(2), "4.59");
    assert.strictEqual(m.total.toFixed(2), "5.25");
  });

  it("50 texts a schedule, one after another: $0.26 without the event logs, $0.91 with them", () => {
    const m = model(50);
    // 20,000 bulk lines of 24,000 bytes: 10 a batch, 2,000 children of 0.1 s each (one round of calls).
    close(m.fanOut, 2_000 * (0.000026 + 0.1 * GBS), "fan-out");
    close(m.invocations, 0.02, "Scheduler");
    close(m.sender, 20_000 * (0.000001 + 6 * GBS), "sender");
    // The record of 50 outcomes is 1,629 bytes (cost-model.test.ts): 2 WRU, with the claim's 1 and a read.
    close(m.ledgerWrites + m.ledgerReads, 20_000 * (3 * 0.625 + 0.125) * 1e-6, "ledger");
    assert.strictEqual(m.withoutEventLogs.toFixed(2), "0.26");
    assert.strictEqual(m.total.toFixed(2), "0.91");
  });

  it("50 texts a schedule, 10 at a time: $0.16 without the event logs, $0.82 with them", () => {
    const m = model(50, 10);
    close(m.sender, 20_000 * (0.000001 + 1.5 * GBS), "sender");
    assert.strictEqual(m.withoutEventLogs.toFixed(2), "0.16");
    assert.strictEqual(m.total.toFixed(2), "0.82");
  });

  it("20 texts a line (launch --bulk at 20 MPS or more a part): $0.26 without the event logs, $0.91 with them", () => {
    // The line's fields and `"entries":[` (253 bytes), 20 entries of 263 (16 + 5 id + 9 + 14 phone + 8 + 162 body +
    // 13 segments + 9 + 26 until + 1), 19 commas and `]}` with its newline: 5,535 bytes.
    assert.strictEqual(Buffer.byteLength(LINE_OF_20), 5_535);
    const m = bulkTexts(20, 5_535);
    // 50,000 schedules (1,000,000 ÷ 20) at $1.00 a million.
    close(m.invocations, 0.05, "Scheduler");
    // Each execution 1 s plus two rounds of 10 calls at 0.1 s: 1.2 s.
    close(m.sender, 50_000 * (0.000001 + 1.2 * GBS), "sender");
    assert.strictEqual(m.withoutEventLogs.toFixed(2), "0.26");
    assert.strictEqual(m.total.toFixed(2), "0.91");
    // 3 a line (a toll-free number's 3 MPS at 1 part): 253 + 3 × 263 + 2 commas + 3 = 1,047 bytes; about $1.54.
    assert.strictEqual(bulkTexts(3, 1_047).withoutEventLogs.toFixed(2), "1.54");
    // The target (≤ $0.10) is not met: Scheduler, the ledger and the fan-out alone are over it.
    assert.ok(m.invocations + m.ledgerWrites + m.ledgerReads + m.fanOut > 0.1);
  });

  it("docs/cost.md states the model's figures", () => {
    const doc = fs.readFileSync(path.join(ROOT, "docs", "cost.md"), "utf8");
    const section = doc.slice(doc.indexOf("## A million texts"));
    assert.ok(section.startsWith("## A million texts"), 'docs/cost.md has a section "A million texts"');
    const d = (x: number) => `$${x.toFixed(2)}`;
    for (const [name, m] of [
      ["per text", model(1)],
      ["50 one after another", model(50)],
      ["50, 10 at a time", model(50, 10)],
      ["20, 10 at a time (`--bulk`)", bulkTexts(20, 5_535)],
    ] as const) {
      const row = section.split("\n").find((l) => l.startsWith(`| ${name} |`));
      assert.ok(row, `a row "${name}"`);
      for (const x of [
        m.invocations,
        m.sender,
        m.ledgerWrites + m.ledgerReads,
        m.fanOut,
        m.logsIngestion,
        m.withoutEventLogs,
        m.total,
      ])
        assert.ok(row.includes(d(x)), `row "${name}" shows ${d(x)}: ${row}`);
    }
  });
});
