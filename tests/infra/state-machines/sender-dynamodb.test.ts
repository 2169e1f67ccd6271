/**
 * The one sender's DynamoDB calls against a real DynamoDB implementation (dynalite, on 127.0.0.1): the claim's
 * condition, the campaign state's projection, the outcomes' nested map, the cap's admission and release expressions
 * and its periods, as DynamoDB itself evaluates them. SES and SQS are the tests' fakes.
 */
import * as assert from "assert";
import {
  BatchGetItemCommand,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { senderInput, SenderInput } from "../../../infra/core/send/sender-input";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { SenderParameters } from "../../../infra/state-machines/sender-states";
import { StatesError } from "../../helpers/asl-interpreter";
import { runJsonataMachine } from "../../helpers/jsonata-interpreter";
import { LocalDynamoDb, startDynalite } from "../../helpers/ledger";

const LEDGER = "sender-ledger-test";
const CAP = "sender-sends-test";
const QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/dlq";
const ARN = (name: string, group = "campaign-spring") =>
  `arn:aws:scheduler:us-east-1:123456789012:schedule/${group}/${name}`;

function input(addresses: string[], schedule: string, at: string, campaign = "spring"): SenderInput {
  const row = {
    step: 1,
    template: "spring-sale",
    variant: null,
    entries: addresses.map((email, i) => ({
      recipient_id: `r${i}`,
      email,
      template_data: { unsubscribe_url: `https://u.example/?t=${i}` },
    })),
  };
  return {
    ...senderInput({ fromAddress: "news@example.com", configurationSetName: "cs" }, campaign, row as any),
    schedule,
    scheduled_time: at,
  };
}

describe("the one sender against a real DynamoDB (dynalite)", function () {
  this.timeout(20_000);
  let local: LocalDynamoDb;
  let db: DynamoDBClient;

  before(async () => {
    local = await startDynalite();
    db = local.client;
  });
  after(() => local.close());

  let table = 0;
  /** Fresh tables for each test, and the sender's parameters naming them. */
  async function tables(cap?: SenderParameters["gate"]): Promise<SenderParameters> {
    table++;
    const names = { ledger: `${LEDGER}-${table}`, cap: `${CAP}-${table}` };
    for (const TableName of cap ? [names.ledger, names.cap] : [names.ledger])
      await db.send(
        new CreateTableCommand({
          TableName,
          AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
          KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
          BillingMode: "PAY_PER_REQUEST",
        }),
      );
    return {
      partition: "aws",
      deadLetterQueueUrl: QUEUE,
      ledger: { tableName: names.ledger },
      ...(cap ? { gate: { ...cap, tableName: names.cap } } : {}),
    };
  }

  /** Runs the sender: DynamoDB calls go to dynalite (errors named as Step Functions names them), SES answers `ses`. */
  async function run(
    p: SenderParameters,
    i: SenderInput,
    ses: (addresses: string[]) => string[] = (a) => a.map(() => "SUCCESS"),
  ) {
    const delivered: string[] = [];
    const deadLetters: any[] = [];
    const commands: Record<string, any> = {
      putItem: PutItemCommand,
      getItem: GetItemCommand,
      updateItem: UpdateItemCommand,
      batchGetItem: BatchGetItemCommand,
    };
    const result = await runJsonataMachine(
      senderDefinition(p),
      i,
      {
        call: async (service, action, args) => {
          if (service === "dynamodb") {
            try {
              const { $metadata, ...out } = await db.send(new commands[action](args));
              void $metadata;
              return out;
            } catch (e) {
              throw new StatesError(`DynamoDB.${(e as Error).name}`, (e as Error).message);
            }
          }
          if (service === "sqs") return (deadLetters.push(JSON.parse(args.MessageBody)), { MessageId: "d" });
          if (service === "cloudwatch") return {};
          const addresses = args.BulkEmailEntries.map((e: any) => e.Destination.ToAddresses[0]);
          const statuses = ses(addresses);
          addresses.forEach((a: string, k: number) => statuses[k] === "SUCCESS" && delivered.push(a));
          return { BulkEmailEntryResults: statuses.map((Status) => ({ Status, MessageId: "m", Error: "" })) };
        },
      },
      { startTime: i.scheduled_time },
    ).catch((e) => {
      if (e instanceof StatesError && e.error === "Sender.EntriesFailed") return { output: "failed", path: [] };
      throw e;
    });
    return { ...result, delivered, deadLetters };
  }

  const item = async (p: SenderParameters, pk: string, tableName = p.ledger.tableName) =>
    (await db.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk } }, ConsistentRead: true }))).Item;

  it("claims the occurrence, records each outcome as a map, and a repeated invocation sends nothing", async () => {
    const p = await tables();
    const i = input(["ann@example.com", "bob@example.com"], ARN("b.1"), "2026-12-01T09:00:00Z");
    const first = await run(p, i, () => ["SUCCESS", "MESSAGE_REJECTED"]);
    assert.deepStrictEqual(first.delivered, ["ann@example.com"]);
    const occ = await item(p, `occ#${ARN("b.1")}#2026-12-01T09:00:00Z`);
    assert.deepStrictEqual(occ!.outcomes, {
      M: {
        r0: { M: { outcome: { S: "sent" }, reason: { S: "" } } },
        r1: { M: { outcome: { S: "not-sent" }, reason: { S: "MESSAGE_REJECTED" } } },
      },
    });
    assert.strictEqual(occ!.expires_at.N, String(Date.UTC(2026, 11, 15, 9) / 1000));
    const again = await run(p, i);
    assert.deepStrictEqual([again.path.at(-1), again.delivered], ["AlreadyClaimed", []]);
  });

  it("reads the campaign's state as DynamoDB stores it: paused holds every entry", async () => {
    const p = await tables();
    await db.send(
      new PutItemCommand({
        TableName: p.ledger.tableName,
        Item: { pk: { S: "campaign#spring" }, state: { S: "paused" } },
      }),
    );
    const r = await run(p, input(["ann@example.com"], ARN("b.2"), "2026-12-01T09:00:00Z"));
    assert.deepStrictEqual([r.delivered, r.deadLetters.map((d) => d.reason)], [[], ["paused"]]);
  });

  it("the cap per UTC day: a third send that day is capped, the next day is a new period, a recurring schedule's occurrences count apart", async () => {
    const p = await tables({ cap: { max: 2, per: "day" }, tableName: "" });
    const sends = [
      [ARN("weekly", "campaign-digest"), "2026-12-01T08:00:00Z"],
      [ARN("weekly", "campaign-digest"), "2026-12-01T09:00:00Z"], // the same schedule's next occurrence
      [ARN("a1-1", "campaign-winter"), "2026-12-01T23:59:00Z"],
      [ARN("a1-1", "campaign-autumn"), "2026-12-02T00:00:00Z"],
    ];
    const delivered: string[] = [];
    for (const [schedule, at] of sends)
      delivered.push(...(await run(p, input(["Ann@Example.com"], schedule, at))).delivered.map(() => at));
    assert.deepStrictEqual(delivered, ["2026-12-01T08:00:00Z", "2026-12-01T09:00:00Z", "2026-12-02T00:00:00Z"]);
    const day = await item(p, "ann@example.com#2026-12-01", p.gate!.tableName);
    assert.strictEqual(day!.sends.N, "2");
    assert.strictEqual(day!.expires_at.N, String(Date.UTC(2026, 11, 3) / 1000));
  });

  it("the cap per UTC month, and a not-sent entry's admission given back by the release's condition", async () => {
    const p = await tables({ cap: { max: 1, per: "month" }, tableName: "" });
    const rejected = await run(p, input(["ann@example.com"], ARN("x-1"), "2026-12-01T09:00:00Z"), () => [
      "MESSAGE_REJECTED",
    ]);
    assert.strictEqual(rejected.output, "failed");
    const month = await item(p, "ann@example.com#2026-12", p.gate!.tableName);
    assert.strictEqual(month!.sends.N, "0");
    assert.strictEqual(month!.schedules, undefined, "the occurrence left the set (an empty set is removed)");
    const sent = await run(p, input(["ann@example.com"], ARN("y-1"), "2026-12-31T23:00:00Z"));
    const capped = await run(p, input(["ann@example.com"], ARN("z-1"), "2026-12-31T23:30:00Z"));
    const january = await run(p, input(["ann@example.com"], ARN("w-1"), "2027-01-01T00:00:00Z"));
    assert.deepStrictEqual([sent.delivered.length, capped.delivered.length, january.delivered.length], [1, 0, 1]);
    assert.strictEqual(capped.output.capped, 1);
  });
});
