/**
 * The one sender's texts on the wire: the sender's definition run by the JSONata interpreter, its DynamoDB calls to
 * dynalite, and its SendTextMessage task made by the real SDK client (@aws-sdk/client-pinpoint-sms-voice-v2, JSON 1.0)
 * against a local stand-in that answers each case as AWS End User Messaging SMS does. SDK errors reach the state
 * machine as Step Functions names them (`PinpointSmsVoiceV2.<name>`, the message as Cause); a call past its timeout
 * is States.Timeout. Expected values (TimeToLive, Context) are computed here by hand from the inputs.
 */
import * as assert from "assert";
import { CreateTableCommand, GetItemCommand, PutItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { PinpointSMSVoiceV2Client, SendTextMessageCommand } from "@aws-sdk/client-pinpoint-sms-voice-v2";
import { smsSenderInput, SmsSenderInput } from "../../../infra/core/send/sms-input";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { SenderParameters } from "../../../infra/state-machines/sender-states";
import { StatesError } from "../../helpers/asl-interpreter";
import { runJsonataMachine } from "../../helpers/jsonata-interpreter";
import { LocalDynamoDb, startDynalite } from "../../helpers/ledger";
import { Answer, Endpoint, SeenRequest, startEndpoint } from "../../helpers/aws-endpoint";

const QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/dlq";
const POOL = "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-1a2b";
const SMS = { originationIdentity: POOL, configurationSetName: "sendtime-test-sms" };
const ARN = (name: string) => `arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/${name}`;
const AT = "2026-12-01T15:00:00Z";

/** The stand-in's answer to one SendTextMessage: a MessageId, an error of the API, or no answer. */
type Case = "sent" | "opted-out" | "throttled" | "max-price" | "invalid" | "hang" | "internal";
const error = (status: number, type: string, message: string, reason?: string): Answer => ({
  status,
  json: { __type: type, Message: message, ...(reason ? { Reason: reason } : {}) },
});
const ANSWERS: Record<Case, Answer> = {
  sent: { json: { MessageId: "msg-1" } },
  "opted-out": error(
    400,
    "ConflictException",
    "The destination phone number is opted out (DESTINATION_PHONE_NUMBER_OPTED_OUT).",
    "DESTINATION_PHONE_NUMBER_OPTED_OUT",
  ),
  throttled: error(400, "ThrottlingException", "Rate exceeded"),
  "max-price": error(
    400,
    "ValidationException",
    "The price of the message exceeds the MaxPrice (PRICE_OVER_THRESHOLD).",
    "PRICE_OVER_THRESHOLD",
  ),
  invalid: error(400, "ValidationException", "Invalid destination phone number.", "INVALID_PARAMETER"),
  hang: "hang",
  internal: error(500, "InternalServerException", "Internal failure"),
};

function input(entries: { phone: string; until: string; limit?: number }[], schedule: string, at = AT): SmsSenderInput {
  const rows = entries.map((e, k) => ({
    recipient_id: `r${k}`,
    phone: e.phone,
    body: `Spring sale, ${k}: reply STOP to opt out`,
    until: e.until,
    ...(e.limit === undefined ? {} : { same_subject_limit: e.limit }),
  }));
  return { ...smsSenderInput("spring", { step: 1, variant: "b" }, rows), schedule, scheduled_time: at };
}

describe("the one sender's texts on the wire (SendTextMessage to a local stand-in, DynamoDB in dynalite)", function () {
  this.timeout(30_000);
  let local: LocalDynamoDb;
  let endpoint: Endpoint;
  /** What the stand-in answers each number, in turn (the last answer repeats). */
  let script: Record<string, Case[]> = {};
  let client: PinpointSMSVoiceV2Client;

  before(async () => {
    local = await startDynalite();
    endpoint = await startEndpoint((r: SeenRequest) => {
      const body = JSON.parse(r.body);
      const answers = script[body.DestinationPhoneNumber] ?? ["sent"];
      return ANSWERS[answers.length > 1 ? answers.shift()! : answers[0]];
    });
    client = new PinpointSMSVoiceV2Client({
      endpoint: endpoint.url,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      maxAttempts: 1,
      requestHandler: { requestTimeout: 500, throwOnRequestTimeout: true },
    });
  });
  after(async () => {
    client.destroy();
    await endpoint.close();
    await local.close();
  });
  beforeEach(() => {
    script = {};
    endpoint.requests.length = 0;
  });

  let table = 0;
  async function parameters(sms: SenderParameters["sms"] | null = SMS): Promise<SenderParameters> {
    const tableName = `sms-ledger-${++table}`;
    await local.client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
    return { partition: "aws", deadLetterQueueUrl: QUEUE, ledger: { tableName }, ...(sms ? { sms } : {}) };
  }

  async function sendText(args: any) {
    try {
      const { $metadata, ...out } = await client.send(new SendTextMessageCommand(args));
      void $metadata;
      return out;
    } catch (e: any) {
      if (e.name === "TimeoutError") throw new StatesError("States.Timeout", "Task timed out");
      const status = e.$metadata?.httpStatusCode;
      throw new StatesError(
        `PinpointSmsVoiceV2.${e.name}`,
        `${e.message} (Service: PinpointSmsVoiceV2, Status Code: ${status})`,
      );
    }
  }

  const commands: Record<string, any> = {
    putItem: PutItemCommand,
    getItem: GetItemCommand,
    updateItem: UpdateItemCommand,
  };
  /** Runs the sender; `beforeStateRead(n)` runs before the n-th campaign-state read (1, 2, …). */
  async function run(
    p: SenderParameters,
    i: SmsSenderInput,
    beforeStateRead: (n: number) => Promise<void> = async () => undefined,
  ) {
    const deadLetters: any[] = [];
    let stateReads = 0;
    const stats = { retries: [], waits: [] as number[] };
    const result = await runJsonataMachine(
      senderDefinition(p),
      i,
      {
        call: async (service, action, args) => {
          if (service === "dynamodb") {
            if (action === "getItem" && args.Key.pk.S.startsWith("campaign#")) await beforeStateRead(++stateReads);
            try {
              const { $metadata, ...out } = await local.client.send(new commands[action](args));
              void $metadata;
              return out;
            } catch (e) {
              throw new StatesError(`DynamoDB.${(e as Error).name}`, (e as Error).message);
            }
          }
          if (service === "sqs") return (deadLetters.push(JSON.parse(args.MessageBody)), { MessageId: "d" });
          if (service === "pinpointsmsvoicev2" && action === "sendTextMessage") return sendText(args);
          throw new Error(`unexpected call ${service}:${action}`);
        },
      },
      { startTime: i.scheduled_time },
      stats,
    ).catch((e) => {
      if (e instanceof StatesError && e.error === "Sender.EntriesFailed") return { output: "failed", path: [] };
      throw e;
    });
    const outcomes = (
      await local.client.send(
        new GetItemCommand({
          TableName: p.ledger.tableName,
          Key: { pk: { S: `occ#${i.schedule}#${i.scheduled_time}` } },
          ConsistentRead: true,
        }),
      )
    ).Item?.outcomes?.M;
    const outcome = (r: string) => `${outcomes?.[r]?.M?.outcome.S}: ${outcomes?.[r]?.M?.reason.S}`;
    const sent = endpoint.requests.map((r) => JSON.parse(r.body));
    return { ...result, deadLetters, outcome, sent, waits: stats.waits };
  }

  const setState = (p: SenderParameters, state: string) =>
    local.client.send(
      new PutItemCommand({
        TableName: p.ledger.tableName,
        Item: { pk: { S: "campaign#spring" }, state: { S: state } },
      }),
    );

  it("sent: the request names the stack's pool and configuration set, the message type, the Context and a TimeToLive ending at Until", async () => {
    const p = await parameters();
    // Until 2026-12-01T21:00:00Z, the send at 15:00:00Z: 6 h = 21,600 s.
    const r = await run(p, input([{ phone: "+12025550100", until: "2026-12-01T21:00:00Z" }], ARN("s-1")));
    assert.strictEqual(endpoint.requests.length, 1);
    assert.strictEqual(endpoint.requests[0].target, "PinpointSMSVoiceV2.SendTextMessage");
    assert.match(String(endpoint.requests[0].headers["content-type"]), /application\/x-amz-json-1\.0/);
    assert.deepStrictEqual(r.sent[0], {
      DestinationPhoneNumber: "+12025550100",
      OriginationIdentity: POOL,
      ConfigurationSetName: "sendtime-test-sms",
      MessageBody: "Spring sale, 0: reply STOP to opt out",
      MessageType: "PROMOTIONAL",
      Context: { campaign: "spring", step: "1", variant: "b" },
      TimeToLive: 21_600,
    });
    assert.strictEqual(r.outcome("r0"), "sent: ");
    assert.strictEqual(r.output.sent, 1);
    assert.deepStrictEqual(r.deadLetters, []);
  });

  it("TimeToLive is held to SendTextMessage's bounds: 259,200 s at most, 5 s at least", async () => {
    const p = await parameters();
    // Until 4 days on (345,600 s) → 259,200; Until 2 s on → 5.
    await run(p, input([{ phone: "+12025550101", until: "2026-12-05T15:00:00Z" }], ARN("t-1")));
    await run(p, input([{ phone: "+12025550102", until: "2026-12-01T15:00:02Z" }], ARN("t-2")));
    assert.deepStrictEqual(
      endpoint.requests.map((q) => JSON.parse(q.body).TimeToLive),
      [259_200, 5],
    );
  });

  it("an opted-out number (ConflictException DESTINATION_PHONE_NUMBER_OPTED_OUT) is skipped: opted-out, not dead-lettered", async () => {
    const p = await parameters();
    script["+12025550103"] = ["opted-out"];
    const r = await run(p, input([{ phone: "+12025550103", until: "2026-12-01T21:00:00Z" }], ARN("o-1")));
    assert.strictEqual(r.outcome("r0"), "skipped: opted-out");
    assert.deepStrictEqual([r.output.opted_out, r.deadLetters], [1, []]);
  });

  it("throttled, then sent in the next round (after a backoff and a new state read)", async () => {
    const p = await parameters();
    script["+12025550104"] = ["throttled", "sent"];
    let reads = 0;
    const r = await run(
      p,
      input([{ phone: "+12025550104", until: "2026-12-01T21:00:00Z" }], ARN("th-1")),
      async (n) => {
        reads = n;
      },
    );
    assert.deepStrictEqual([endpoint.requests.length, reads, r.waits.length], [2, 2, 1]);
    assert.strictEqual(r.outcome("r0"), "sent: ");
  });

  it("throttled to the end: sent 1 + 2 retries = 3 times, then not sent with the last error, dead-lettered", async () => {
    const p = await parameters();
    script["+12025550105"] = ["throttled"];
    const r = await run(p, input([{ phone: "+12025550105", until: "2026-12-01T21:00:00Z" }], ARN("th-2")));
    assert.strictEqual(endpoint.requests.length, 3);
    assert.match(r.outcome("r0"), /^not-sent: PinpointSmsVoiceV2\.ThrottlingException: Rate exceeded/);
    assert.strictEqual(r.output, "failed");
    assert.deepStrictEqual(
      r.deadLetters.map((d) => [d.recipients, d.outcome]),
      [[["r0"], "not-sent"]],
    );
  });

  it("MaxPrice exceeded (ValidationException PRICE_OVER_THRESHOLD) and an invalid number: not sent with the reason, not retried", async () => {
    const p = await parameters();
    script["+12025550106"] = ["max-price"];
    script["+12025550107"] = ["invalid"];
    const r = await run(
      p,
      input(
        [
          { phone: "+12025550106", until: "2026-12-01T21:00:00Z" },
          { phone: "+12025550107", until: "2026-12-01T21:00:00Z" },
        ],
        ARN("v-1"),
      ),
    );
    assert.strictEqual(endpoint.requests.length, 2);
    assert.match(r.outcome("r0"), /^not-sent: PinpointSmsVoiceV2\.ValidationException: .*MaxPrice/);
    assert.match(r.outcome("r1"), /^not-sent: PinpointSmsVoiceV2\.ValidationException: Invalid destination/);
    assert.strictEqual(r.deadLetters.length, 2);
  });

  it("a call that times out, or an InternalServerException, is unknown: the text may have left, so it is never sent again", async () => {
    const p = await parameters();
    script["+12025550108"] = ["hang"];
    script["+12025550109"] = ["internal"];
    const r = await run(
      p,
      input(
        [
          { phone: "+12025550108", until: "2026-12-01T21:00:00Z" },
          { phone: "+12025550109", until: "2026-12-01T21:00:00Z" },
        ],
        ARN("u-1"),
      ),
    );
    assert.strictEqual(endpoint.requests.length, 2, "each tried once");
    assert.match(r.outcome("r0"), /^unknown: States\.Timeout/);
    assert.match(r.outcome("r1"), /^unknown: PinpointSmsVoiceV2\.InternalServerException/);
    assert.deepStrictEqual(
      r.deadLetters.map((d) => d.outcome),
      ["unknown", "unknown"],
    );
  });

  it("Until already passed when the sender reaches the entry: skipped (legal-hours), no SendTextMessage", async () => {
    const p = await parameters();
    const r = await run(p, input([{ phone: "+12025550110", until: "2026-12-01T15:00:00Z" }], ARN("l-1")));
    assert.strictEqual(endpoint.requests.length, 0);
    assert.strictEqual(r.outcome("r0"), "skipped: legal-hours");
    assert.deepStrictEqual(r.deadLetters, []);
  });

  it("paused between two retry rounds: no SendTextMessage after it; the pending text is held for the resume", async () => {
    const p = await parameters();
    script["+12025550111"] = ["throttled", "sent"];
    const r = await run(p, input([{ phone: "+12025550111", until: "2026-12-01T21:00:00Z" }], ARN("p-1")), async (n) => {
      if (n === 2) await setState(p, "paused");
    });
    assert.strictEqual(endpoint.requests.length, 1, "only the first round's call");
    assert.strictEqual(r.outcome("r0"), "skipped: paused");
    assert.deepStrictEqual(
      r.deadLetters.map((d) => d.reason),
      ["paused"],
    );
  });

  it("a cancelled campaign sends no text and leaves no dead letter", async () => {
    const p = await parameters();
    await setState(p, "cancelled");
    const r = await run(p, input([{ phone: "+12025550112", until: "2026-12-01T21:00:00Z" }], ARN("c-1")));
    assert.deepStrictEqual([endpoint.requests.length, r.outcome("r0"), r.deadLetters], [0, "skipped: cancelled", []]);
  });

  it("a repeated invocation of the occurrence sends nothing", async () => {
    const p = await parameters();
    const i = input([{ phone: "+12025550113", until: "2026-12-01T21:00:00Z" }], ARN("rep-1"));
    await run(p, i);
    const again = await run(p, i);
    assert.deepStrictEqual([endpoint.requests.length, again.path.at(-1)], [1, "AlreadyClaimed"]);
  });

  it("the 4th text within 24 h to a Florida number (limit 3, across campaigns) is held: skipped, capped; 24 h 5 min after the first, a slot is free again", async () => {
    const p = await parameters();
    const fl = "+13055550100";
    const at = ["2026-12-01T13:00:00Z", "2026-12-01T17:00:00Z", "2026-12-01T22:00:00Z", "2026-12-02T12:59:00Z"];
    const outcomes: string[] = [];
    for (const [k, t] of at.entries()) {
      const r = await run(p, input([{ phone: fl, until: "2026-12-03T00:00:00Z", limit: 3 }], ARN(`fl-${k}`), t));
      outcomes.push(r.outcome("r0"));
    }
    assert.deepStrictEqual(outcomes, ["sent: ", "sent: ", "sent: ", "skipped: capped"]);
    assert.strictEqual(endpoint.requests.length, 3);
    // The first text's slot is reusable only after 24 h + 5 min (13:00 + 24:05 = next day 13:05).
    const early = await run(
      p,
      input([{ phone: fl, until: "2026-12-03T00:00:00Z", limit: 3 }], ARN("fl-4"), "2026-12-02T13:04:00Z"),
    );
    const later = await run(
      p,
      input([{ phone: fl, until: "2026-12-03T00:00:00Z", limit: 3 }], ARN("fl-5"), "2026-12-02T13:06:00Z"),
    );
    assert.deepStrictEqual([early.outcome("r0"), later.outcome("r0")], ["skipped: capped", "sent: "]);
    assert.strictEqual(endpoint.requests.length, 4);
  });

  it("a text that ends not sent gives its number's slot back: the next one is admitted", async () => {
    const p = await parameters();
    const ok = "+14055550100"; // Oklahoma
    script[ok] = ["invalid", "sent"];
    const first = await run(p, input([{ phone: ok, until: "2026-12-03T00:00:00Z", limit: 1 }], ARN("ok-1")));
    const second = await run(
      p,
      input([{ phone: ok, until: "2026-12-03T00:00:00Z", limit: 1 }], ARN("ok-2"), "2026-12-01T16:00:00Z"),
    );
    const third = await run(
      p,
      input([{ phone: ok, until: "2026-12-03T00:00:00Z", limit: 1 }], ARN("ok-3"), "2026-12-01T17:00:00Z"),
    );
    assert.deepStrictEqual(
      [first.outcome("r0").split(":")[0], second.outcome("r0"), third.outcome("r0")],
      ["not-sent", "sent: ", "skipped: capped"],
    );
  });

  it("without SenderParameters.sms the sender sends no text: each entry not sent, with the reason, dead-lettered", async () => {
    const p = await parameters(null);
    const r = await run(p, input([{ phone: "+12025550114", until: "2026-12-01T21:00:00Z" }], ARN("n-1")));
    assert.strictEqual(endpoint.requests.length, 0);
    assert.match(r.outcome("r0"), /^not-sent: Sms\.NotConfigured: /);
    assert.strictEqual(r.deadLetters.length, 1);
  });
});
