/**
 * The orchestration cost model (infra/core/plan/send-cost.ts): the ledger's item sizes and request units, counted by hand
 * from DynamoDB's item size rules, checked against the items the one sender really writes (run by the tests'
 * interpreter against dynalite, which bills them by its own sizing), and the dollars per million recipient-steps,
 * worked out by hand from the price list (not by calling the model twice).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { senderDefinition } from "../../../../infra/state-machines/sender-definition";
import { senderInput } from "../../../../infra/core/send/sender-input";
import {
  admissionUnits,
  capItem,
  claimItem,
  executionUnits,
  itemBytes,
  ledgerDollars,
  Occurrence,
  orchestrationPerMillion,
  recordItem,
  UnitTally,
} from "../../../../infra/core/plan/send-cost";
import { tallyPlan } from "../../../../scripts/bench/cost";
import { runJsonataMachine } from "../../../helpers/jsonata-interpreter";
import { LocalDynamoDb, startDynalite } from "../../../helpers/ledger";

/** 89 characters: "arn:aws:scheduler:us-east-1:123456789012:schedule/" (50) + "campaign-spring/" (16) + the name (23). */
const ARN = "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/bulk.1.20261201T1400Z.0";
const OCC: Occurrence = {
  scheduleArn: ARN,
  scheduledTime: "2026-12-01T14:00:00Z",
  campaign: "spring",
  startTime: "2026-12-01T14:00:00.210Z",
  // An EXPRESS execution's ARN: 66 characters up to the state machine's name and its colon, then two 36-character ids.
  executionId:
    "arn:aws:states:us-east-1:123456789012:express:sendtime-sender-dev:8f2c5b4e-7a1d-4c3e-9b6f-2d8e1a0c4b7f:0d9e8f7a-6b5c-4d3e-2f1a-0b9c8d7e6f5a",
};
/** r0…r9 (2 characters) and r10…r49 (3). */
const ENTRIES = Array.from({ length: 50 }, (_, i) => ({ recipient: `r${i}`, email: `r${i}@example.com` }));
const SENT = ENTRIES.map((e) => ({ recipient: e.recipient, outcome: "sent" as const, reason: "" }));

// The claim, by hand. pk: "pk" (2) + "occ#" (4) + ARN (89) + "#" (1) + the time (20) = 116. campaign: 8 + 6 = 14.
// claimed_at: 10 + 24 = 34. expires_at: 10 + a number: 2026-12-01T14:00Z is 20,788 days and 14 hours after 1970
// (56 years with 14 leap days, then January to November's 334 days): 1,796,133,600 s; 14 days later 1,797,343,200,
// whose significant digits are 17973432 (8: 4 bytes, plus 1) = 15. claimed_by: 10 + 139 = 149. In all 328.
const CLAIM_BYTES = 116 + 14 + 34 + 15 + 149;
// Each sent outcome: 1 (element) + its id + 3 (the inner map) + (1 + "outcome" 7 + "sent" 4) + (1 + "reason" 6 + 0)
// = 23 + its id: 10 × 25 + 40 × 26 = 1,290; "outcomes" (8) + 3 = 11 more.
const RECORD_BYTES = CLAIM_BYTES + 8 + 3 + 10 * 25 + 40 * 26;

describe("the orchestration cost model", () => {
  it("sizes the claim and the record as DynamoDB bills them: 328 bytes (1 WRU), 1,629 with 50 outcomes (2 WRU)", () => {
    assert.strictEqual(Date.UTC(2026, 11, 1, 14) / 1000, 1_796_133_600);
    assert.strictEqual(OCC.executionId.length, 66 + 36 + 1 + 36);
    assert.strictEqual(itemBytes(claimItem(OCC)), 328);
    assert.strictEqual(itemBytes(recordItem(OCC, SENT)), 1_629);
    assert.strictEqual(RECORD_BYTES, 1_629);
    const u = executionUnits(OCC, ENTRIES, { optOuts: true, cap: { max: 3, per: "day" } });
    assert.deepStrictEqual(u, {
      claimWru: 1,
      recordWru: 2, // ⌈1,629 ÷ 1,024⌉: the larger of before (328) and after
      stateRru: 1, // a strongly consistent read of a small or absent item
      capWru: 50, // one admission per entry, each item under 1 KB
      optOutRru: 25, // 50 distinct keys, eventually consistent: half a unit each
      recordBytes: 1_629,
    });
  });

  it("sizes the cap's item: 389 bytes after 3 admissions of a day, one write unit", () => {
    // pk: 2 + "ann@example.com#2026-12-01" (26) = 28; sends: 5 + "3" (1 digit: 1 byte, plus 1) = 7;
    // schedules: 9 + 3 × (89 + "@" + 20) = 339; expires_at: 10 + 1,796,256,000 (2 days after the day's start:
    // 1796256, 7 digits: 4 bytes, plus 1) = 15.
    const cap = { max: 3, per: "day" as const };
    assert.strictEqual(itemBytes(capItem(cap, "Ann@Example.com", OCC, 3)), 28 + 7 + 339 + 15);
    assert.strictEqual(admissionUnits(cap, "Ann@Example.com", OCC), 1);
  });

  it("grouped: $0.088 today, $0.128 with the ledger (≤ $0.10 not met), $0.753 with a cap; by hand", () => {
    // 200 schedules of 50 entries: the plan's 0.02 a recipient-step, scaled to a million entries.
    const units = new UnitTally();
    for (let i = 0; i < 200; i++)
      units.add(executionUnits(OCC, ENTRIES, { optOuts: true, cap: { max: 3, per: "day" } }), 50);
    const plan = {
      schedules: 200,
      entries: 10_000,
      lineBytes: 13_644,
      batchSize: Number.MAX_SAFE_INTEGER,
      innerConcurrency: 25,
    };
    // Fan-out: ⌊262,144 ÷ 13,644⌋ = 19 lines a child, ⌈1,000,000 ÷ 19⌉ = 52,632 children a million lines, each one
    // transition, one request and 100 ms at 64 MB; 20,000 lines.
    const fanOut = (52_632 * (0.000025 + 0.000001 + 0.1 * 0.0625 * 0.00001667) * 20_000) / 1_000_000;
    const invocations = 20_000 * 0.000001;
    const sender = 20_000 * (0.000001 + 1 * 0.0625 * 0.00001667);
    const writes = 20_000 * (1 + 2) * 0.000000625;
    const reads = 20_000 * 1 * 0.000000125;
    const today = orchestrationPerMillion(plan, { senderExecutions: true });
    const door = orchestrationPerMillion(plan, { senderExecutions: true, units });
    near(today.total, fanOut + invocations + sender);
    near(today.total, 0.0883158);
    near(door.fanOut, 0.0274783);
    near(door.sender, 0.0408375);
    near(door.ledgerWrites, 0.0375);
    near(door.ledgerReads, 0.0025);
    near(door.total, fanOut + invocations + sender + writes + reads);
    near(door.total, 0.1283158);
    near(door.cap, 1_000_000 * 0.000000625); // $0.625: one admission per entry
    near(door.optOuts, 500_000 * 0.000000125); // $0.0625
    const ledger = ledgerDollars(units);
    near(ledger.perOccurrence, 3 * 0.000000625 + 0.000000125); // $0.000002
    near(ledger.perRecipient, 0.000002 / 50);
  });

  it("per recipient: $1.069 today, $4.486 with the one door (≤ $4 not met), $5.111 with a cap; by hand", () => {
    const units = new UnitTally();
    const one = { ...OCC, scheduleArn: ARN.replace("bulk.1.20261201T1400Z.0", "r7-1") };
    // Its claim: 328 − 19 (the name's 23 characters less "r7-1"'s 4) = 309 bytes; with the one outcome 309 + 11 + 25.
    assert.strictEqual(itemBytes(recordItem(one, [{ recipient: "r7", outcome: "sent", reason: "" }])), 345);
    for (let i = 0; i < 100; i++)
      units.add(executionUnits(one, [ENTRIES[7]], { optOuts: true, cap: { max: 3, per: "day" } }), 1);
    const plan = { schedules: 100, entries: 100, lineBytes: 358, batchSize: 400, innerConcurrency: 25 };
    // Fan-out: 400 rows a child (256 KB holds 732), 2,500 children, each 16 waves of 0.1 s = 1.6 s.
    const fanOut = 2_500 * (0.000025 + 0.000001 + 1.6 * 0.0625 * 0.00001667);
    const today = orchestrationPerMillion(plan, { senderExecutions: false });
    near(today.total, fanOut + 1);
    near(today.total, 1.0691675);
    const door = orchestrationPerMillion(plan, { senderExecutions: true, units });
    // A million executions of 1 s, two write units and one read each.
    near(door.sender, 1_000_000 * (0.000001 + 0.0625 * 0.00001667));
    near(door.total, fanOut + 1 + 2.041875 + 1.25 + 0.125);
    near(door.total, 4.4860425);
    near(door.total + door.cap, 5.1110425);
    near(ledgerDollars(units).perOccurrence, 2 * 0.000000625 + 0.000000125);
  });

  it("the bench's tally reads a bulk plan's lines: each line one grouped execution, each entry one of its own", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cost-"));
    const line = (name: string, ids: string[]) =>
      JSON.stringify({
        schedule_name: name,
        send_at: "2026-12-01T09:00:00",
        timezone: "America/New_York",
        utc: "2026-12-01T14:00:00.000Z",
        schedule_expression: "at(2026-12-01T09:00:00)",
        step: 1,
        template: "t",
        variant: null,
        entries: ids.map((id) => ({ recipient_id: id, email: `${id}@example.com`, template_data: {} })),
      });
    const ids = ENTRIES.map((e) => e.recipient);
    fs.writeFileSync(
      path.join(dir, "plan.jsonl"),
      `${line("bulk.1.20261201T1400Z.0", ids)}\n${line("bulk.1.20261201T1400Z.1", ["x"])}\n`,
    );
    const { grouped, perRecipient } = tallyPlan(path.join(dir, "plan.jsonl"), "spring");
    assert.deepStrictEqual(
      [grouped.executions, grouped.entries, grouped.claimWru, grouped.recordWru, grouped.largestRecordBytes],
      [2, 51, 2, 3, 1_629], // the second line's record is under 1 KB
    );
    assert.deepStrictEqual([perRecipient.executions, perRecipient.recordWru, perRecipient.capWru], [51, 51, 51]);
    fs.rmSync(dir, { recursive: true });
  });
});

describe("the model's items are the ones the one sender writes (dynalite bills them the same)", function () {
  this.timeout(20_000);
  let local: LocalDynamoDb;
  let db: DynamoDBClient;
  before(async () => {
    local = await startDynalite();
    db = local.client;
    for (const TableName of ["ledger", "scratch"])
      await db.send(
        new CreateTableCommand({
          TableName,
          AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
          KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
          BillingMode: "PAY_PER_REQUEST",
        }),
      );
  });
  after(() => local.close());

  it("50 entries sent: the stored occurrence is recordItem's, 1,629 bytes; its claim takes 1 unit and its record 2", async () => {
    const row = {
      step: 1,
      template: "spring-sale",
      variant: null,
      entries: ENTRIES.map((e) => ({ recipient_id: e.recipient, email: e.email, template_data: {} })),
    };
    const input = {
      ...senderInput({ fromAddress: "news@example.com", configurationSetName: "cs" }, "spring", row as any),
      schedule: ARN,
      scheduled_time: OCC.scheduledTime,
    };
    const commands: Record<string, any> = {
      putItem: PutItemCommand,
      getItem: GetItemCommand,
      updateItem: UpdateItemCommand,
    };
    await runJsonataMachine(
      senderDefinition({ partition: "aws", deadLetterQueueUrl: "https://sqs/q", ledger: { tableName: "ledger" } }),
      input,
      {
        call: async (service, action, args) => {
          if (service === "dynamodb") {
            const { $metadata, ...out } = await db.send(new commands[action](args));
            return (void $metadata, out);
          }
          return { BulkEmailEntryResults: args.BulkEmailEntries.map(() => ({ Status: "SUCCESS", MessageId: "m" })) };
        },
      },
      { startTime: OCC.startTime, executionId: OCC.executionId },
    );
    const key = { pk: { S: `occ#${ARN}#${OCC.scheduledTime}` } };
    const stored = (await db.send(new GetItemCommand({ TableName: "ledger", Key: key, ConsistentRead: true }))).Item;
    assert.deepStrictEqual(stored, recordItem(OCC, SENT));

    // dynalite's own sizing bills the claim, and the record as an update of it, as the model does.
    const claimed = await db.send(
      new PutItemCommand({ TableName: "scratch", Item: claimItem(OCC) as any, ReturnConsumedCapacity: "TOTAL" }),
    );
    const recorded = await db.send(
      new UpdateItemCommand({
        TableName: "scratch",
        Key: key,
        UpdateExpression: "SET outcomes = :o",
        ExpressionAttributeValues: { ":o": stored!.outcomes },
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    assert.deepStrictEqual([claimed.ConsumedCapacity?.CapacityUnits, recorded.ConsumedCapacity?.CapacityUnits], [1, 2]);
  });
});

function near(actual: number, expected: number) {
  assert.ok(Math.abs(actual - expected) < 1e-6, `${actual} ≠ ${expected}`);
}
