/**
 * redrive on the wire: a local endpoint that answers like SQS (AWS JSON 1.0) and Scheduler (REST-JSON), with a queue
 * that hides what it hands out and schedules that conflict by name, as AWS does; a local S3 holding the campaigns'
 * launch records and plans; and dynalite (a DynamoDB in Node) holding the occurrence ledger. The dead letters have
 * the shapes the one sender writes (a pointer, infra/core/send/ledger.ts DeadLetterPointer) and that AWS documents for
 * Scheduler (body = the target's Input; SCHEDULE_ARN, SCHEDULED_TIME, TARGET_ARN, ERROR_CODE, … attributes).
 */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { startLedger } from "../helpers/ledger";
import { Answer, Endpoint, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { LocalS3, startLocalS3 } from "../helpers/s3-server";
import { runMain } from "../helpers/cli";
import { main as redrive } from "../../scripts/redrive";
import { clock } from "../../scripts/lib/aws/call";
import { FailedSend, PlanSearch, redriveName } from "../../scripts/lib/planning/dead-letters";
import { launchMissedPolicy, launchQuietTime, LaunchRecord } from "../../scripts/lib/planning/launch-record";
import { heldFate, HeldPolicy, heldPolicy } from "../../scripts/lib/planning/paused-sends";
import { recipientSenderInput, senderInput } from "../../infra/core/send/sender-input";
import { BulkPlanRow } from "../../infra/core/plan/bulk-plan-row";
import { PlanRow } from "../../infra/core/plan/plan-row";
import { describeQuietTime, QuietTime } from "../../infra/core/timing/quiet-time";
import { DateTime } from "luxon";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-redrive-"));
const DLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq-226c700";
const DLQ_ARN = "arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq-226c700";
const ROLE = "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b";
const SES = "arn:aws:scheduler:::aws-sdk:sesv2:sendEmail";
const SENDER = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev";
const BUCKET = "sendtime-recipients-dev";
const LEDGER = "sendtime-ledger-dev";
const FROM = "news@mail.example.com";
const CONFIG_SET = "sendtime";
const CONTACT_LIST = "sendtime-contacts";
const TOPIC = "newsletter";
const stack = {
  deadLetterQueueUrl: DLQ,
  schedulerRoleArn: ROLE,
  senderStateMachineArn: SENDER,
  bucketName: BUCKET,
  ledgerTableName: LEDGER,
  fromAddress: FROM,
  configurationSetName: CONFIG_SET,
  contactListName: CONTACT_LIST,
  unsubscribeTopic: TOPIC,
  defaultWindowMinutes: 15,
  region: "us-east-1",
  journeyDefinitions: [{ name: "welcome" }],
  // Outputs saved before the one door still name the send gate: its older dead letters are never re-sent either.
  sendGateArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-gate-dev",
};
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(outputs, JSON.stringify(stack));
const arn = (group: string, name: string) => `arn:aws:scheduler:us-east-1:123456789012:schedule/${group}/${name}`;
/** The ledger's occurrence key, written out by hand from infra/core/send/ledger.ts's contract. */
const occ = (group: string, name: string, time: string) => `occ#${arn(group, name)}#${time}`;

// --- The campaigns' plans in S3, as the launcher wrote them --------------------------------------------------------

const T = "2026-12-01T14:00:00Z";
const BULK = "bulk.1.20261201T1400Z.0";
const entry = (id: string) => ({
  recipient_id: id,
  email: `${id}@example.com`,
  template_data: { name: id.toUpperCase(), unsubscribe_url: `https://u.example.com/?t=${id}.sig` },
});
const bulkLine = (name: string, step: number, ids: string[], template = `spring-${step}`) => ({
  schedule_name: name,
  send_at: "2026-12-01T14:00:00",
  timezone: "UTC",
  utc: "2026-12-01T14:00:00.000Z",
  schedule_expression: "at(2026-12-01T14:00:00)",
  step,
  template,
  variant: null,
  entries: ids.map(entry),
});
/** spring: a bulk campaign. Its newest launch L2; an older one, L1, holds a stale line of the same name. */
const SPRING_PLAN = [
  bulkLine(BULK, 1, ["a7", "b8", "c9"]),
  bulkLine("bulk.2.20261203T1400Z.0", 2, ["a7", "b8"]),
  bulkLine("bulk.1.20261201T1401Z.0", 1, [LONG_ID()]),
];
const SPRING_OLD_PLAN = [bulkLine(BULK, 1, ["a7", "b8", "c9"], "spring-old")];
function LONG_ID() {
  return "r".repeat(62);
}
const recipientRow = (id: string, zone: string): PlanRow => ({
  schedule_name: `${id}-1`,
  send_at: "2026-12-01T09:00:00",
  timezone: zone,
  email: `${id}@example.com`,
  template: "autumn-1",
  template_data: { name: id.toUpperCase(), unsubscribe_url: `https://u.example.com/?t=${id}.sig` },
  recipient_id: id,
  step: 1,
  utc: "2026-12-01T00:00:00.000Z",
  variant: null,
  schedule_expression: "at(2026-12-01T09:00:00)",
});
/** autumn: a per-recipient campaign in Tokyo (UTC+9, no DST) with quiet time. */
const AUTUMN_PLAN = [recipientRow("d4", "Asia/Tokyo"), recipientRow("e5", "Asia/Tokyo")];
/** harvest: a per-recipient campaign in New York, whose clocks go back an hour on 2026-11-01 (02:00 EDT → 01:00 EST). */
const nyRow = (id: string, sendAt: string, utc: string): PlanRow => ({
  ...recipientRow(id, "America/New_York"),
  send_at: sendAt,
  utc,
  schedule_expression: `at(${sendAt})`,
});
const HARVEST_PLAN = [
  nyRow("f6", "2026-10-31T09:00:00", "2026-10-31T13:00:00.000Z"),
  nyRow("g7", "2026-10-31T18:00:00", "2026-10-31T22:00:00.000Z"),
];

/** The launcher's summary of its missed-time policy (plan-summary.ts PlanSummary missed), as a launch record keeps it. */
const missedSummary = (policy: string, graceMinutes = 60) => ({
  policy,
  graceMinutes,
  cutoff: "2026-11-20T10:07:00.000Z",
  skipped: 0,
  sentNow: 0,
  movedToNextDay: 0,
});
/** A launch record that states no missed-time policy (the launcher's all do). */
const NO_MISSED = Symbol("no missed-time policy");
const record = (
  campaignId: string,
  id: string,
  at: string,
  quiet: unknown,
  missed: unknown = missedSummary("skip"),
  planKeys = [`plans/${campaignId}/${id}.jsonl`],
) => ({
  campaignId,
  planSha256: createHash("sha256").update(id).digest("hex"),
  firstSend: "2026-12-01T14:00:00.000Z",
  lastSend: "2026-12-03T14:00:00.000Z",
  launch: { id, planKey: planKeys[0], planKeys, at },
  scheduled: [{ step: 1, variant: null, schedules: 3 }],
  holdoutRecipients: 0,
  quiet,
  ...(missed === NO_MISSED ? {} : { missed }),
});
const jsonl = (rows: object[]) => Buffer.from(rows.map((r) => JSON.stringify(r) + "\n").join(""));

/**
 * The quiet hours of autumn, by hand around the test's clock: from an hour ago to three hours on (Tokyo's wall
 * clock), so that a redrive two minutes from now is quiet and goes at their end.
 */
function quietAroundNow(): { quiet: QuietTime; endsAt: number } {
  const startUtc = Math.floor(Date.now() / 60_000) * 60_000 - 60 * 60_000;
  const tokyo = (ms: number) => {
    const d = new Date(ms + 9 * 3_600_000);
    return d.getUTCHours() * 60 + d.getUTCMinutes();
  };
  const endsAt = startUtc + 4 * 3_600_000;
  return { quiet: { hours: { start: tokyo(startUtc), end: tokyo(endsAt) }, days: [], policy: "delay" }, endsAt };
}

function seedS3(s3: LocalS3, quiet: QuietTime): void {
  const put = (key: string, body: Buffer | object) =>
    s3.objects.set(`${BUCKET}/${key}`, Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)));
  put("launches/spring/L1.json", record("spring", "L1", "2026-11-01T10:00:00.000Z", null));
  put("plans/spring/L1.jsonl", jsonl(SPRING_OLD_PLAN));
  put("launches/spring/L2.json", record("spring", "L2", "2026-11-20T10:00:00.000Z", null));
  put("plans/spring/L2.jsonl", jsonl(SPRING_PLAN));
  put(
    "launches/autumn/A1.json",
    record("autumn", "A1", "2026-11-20T10:00:00.000Z", {
      rule: describeQuietTime(quiet),
      policy: quiet.policy,
      delayed: 0,
      skipped: 0,
    }),
  );
  put("plans/autumn/A1.jsonl", jsonl(AUTUMN_PLAN));
  put("launches/harvest/H1.json", record("harvest", "H1", "2026-10-30T10:00:00.000Z", null, missedSummary("next-day")));
  put("plans/harvest/H1.jsonl", jsonl(HARVEST_PLAN));
}

// --- The ledger -----------------------------------------------------------------------------------------------------

type Outcomes = Record<string, [string, string]>;

/** The sender's record of one occurrence: each recipient's {outcome, reason}. */
async function record_(ddb: DynamoDBClient, key: string, outcomes: Outcomes): Promise<void> {
  await ddb.send(
    new PutItemCommand({
      TableName: LEDGER,
      Item: {
        pk: { S: key },
        claimed_at: { S: "2026-12-01T14:00:01Z" },
        outcomes: {
          M: Object.fromEntries(
            Object.entries(outcomes).map(([id, [outcome, reason]]) => [
              id,
              { M: { outcome: { S: outcome }, reason: { S: reason } } },
            ]),
          ),
        },
      },
    }),
  );
}

// --- The queue's messages -------------------------------------------------------------------------------------------

interface Message {
  MessageId: string;
  Body: string;
  MessageAttributes?: Record<string, { DataType: string; StringValue: string }>;
}
const attrs = (a: Record<string, string>) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, { DataType: "String", StringValue: v }]));

/** The one sender's dead letter: a pointer (ledger.ts DeadLetterPointer), no attributes. */
function pointer(
  id: string,
  p: {
    campaign?: string;
    schedule_name?: string;
    scheduled_time?: string;
    recipients: string[];
    outcome?: string;
    reason?: string;
  },
): Message {
  return {
    MessageId: id,
    Body: JSON.stringify({
      campaign: p.campaign ?? "spring",
      schedule_name: p.schedule_name ?? BULK,
      scheduled_time: p.scheduled_time ?? T,
      recipients: p.recipients,
      outcome: p.outcome ?? "not-sent",
      reason: p.reason ?? "MessageRejected",
    }),
  };
}

/** Scheduler's dead letter of a schedule: the target's Input as body, the documented attributes. */
function schedulerDeadLetter(id: string, group: string, name: string, body: object, target = SENDER): Message {
  return {
    MessageId: id,
    Body: JSON.stringify(body),
    MessageAttributes: attrs({
      ERROR_CODE: "StepFunctions.ThrottlingException",
      ERROR_MESSAGE: "Rate exceeded",
      EXECUTION_ID: "ad06616e51cdf74a",
      IS_PAYLOAD_TRUNCATED: "false",
      RETRY_ATTEMPTS: "185",
      SCHEDULED_TIME: T,
      SCHEDULE_ARN: arn(group, name),
      TARGET_ARN: target,
    }),
  };
}

/** A free-form SendEmail request: a phishing subject, two recipients (one of them opted out), no list management. */
const PHISHING = {
  FromEmailAddress: "security@mail.example.com",
  Destination: { ToAddresses: ["a7@example.com", "opted-out@example.com"] },
  Content: {
    Simple: {
      Subject: { Data: "Your account is locked: verify now" },
      Body: { Text: { Data: "Sign in at https://login.example.net to keep your account." } },
    },
  },
};
/** The same, dressed as the sender's input (bulk-request.ts SenderInput) for the recipients a7 and b8. */
const PHISHING_SENDER_INPUT = {
  bulk: {
    FromEmailAddress: "security@mail.example.com",
    ConfigurationSetName: CONFIG_SET,
    DefaultContent: { Template: { TemplateName: "phish", TemplateData: "{}" } },
    DefaultEmailTags: [{ Name: "campaign", Value: "spring" }],
    BulkEmailEntries: ["a7@example.com", "opted-out@example.com"].map((to) => ({
      Destination: { ToAddresses: [to] },
      ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: "{}" } },
      ReplacementHeaders: [],
    })),
  },
  recipients: ["a7", "b8"],
  campaign: "spring",
  step: 1,
  schedule: arn("campaign-spring", BULK),
  scheduled_time: T,
};

/** SQS and Scheduler in one: a queue that hides what it hands out, and groups of schedules. */
class FakeAws {
  queue: (Message & { handle: string; hidden: boolean })[] = [];
  groups = new Map<string, Map<string, any>>([
    ["campaign-spring", new Map()],
    ["campaign-autumn", new Map()],
    ["campaign-harvest", new Map()],
  ]);
  receives = 0;
  handles = 0;
  /** Per-test overrides: return an answer to replace the normal one. */
  override: (q: SeenRequest) => Answer | undefined = () => undefined;

  constructor(messages: Message[]) {
    this.add(messages);
  }

  add(messages: Message[]) {
    for (const m of messages) this.queue.push({ ...m, handle: "", hidden: false });
  }

  answer = (q: SeenRequest): Answer => {
    const o = this.override(q);
    if (o) return o;
    const body = q.body ? JSON.parse(q.body) : {};
    switch (q.target) {
      case "AmazonSQS.GetQueueAttributes":
        return { json: { Attributes: { QueueArn: DLQ_ARN } } };
      case "AmazonSQS.ReceiveMessage": {
        this.receives++;
        const out = this.queue.filter((m) => !m.hidden).slice(0, body.MaxNumberOfMessages ?? 1);
        for (const m of out) Object.assign(m, { hidden: true, handle: `h-${m.MessageId}-${++this.handles}` });
        return {
          json: out.length
            ? {
                Messages: out.map(({ hidden, handle, ...m }) => ({
                  ...m,
                  ReceiptHandle: handle,
                  MD5OfBody: md5(m.Body),
                })),
              }
            : {},
        };
      }
      case "AmazonSQS.DeleteMessage":
        this.queue = this.queue.filter((m) => m.handle !== body.ReceiptHandle);
        return { json: {} };
      case "AmazonSQS.ChangeMessageVisibilityBatch":
        for (const e of body.Entries) for (const m of this.queue) if (m.handle === e.ReceiptHandle) m.hidden = false;
        return { json: { Successful: body.Entries.map((e: any) => ({ Id: e.Id })), Failed: [] } };
    }
    const m = /^\/schedules\/([^?]+)(?:\?groupName=(.*))?$/.exec(q.url);
    if (m) {
      const name = decodeURIComponent(m[1]);
      const group = this.groups.get(q.method === "GET" ? decodeURIComponent(m[2]) : body.GroupName);
      if (!group) return error(404, "ResourceNotFoundException", "Schedule group does not exist.");
      if (q.method === "GET")
        return group.has(name) ? { json: group.get(name) } : error(404, "ResourceNotFoundException", "no schedule");
      if (group.has(name)) return error(409, "ConflictException", `Schedule ${name} already exists.`);
      const { ClientToken, ...request } = body; // the SDK's idempotency token, new on every call
      group.set(name, { Name: name, ...request });
      return { json: { ScheduleArn: arn(body.GroupName, name) } };
    }
    return error(400, "ValidationException", `unexpected ${q.method} ${q.url} ${q.target}`);
  };

  schedules(group = "campaign-spring") {
    return [...(this.groups.get(group)?.values() ?? [])];
  }

  visible() {
    return this.queue.map((m) => [m.MessageId, m.hidden]);
  }
}

/** Scheduler's REST CreateSchedule: POST /schedules/{Name} (UpdateSchedule is the PUT). */
const isCreateSchedule = (q: SeenRequest) => !q.target && q.method === "POST" && q.url.startsWith("/schedules/");
const md5 = (text: string) => createHash("md5").update(text, "utf8").digest("hex");

const error = (status: number, type: string, message: string): Answer => ({
  status,
  headers: { "x-amzn-errortype": type, "content-type": "application/json" },
  json: { Message: message, message },
});

/** The sender input the fan-out builds for a plan row (bulk-request.ts), from the fixture's row read on its own. */
const target = { fromAddress: FROM, configurationSetName: CONFIG_SET };
const fixtureBulkRow = (name: string, plan = SPRING_PLAN) =>
  JSON.parse(JSON.stringify(plan.find((r) => r.schedule_name === name))) as BulkPlanRow;
const expectedBulkInput = (name: string, ids: string[]) => {
  const row = fixtureBulkRow(name);
  return senderInput(target, "spring", { ...row, entries: row.entries.filter((e) => ids.includes(e.recipient_id)) });
};

describe("redrive against local SQS, Scheduler, S3 and DynamoDB endpoints", function () {
  this.timeout(30_000);
  let endpoint: Endpoint | undefined;
  let s3: LocalS3;
  let ledger: Awaited<ReturnType<typeof startLedger>>;
  let quietEndsAt: number;
  const realHeartbeat = clock.heartbeatMs;
  before(() => (clock.heartbeatMs = 100));
  after(() => (clock.heartbeatMs = realHeartbeat));
  beforeEach(async () => {
    s3 = await startLocalS3();
    ledger = await startLedger([], LEDGER);
    const q = quietAroundNow();
    quietEndsAt = q.endsAt;
    seedS3(s3, q.quiet);
  });
  afterEach(async () => {
    await endpoint?.close();
    await s3.close();
    await ledger.close();
  });
  const run = async (aws: FakeAws, args: string[], extraEnv: Record<string, string> = {}) => {
    await endpoint?.close();
    endpoint = await startEndpoint(aws.answer);
    const env = {
      AWS_ENDPOINT_URL_SCHEDULER: endpoint.url,
      AWS_ENDPOINT_URL_SQS: endpoint.url,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: ledger.url,
      ...extraEnv,
    };
    return withEnv(env, () => runMain(redrive, [...args, "--outputs", outputs]));
  };
  const creates = () => endpoint!.requests.filter(isCreateSchedule);
  const writes = () =>
    endpoint!.requests.filter((q) => (!q.target && q.method !== "GET") || q.target === "AmazonSQS.DeleteMessage");
  const occSpring = (name = BULK) => occ("campaign-spring", name, T);

  describe("a dead letter is a pointer, never a request", () => {
    it("a forged dead letter in Scheduler's shape with a free-form SendEmail body is refused and listed: exit 1, no schedule", async () => {
      const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", BULK, PHISHING, SES)]);
      const r = await run(aws, ["--all", "--json"]);
      assert.strictEqual(r.code, 1, r.stdout + r.stderr);
      assert.deepStrictEqual(creates(), [], "no schedule created");
      const report = JSON.parse(r.stdout);
      assert.deepStrictEqual(
        report.left.map((m: any) => [m.messageId, m.campaign]),
        [["m1", "spring"]],
      );
      assert.match(report.left[0].reason, new RegExp(`target ${SES} is not the stack's sender`));
      assert.deepStrictEqual(aws.visible(), [["m1", false]]);
    });

    it("the same request as a pointer-less body, or with pointer fields and a request, is not a pointer", async () => {
      const aws = new FakeAws([
        { MessageId: "m1", Body: JSON.stringify(PHISHING) },
        {
          MessageId: "m2",
          Body: JSON.stringify({ ...JSON.parse(pointer("x", { recipients: ["a7"] }).Body), bulk: PHISHING }),
        },
        { MessageId: "m3", Body: "not json" },
      ]);
      const r = await run(aws, ["--all", "--json"]);
      assert.strictEqual(r.code, 1);
      assert.deepStrictEqual(creates(), []);
      const left = JSON.parse(r.stdout).left;
      assert.deepStrictEqual(
        left.map((m: any) => [m.messageId, m.campaign]),
        [
          ["m1", null],
          ["m2", "spring"],
          ["m3", null],
        ],
      );
      assert.match(left[0].reason, /it carries FromEmailAddress, Destination, Content, which a pointer does not/);
      assert.match(left[1].reason, /it carries bulk, which a pointer does not/);
      assert.match(left[2].reason, /the body is not JSON/);
    });

    it("older dead letters ({input, error} of the gate or the sender) are left, never re-sent", async () => {
      const gate = {
        input: { email: PHISHING, campaign: "spring", schedule: arn("campaign-spring", "b2-1"), scheduled_time: T },
        error: { Error: "States.TaskFailed", Cause: "timeout after SES accepted it" },
      };
      const sender = { input: PHISHING_SENDER_INPUT, error: { Error: "MESSAGE_REJECTED" }, delivery: "not-sent" };
      const aws = new FakeAws([
        { MessageId: "m1", Body: JSON.stringify(gate) },
        { MessageId: "m2", Body: JSON.stringify(sender) },
      ]);
      const r = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(r.code, 1);
      assert.deepStrictEqual(creates(), []);
      const left = JSON.parse(r.stdout).left;
      assert.deepStrictEqual(
        left.map((m: any) => m.messageId),
        ["m1", "m2"],
      );
      for (const m of left) assert.match(m.reason, /it carries input, error.*which a pointer does not/);
    });

    it("Scheduler's dead letter of the sender gives only its ids: the request is rebuilt from the plan, the phishing body never sent", async () => {
      const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", BULK, PHISHING_SENDER_INPUT)]);
      // The sender never started: no outcome recorded, so SES may have been reached (unknown): left without the flag.
      const first = await run(aws, ["--all", "--json"]);
      assert.strictEqual(first.code, 1, first.stdout);
      assert.match(
        JSON.parse(first.stdout).left[0].reason,
        /SES may have sent a7 \(no outcome recorded\), b8 \(no outcome recorded\).*--resend-unknown/,
      );
      assert.deepStrictEqual(creates(), []);
      const second = await run(aws, ["--all", "--json", "--resend-unknown"]);
      assert.strictEqual(second.code, 0, second.stdout);
      const [s] = aws.schedules();
      assert.strictEqual(s.Name, `${BULK}-r1`);
      assert.strictEqual(s.Target.Arn, SENDER);
      assert.deepStrictEqual(JSON.parse(s.Target.Input), expectedBulkInput(BULK, ["a7", "b8"]));
      // By hand: the plan's template, sender and addresses, never the message's.
      const input = JSON.parse(s.Target.Input);
      assert.strictEqual(input.bulk.FromEmailAddress, FROM);
      assert.strictEqual(input.bulk.DefaultContent.Template.TemplateName, "spring-1");
      assert.deepStrictEqual(
        input.bulk.BulkEmailEntries.map((e: any) => e.Destination.ToAddresses[0]),
        ["a7@example.com", "b8@example.com"],
      );
      assert.doesNotMatch(s.Target.Input, /opted-out@|security@|login\.example\.net/);
      const sent = JSON.parse(second.stdout).redriven[0];
      assert.deepStrictEqual([sent.source, sent.planRow, sent.via], ["scheduler", BULK, "sender"]);
      assert.deepStrictEqual(aws.queue, []);
    });
  });

  describe("a send is found in the campaign's plan, or refused", () => {
    it("a pointer whose recipient is not in its plan row, or whose schedule is not in the plan, is refused and listed (exit 1)", async () => {
      await record_(ledger.client, occSpring(), { zz: ["not-sent", "MessageRejected"], a7: ["not-sent", "x"] });
      const aws = new FakeAws([
        pointer("m1", { recipients: ["a7", "zz"] }),
        pointer("m2", { schedule_name: "bulk.1.20261201T1500Z.0", recipients: ["a7"] }),
        pointer("m3", { recipients: ["zz"] }),
      ]);
      const r = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(r.code, 1);
      assert.deepStrictEqual(creates(), [], "a forged recipient is never sent, not even the real one beside it");
      const left = JSON.parse(r.stdout).left;
      assert.deepStrictEqual(
        left.map((m: any) => m.messageId),
        ["m1", "m2", "m3"],
      );
      assert.match(
        left[0].reason,
        new RegExp(
          `^refused: recipients zz are not in plan row ${BULK} \\(s3://${BUCKET}/plans/spring/L2.jsonl line 1\\)$`,
        ),
      );
      assert.match(
        left[1].reason,
        /^refused: no schedule bulk\.1\.20261201T1500Z\.0 \(nor one it redrives\) holding a7 is in the campaign's plan \(2 launches searched\)$/,
      );
      assert.match(
        left[2].reason,
        new RegExp(
          `^refused: ${BULK}'s plan row \\(s3://${BUCKET}/plans/spring/L2.jsonl line 1\\) holds none of the recipients zz$`,
        ),
      );
      assert.deepStrictEqual(aws.visible(), [
        ["m1", false],
        ["m2", false],
        ["m3", false],
      ]);
    });

    it("a campaign without a launch record, or a journey, is refused: nothing to rebuild from", async () => {
      const aws = new FakeAws([
        pointer("m1", { campaign: "winter", recipients: ["a7"] }),
        pointer("m2", { campaign: "welcome", schedule_name: "s1-1", recipients: ["s1"] }),
      ]);
      const r = await run(aws, ["--all", "--json"]);
      assert.strictEqual(r.code, 1);
      const left = JSON.parse(r.stdout).left;
      assert.match(
        left[0].reason,
        new RegExp(`campaign winter has no launch record in s3://${BUCKET}/launches/winter/`),
      );
      assert.match(left[1].reason, /welcome is a journey, which keeps no plan/);
      assert.deepStrictEqual(creates(), []);
    });

    it("the newest launch's plan wins over an older one's line of the same name", async () => {
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "MessageRejected"] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] })]);
      const r = await run(aws, ["--all"]);
      assert.strictEqual(r.code, 0, r.stdout);
      assert.strictEqual(
        JSON.parse(aws.schedules()[0].Target.Input).bulk.DefaultContent.Template.TemplateName,
        "spring-1",
      );
    });

    it("a plan whose download stalls is bounded: the send is left naming the plan, exit 1", async () => {
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "MessageRejected"] });
      s3.stall = { object: `${BUCKET}/plans/spring/L2.jsonl`, bytes: 10 };
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] })]);
      const started = Date.now();
      const r = await run(aws, ["--all", "--json", "--timeout-seconds", "1.5"]);
      assert.ok(Date.now() - started < 6_000, `took ${Date.now() - started} ms`);
      assert.strictEqual(r.code, 1);
      assert.match(
        JSON.parse(r.stdout).left[0].reason,
        new RegExp(
          `the campaign's plan cannot be read: reading s3://${BUCKET}/plans/spring/L2.jsonl: no result within the command's time limit of 1.5 s`,
        ),
      );
      assert.deepStrictEqual(creates(), []);
      assert.deepStrictEqual(aws.visible(), [["m1", false]]);
    });
  });

  describe("the ledger decides what is sent again", () => {
    it("a pointer to an occurrence the ledger lacks is not the sender's: never re-sent, not even with --resend-unknown (review)", async () => {
      await record_(ledger.client, occSpring(), { a7: ["sent", ""], b8: ["sent", ""], c9: ["sent", ""] });
      const aws = new FakeAws([
        // A redrive name that never existed: no claim of it in the ledger.
        pointer("m1", { recipients: ["b8"], outcome: "unknown", reason: "x", schedule_name: `${BULK}-r7` }),
        // The same instant spelt with milliseconds: refused as not Scheduler's spelling.
        pointer("m2", {
          recipients: ["b8"],
          outcome: "unknown",
          reason: "x",
          scheduled_time: "2026-12-01T14:00:00.000Z",
        }),
      ]);
      const r = await run(aws, ["--all", "--json", "--resend-unknown"]);
      assert.strictEqual(r.code, 1, r.stdout + r.stderr);
      assert.deepStrictEqual(creates(), [], "b8, recorded sent, gets no second mail");
      const left = JSON.parse(r.stdout).left.map((l: { reason: string }) => l.reason);
      assert.match(left.join("\n"), /the ledger has no such occurrence/);
      assert.match(left.join("\n"), /not a scheduled time as Scheduler writes it/);
    });

    it("only the not-sent recipient of a bulk line is re-sent, as the fan-out builds it; sent and opted-out ones never", async () => {
      await record_(ledger.client, occSpring(), {
        a7: ["sent", ""],
        b8: ["not-sent", "MessageRejected"],
        c9: ["skipped", "opted-out"],
      });
      const aws = new FakeAws(["a7", "b8", "c9"].map((id, i) => pointer(`m${i + 1}`, { recipients: [id] })));
      const before = Date.now();
      const r = await run(aws, ["--campaign", "spring", "--json"]);
      const after = Date.now();
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      assert.deepStrictEqual(aws.queue, [], "every message deleted");
      const [s, ...others] = aws.schedules();
      assert.deepStrictEqual(others, []);
      const at = Date.parse(s.ScheduleExpression.slice(3, -1) + "Z");
      assert.ok(at >= before + 120_000 && at < after + 180_000 && at % 60_000 === 0, s.ScheduleExpression);
      assert.deepStrictEqual(s, {
        Name: "b8-1-r1",
        GroupName: "campaign-spring",
        ScheduleExpression: s.ScheduleExpression,
        ScheduleExpressionTimezone: "UTC",
        Description: `sendtime redrive of ${arn("campaign-spring", BULK)} @ ${T} entry b8-1`,
        FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: 15 },
        ActionAfterCompletion: "NONE",
        Target: {
          Arn: SENDER,
          RoleArn: ROLE,
          Input: JSON.stringify(expectedBulkInput(BULK, ["b8"])),
          DeadLetterConfig: { Arn: DLQ_ARN },
        },
      });
      // By hand: one entry, b8's address, the List-Unsubscribe pair from its link, the Scheduler placeholders.
      const input = JSON.parse(s.Target.Input);
      assert.deepStrictEqual(input.recipients, ["b8"]);
      assert.deepStrictEqual(input.bulk.BulkEmailEntries[0].Destination, { ToAddresses: ["b8@example.com"] });
      assert.deepStrictEqual(input.bulk.BulkEmailEntries[0].ReplacementHeaders[0], {
        Name: "List-Unsubscribe",
        Value: "<https://u.example.com/?t=b8.sig>",
      });
      assert.deepStrictEqual(
        [input.schedule, input.scheduled_time],
        ["<aws.scheduler.schedule-arn>", "<aws.scheduler.scheduled-time>"],
      );
      const report = JSON.parse(r.stdout);
      assert.deepStrictEqual(Object.keys(report), [
        "queue",
        "campaign",
        "dryRun",
        "received",
        "redriven",
        "alreadyRedriven",
        "left",
        "otherCampaigns",
        "problems",
        "nothingToResend",
      ]);
      const sent = report.redriven[0];
      assert.deepStrictEqual(
        [sent.messageId, sent.campaign, sent.original, sent.schedule, sent.group, sent.via, sent.error, sent.at],
        [
          "m2",
          "spring",
          BULK,
          "b8-1-r1",
          "campaign-spring",
          "sender",
          "not-sent: MessageRejected",
          new Date(at).toISOString(),
        ],
      );
      assert.deepStrictEqual(sent.recipients, [{ recipient: "b8", outcome: "not-sent", reason: "MessageRejected" }]);
      assert.deepStrictEqual(report.nothingToResend, [
        {
          messageId: "m1",
          campaign: "spring",
          original: BULK,
          recipients: [{ recipient: "a7", outcome: "sent", reason: "" }],
          held: null,
        },
        {
          messageId: "m3",
          campaign: "spring",
          original: BULK,
          recipients: [{ recipient: "c9", outcome: "skipped", reason: "opted-out" }],
          held: null,
        },
      ]);
    });

    it("a sender's pointer naming several recipients is refused: one entry a message, so no recipient is redriven twice", async () => {
      await record_(ledger.client, occSpring(), { a7: ["not-sent", "x"], b8: ["not-sent", "x"] });
      const aws = new FakeAws([pointer("m1", { recipients: ["a7", "b8"] })]);
      const r = await run(aws, ["--all"]);
      assert.strictEqual(r.code, 1);
      assert.match(
        r.stdout,
        /m1 \(spring\): refused: the sender writes one dead letter per failed entry; this one names 2 recipients/,
      );
      assert.deepStrictEqual(creates(), []);
    });

    it("Scheduler's dead letter of an occurrence the sender ran re-sends nothing the ledger records (the sender's own pointers do)", async () => {
      await record_(ledger.client, occSpring(), { a7: ["sent", ""], b8: ["not-sent", "x"] });
      const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", BULK, PHISHING_SENDER_INPUT)]);
      const r = await run(aws, ["--all", "--json", "--resend-unknown"]);
      assert.strictEqual(r.code, 0, r.stdout);
      assert.deepStrictEqual(creates(), []);
      assert.deepStrictEqual(
        JSON.parse(r.stdout).nothingToResend[0].recipients.map((x: any) => [x.recipient, x.outcome]),
        [
          ["a7", "sent"],
          ["b8", "not-sent"],
        ],
      );
      assert.deepStrictEqual(aws.queue, []);
    });

    it("an unknown recipient is left (exit 1) and re-sent only with --resend-unknown", async () => {
      await record_(ledger.client, occSpring(), { b8: ["unknown", "States.Timeout"] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"], outcome: "unknown", reason: "States.Timeout" })]);
      const r = await run(aws, ["--campaign", "spring"]);
      assert.strictEqual(r.code, 1, r.stdout);
      assert.match(
        r.stdout,
        /m1 \(spring\): bulk\.1\.20261201T1400Z\.0 @ 2026-12-01T14:00:00Z: SES may have sent b8 \(States\.Timeout\).*--resend-unknown/,
      );
      assert.deepStrictEqual(creates(), []);
      assert.deepStrictEqual(aws.visible(), [["m1", false]]);
      const again = await run(aws, ["--campaign", "spring", "--resend-unknown"]);
      assert.strictEqual(again.code, 0, again.stdout);
      assert.deepStrictEqual(
        aws.schedules().map((s) => [s.Name, s.Description]),
        [["b8-1-r1", `sendtime redrive of ${arn("campaign-spring", BULK)} @ ${T} entry b8-1`]],
      );
      assert.deepStrictEqual(JSON.parse(aws.schedules()[0].Target.Input), expectedBulkInput(BULK, ["b8"]));
    });

    it("a pointer saying not-sent does not outweigh the ledger: a recipient it records as sent is not re-sent", async () => {
      await record_(ledger.client, occSpring(), { b8: ["sent", ""] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"], outcome: "not-sent" })]);
      const r = await run(aws, ["--all", "--json"]);
      assert.strictEqual(r.code, 0, r.stdout);
      assert.deepStrictEqual(creates(), []);
      assert.deepStrictEqual(JSON.parse(r.stdout).nothingToResend[0].recipients, [
        { recipient: "b8", outcome: "sent", reason: "" },
      ]);
      assert.deepStrictEqual(aws.queue, []);
    });

    it("a per-recipient row is re-sent as the fan-out builds it (list management), after the campaign's quiet time", async () => {
      await record_(ledger.client, occ("campaign-autumn", "d4-1", T), { d4: ["not-sent", "Throttling"] });
      const aws = new FakeAws([pointer("m1", { campaign: "autumn", schedule_name: "d4-1", recipients: ["d4"] })]);
      const r = await run(aws, ["--campaign", "autumn", "--json"]);
      assert.strictEqual(r.code, 0, r.stdout);
      const [s] = aws.schedules("campaign-autumn");
      const row = JSON.parse(JSON.stringify(AUTUMN_PLAN[0])) as PlanRow;
      const expected = recipientSenderInput(
        { ...target, listManagement: { contactListName: CONTACT_LIST, topicName: TOPIC } },
        "autumn",
        row,
      );
      assert.deepStrictEqual(JSON.parse(s.Target.Input), expected);
      assert.deepStrictEqual(JSON.parse(s.Target.Input).list_management, {
        ContactListName: CONTACT_LIST,
        TopicName: TOPIC,
      });
      // Quiet until three hours from an hour ago (Tokyo's clock): the redrive goes when it ends, written in UTC.
      assert.strictEqual(s.ScheduleExpression, `at(${new Date(quietEndsAt).toISOString().slice(0, 19)})`);
      assert.strictEqual(s.Name, "d4-1-r1");
      assert.strictEqual(JSON.parse(r.stdout).redriven[0].quiet, "delayed");
    });
  });

  describe("a send a pause held follows the campaign's missed-time policy", () => {
    const realNow = clock.now;
    afterEach(() => (clock.now = realNow));
    /** Redrive's clock, pinned (the sender holds a send when it fires, so its time has always passed). */
    const at = (iso: string) => (clock.now = () => Date.parse(iso));
    const putRecord = (campaignId: string, id: string, missed: unknown) =>
      s3.objects.set(
        `${BUCKET}/launches/${campaignId}/${id}.json`,
        Buffer.from(JSON.stringify(record(campaignId, id, "2026-11-20T10:00:00.000Z", null, missed))),
      );
    const held = (
      id: string,
      recipient: string,
      more: { campaign?: string; schedule_name?: string; scheduled_time?: string } = {},
    ) => pointer(id, { recipients: [recipient], outcome: "skipped", reason: "paused", ...more });
    const harvest = (id: string, recipient: string, time: string) =>
      held(id, recipient, { campaign: "harvest", schedule_name: `${recipient}-1`, scheduled_time: time });
    const atOf = (s: any) => s.ScheduleExpression;

    it("skip (the launcher's default): a held send is not re-sent, listed and deleted (exit 0); capped or cancelled never", async () => {
      await record_(ledger.client, occSpring(), {
        a7: ["skipped", "capped"],
        b8: ["skipped", "cancelled"],
        c9: ["skipped", "paused"],
      });
      at("2026-12-01T14:20:00Z");
      const aws = new FakeAws(
        ["a7", "b8", "c9"].map((id, i) => pointer(`m${i}`, { recipients: [id], outcome: "skipped", reason: "x" })),
      );
      const r = await run(aws, ["--all", "--json"]);
      assert.strictEqual(r.code, 0, r.stdout);
      assert.deepStrictEqual(creates(), [], "nothing re-sent, though the pause held c9 only 22 minutes");
      assert.deepStrictEqual(aws.queue, [], "every message deleted: nothing left to send");
      const report = JSON.parse(r.stdout);
      assert.deepStrictEqual(report.redriven, []);
      assert.deepStrictEqual(
        report.nothingToResend.map((m: any) => [m.messageId, m.recipients]),
        [
          ["m0", [{ recipient: "a7", outcome: "skipped", reason: "capped" }]],
          ["m1", [{ recipient: "b8", outcome: "skipped", reason: "cancelled" }]],
          ["m2", [{ recipient: "c9", outcome: "skipped", reason: "missed while paused: missed-time policy skip" }]],
        ],
      );
      assert.deepStrictEqual(report.nothingToResend[2].held, {
        policy: "skip",
        graceMinutes: 60,
        from: "launch record",
        lateMinutes: 22,
        outcome: "not-re-sent",
        at: null,
        reason: "missed while paused: missed-time policy skip",
      });
      assert.strictEqual(report.nothingToResend[0].held, null);
    });

    it("send-now: re-sent at the redrive time when late by less than the grace; from the grace on, not re-sent", async () => {
      putRecord("spring", "L2", missedSummary("send-now", 60));
      await record_(ledger.client, occSpring(), { b8: ["skipped", "paused"], c9: ["skipped", "paused"] });
      // 14:30:20 + 2 minutes, up to the minute: 14:33, 33 minutes after the held 14:00.
      at("2026-12-01T14:30:20Z");
      const aws = new FakeAws([held("m1", "c9")]);
      const first = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(first.code, 0, first.stdout);
      assert.deepStrictEqual(
        aws.schedules().map((s) => [s.Name, atOf(s)]),
        [["c9-1-r1", "at(2026-12-01T14:33:00)"]],
      );
      assert.deepStrictEqual(JSON.parse(aws.schedules()[0].Target.Input), expectedBulkInput(BULK, ["c9"]));
      const sent = JSON.parse(first.stdout).redriven[0];
      assert.strictEqual(sent.at, "2026-12-01T14:33:00.000Z");
      assert.deepStrictEqual(sent.recipients, [{ recipient: "c9", outcome: "skipped", reason: "paused" }]);
      assert.deepStrictEqual(
        [sent.held.policy, sent.held.graceMinutes, sent.held.lateMinutes, sent.held.outcome, sent.held.at],
        ["send-now", 60, 33, "sent-now", "2026-12-01T14:33:00.000Z"],
      );
      // 14:58 + 2 minutes: 15:00, exactly the grace of 60 minutes late: the launcher sends now only under it.
      at("2026-12-01T14:58:00Z");
      aws.add([held("m2", "b8")]);
      const second = await run(aws, ["--campaign", "spring"]);
      assert.strictEqual(second.code, 0, second.stdout);
      assert.deepStrictEqual(creates(), []);
      assert.deepStrictEqual(aws.queue, []);
      assert.match(
        second.stdout,
        /nothing left to send .*: 1\n {4}bulk\.1\.20261201T1400Z\.0: b8 skipped \(missed while paused: 60 minutes late at 2026-12-01T15:00:00\.000Z, not less than the grace of 60 minutes: missed-time policy send-now\)\n/,
      );
    });

    it("next-day: the same local time on the first day after the redrive, across New York's change of clocks", async () => {
      await record_(ledger.client, occ("campaign-harvest", "f6-1", "2026-10-31T13:00:00Z"), {
        f6: ["skipped", "paused"],
      });
      await record_(ledger.client, occ("campaign-harvest", "g7-1", "2026-10-31T22:00:00Z"), {
        g7: ["skipped", "paused"],
      });
      // Redriven on Sunday 2026-11-01 at 11:00 EST (16:00Z), the day New York went from EDT (UTC-4) to EST (UTC-5).
      at("2026-11-01T16:00:00Z");
      const aws = new FakeAws([
        harvest("m1", "f6", "2026-10-31T13:00:00Z"),
        harvest("m2", "g7", "2026-10-31T22:00:00Z"),
      ]);
      const dry = await run(aws, ["--campaign", "harvest", "--dry-run"]);
      assert.strictEqual(dry.code, 0, dry.stdout);
      assert.match(
        dry.stdout,
        /\n {4}campaign-harvest\/f6-1-r1 at 2026-11-02T14:00:00\.000Z: 1 recipient of f6-1 \(was f6-1: skipped: paused\); held by a pause, moved to 2026-11-02T14:00:00\.000Z, 09:00 America\/New_York on the first later day past the redrive's time: missed-time policy next-day\n/,
      );
      const r = await run(aws, ["--campaign", "harvest", "--json"]);
      assert.strictEqual(r.code, 0, r.stdout);
      // By hand: f6's 09:00 is past on 11-01 (14:00Z), so Monday 11-02 09:00 EST = 14:00Z (not 13:00Z, 48 hours on);
      // g7's 18:00 on 11-01 is still ahead: 18:00 EST = 23:00Z (not 22:00Z, 24 hours on).
      const expected = [
        ["f6-1-r1", "at(2026-11-02T14:00:00)"],
        ["g7-1-r1", "at(2026-11-01T23:00:00)"],
      ];
      assert.deepStrictEqual(
        aws.schedules("campaign-harvest").map((s) => [s.Name, atOf(s)]),
        expected,
      );
      for (const [i, [day, hour]] of [
        [2, 9],
        [1, 18],
      ].entries())
        assert.strictEqual(
          DateTime.fromObject({ year: 2026, month: 11, day, hour }, { zone: "America/New_York" })
            .toUTC()
            .toISO({ suppressMilliseconds: true, includeOffset: false }),
          expected[i][1].slice(3, -1),
          "luxon agrees",
        );
      const report = JSON.parse(r.stdout);
      assert.deepStrictEqual(
        report.redriven.map((s: any) => [s.schedule, s.at, s.held.outcome, s.held.at, s.quiet]),
        [
          ["f6-1-r1", "2026-11-02T14:00:00.000Z", "next-day", "2026-11-02T14:00:00.000Z", "none"],
          ["g7-1-r1", "2026-11-01T23:00:00.000Z", "next-day", "2026-11-01T23:00:00.000Z", "none"],
        ],
      );
      assert.deepStrictEqual(aws.queue, []);
    });

    it("a held send an earlier run re-sent (its DeleteMessage failed) is listed as redriven, though now past the grace", async () => {
      putRecord("spring", "L2", missedSummary("send-now", 60));
      await record_(ledger.client, occSpring(), { c9: ["skipped", "paused"] });
      at("2026-12-01T14:30:20Z");
      const aws = new FakeAws([held("m1", "c9")]);
      aws.override = (q) =>
        q.target === "AmazonSQS.DeleteMessage" ? error(500, "InternalError", "try later") : undefined;
      const first = await run(aws, ["--campaign", "spring"], { AWS_MAX_ATTEMPTS: "1" });
      assert.strictEqual(first.code, 1, "the message is still there");
      aws.override = () => undefined;
      at("2026-12-01T15:30:00Z");
      const second = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(second.code, 0, second.stdout);
      const report = JSON.parse(second.stdout);
      assert.deepStrictEqual(report.nothingToResend, [], "not 'nothing left to send': c9-1-r1 sends it");
      assert.deepStrictEqual(
        report.alreadyRedriven.map((x: any) => [x.schedule, x.at, x.held.outcome]),
        [["c9-1-r1", "2026-12-01T14:33:00.000Z", "not-re-sent"]],
      );
      assert.deepStrictEqual(
        aws.schedules().map((x) => x.Name),
        ["c9-1-r1"],
      );
      assert.deepStrictEqual(aws.queue, []);
    });

    it("--missed (and --grace-minutes) overrides the launch record's policy for held sends", async () => {
      await record_(ledger.client, occ("campaign-harvest", "f6-1", "2026-10-31T13:00:00Z"), {
        f6: ["skipped", "paused"],
      });
      at("2026-11-01T16:00:00Z");
      const aws = new FakeAws([harvest("m1", "f6", "2026-10-31T13:00:00Z")]);
      const skip = await run(aws, ["--campaign", "harvest", "--json", "--missed", "skip"]);
      assert.strictEqual(skip.code, 0, skip.stdout);
      assert.deepStrictEqual(creates(), [], "the record says next-day; --missed skip wins");
      assert.deepStrictEqual(JSON.parse(skip.stdout).nothingToResend[0].held.from, "--missed");

      await record_(ledger.client, occSpring(), { b8: ["skipped", "paused"], c9: ["skipped", "paused"] });
      at("2026-12-01T14:30:20Z");
      aws.add([held("m2", "c9")]);
      const tight = await run(aws, ["--campaign", "spring", "--json", "--missed", "send-now", "--grace-minutes", "30"]);
      assert.strictEqual(tight.code, 0, tight.stdout);
      assert.deepStrictEqual(creates(), [], "33 minutes late, over a grace of 30");
      aws.add([held("m3", "b8")]);
      const now = await run(aws, ["--campaign", "spring", "--json", "--missed", "send-now"]);
      assert.strictEqual(now.code, 0, now.stdout);
      assert.deepStrictEqual(
        aws.schedules().map((s) => [s.Name, atOf(s)]),
        [["b8-1-r1", "at(2026-12-01T14:33:00)"]],
        "the record says skip; --missed send-now (grace 60, the launcher's default) re-sends it",
      );
      assert.deepStrictEqual(JSON.parse(now.stdout).redriven[0].held.from, "--missed");
    });

    it("a launch record that states no missed-time policy: its held sends are left, listed (exit 1), not guessed; others as before", async () => {
      putRecord("spring", "L2", NO_MISSED);
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "MessageRejected"], c9: ["skipped", "paused"] });
      at("2026-12-01T14:30:20Z");
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] }), held("m2", "c9")]);
      const r = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(r.code, 1, r.stdout);
      assert.deepStrictEqual(
        aws.schedules().map((s) => [s.Name, atOf(s)]),
        [["b8-1-r1", "at(2026-12-01T14:33:00)"]],
        "a not-sent send is re-sent as before",
      );
      const report = JSON.parse(r.stdout);
      assert.deepStrictEqual(
        report.left.map((m: any) => m.messageId),
        ["m2"],
      );
      assert.strictEqual(
        report.left[0].reason,
        `${BULK} @ ${T}: held by a pause, and the launch record s3://${BUCKET}/launches/spring/L2.json states no missed-time policy (missed): not re-sent; redrive with --missed skip|send-now|next-day to decide`,
      );
      assert.deepStrictEqual(aws.visible(), [["m2", false]]);
      const decided = await run(aws, ["--campaign", "spring", "--missed", "skip"]);
      assert.strictEqual(decided.code, 0, decided.stdout);
      assert.deepStrictEqual(aws.queue, []);
    });

    it("a launch record whose missed-time policy the launcher does not write refuses the campaign's sends, naming it", async () => {
      putRecord("spring", "L2", { ...missedSummary("later") });
      await record_(ledger.client, occSpring(), { c9: ["skipped", "paused"] });
      const aws = new FakeAws([held("m1", "c9")]);
      const r = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(r.code, 1, r.stdout);
      assert.match(
        JSON.parse(r.stdout).left[0].reason,
        new RegExp(
          `^s3://${BUCKET}/launches/spring/L2\\.json: the record's missed-time policy \\(missed\\) is .*"later".*; expected \\{policy: skip\\|send-now\\|next-day, graceMinutes: 0-10080\\}`,
        ),
      );
      assert.deepStrictEqual(creates(), []);
    });

    it("--missed takes the launcher's values; --grace-minutes goes with it (exit 2)", async () => {
      const aws = new FakeAws([]);
      const bad = await run(aws, ["--all", "--missed", "later"]);
      assert.strictEqual(bad.code, 2);
      assert.match(bad.stderr, /--missed later: one of skip, send-now, next-day/);
      const grace = await run(aws, ["--all", "--grace-minutes", "99999"]);
      assert.strictEqual(grace.code, 2);
      const alone = await run(aws, ["--all", "--grace-minutes", "30"]);
      assert.strictEqual(alone.code, 2);
      assert.match(alone.stderr, /--grace-minutes 30 goes with --missed/);
    });
  });

  describe("idempotent: a second redrive creates nothing", () => {
    it("the schedule the first run created (its DeleteMessage failed) is found, nothing sent twice", async () => {
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "MessageRejected"] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] })]);
      aws.override = (q) =>
        q.target === "AmazonSQS.DeleteMessage" ? error(500, "InternalError", "try later") : undefined;
      const first = await run(aws, ["--campaign", "spring"], { AWS_MAX_ATTEMPTS: "1" });
      assert.strictEqual(first.code, 1, "the message is still there");
      aws.override = () => undefined;
      const second = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(second.code, 0, second.stdout);
      const report = JSON.parse(second.stdout);
      assert.deepStrictEqual(report.redriven, []);
      assert.deepStrictEqual(
        report.alreadyRedriven.map((s: any) => [s.messageId, s.schedule]),
        [["m1", "b8-1-r1"]],
      );
      assert.deepStrictEqual(
        aws.schedules().map((s) => s.Name),
        ["b8-1-r1"],
      );
      assert.deepStrictEqual(aws.queue, []);
    });

    it("the same messages planted again after a redrive create nothing and are deleted", async () => {
      await record_(ledger.client, occSpring(), { a7: ["not-sent", "x"], b8: ["not-sent", "x"] });
      const messages = () => [pointer("m1", { recipients: ["a7"] }), pointer("m2", { recipients: ["b8"] })];
      const aws = new FakeAws(messages());
      const first = await run(aws, ["--all"]);
      assert.strictEqual(first.code, 0, first.stdout);
      assert.deepStrictEqual(
        aws.schedules().map((s) => s.Name),
        ["a7-1-r1", "b8-1-r1"],
      );
      aws.add(messages().map((m) => ({ ...m, MessageId: `${m.MessageId}-again` })));
      const second = await run(aws, ["--all", "--json"]);
      assert.strictEqual(second.code, 0, second.stdout);
      assert.strictEqual(creates().length, 2, "both CreateSchedule calls met their ConflictException");
      assert.strictEqual(aws.schedules().length, 2);
      const report = JSON.parse(second.stdout);
      assert.deepStrictEqual(report.redriven, []);
      assert.deepStrictEqual(
        report.alreadyRedriven.map((s: any) => [s.messageId, s.schedule]),
        [
          ["m1-again", "a7-1-r1"],
          ["m2-again", "b8-1-r1"],
        ],
      );
      assert.deepStrictEqual(aws.queue, []);
    });

    it("a redriven entry that fails again is found in the plan by its recipient-step and counts on (a7-1-r1 → a7-1-r2)", async () => {
      await record_(ledger.client, occ("campaign-spring", "a7-1-r1", "2026-12-02T09:03:00Z"), {
        a7: ["not-sent", "x"],
      });
      const aws = new FakeAws([
        pointer("m1", { schedule_name: "a7-1-r1", scheduled_time: "2026-12-02T09:03:00Z", recipients: ["a7"] }),
      ]);
      aws.groups
        .get("campaign-spring")!
        .set("a7-1-r1", { Name: "a7-1-r1", Description: "sendtime redrive of the first failure" });
      const r = await run(aws, ["--all", "--json"]);
      assert.strictEqual(r.code, 0, r.stdout);
      const [, s] = aws.schedules();
      assert.strictEqual(s.Name, "a7-1-r2");
      assert.strictEqual(
        s.Description,
        `sendtime redrive of ${arn("campaign-spring", "a7-1-r1")} @ 2026-12-02T09:03:00Z entry a7-1`,
      );
      assert.deepStrictEqual(JSON.parse(s.Target.Input), expectedBulkInput(BULK, ["a7"]));
      assert.strictEqual(JSON.parse(r.stdout).redriven[0].planRow, BULK);
    });
  });

  describe("as before", () => {
    it("a message is deleted only after its schedule exists: a failing CreateSchedule leaves it (exit 1), visible again", async () => {
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "x"] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] })]);
      aws.override = (q) => (isCreateSchedule(q) ? error(400, "ValidationException", "Invalid RoleArn") : undefined);
      const r = await run(aws, ["--campaign", "spring"]);
      assert.strictEqual(r.code, 1, r.stdout + r.stderr);
      assert.strictEqual(endpoint!.requests.filter((q) => q.target === "AmazonSQS.DeleteMessage").length, 0);
      assert.deepStrictEqual(aws.visible(), [["m1", false]]);
      assert.match(
        r.stdout,
        /LEFT in the queue: 1\n {4}- m1 \(spring\): CreateSchedule campaign-spring\/b8-1-r1 \(redrive of bulk\.1\.20261201T1400Z\.0\): ValidationException: Invalid RoleArn \(HTTP 400\)\n/,
      );
    });

    it("pages ReceiveMessage until the queue answers empty (25 messages: 3 pages and an empty one), the plan read once", async () => {
      const ids = ["a7", "b8", "c9"];
      await record_(ledger.client, occSpring(), Object.fromEntries(ids.map((id) => [id, ["not-sent", "x"]])));
      const aws = new FakeAws(Array.from({ length: 25 }, (_, i) => pointer(`m${i}`, { recipients: [ids[i % 3]] })));
      const r = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(r.code, 0, r.stdout);
      assert.strictEqual(aws.receives, 4);
      const report = JSON.parse(r.stdout);
      assert.strictEqual(report.redriven.length + report.alreadyRedriven.length, 25);
      assert.strictEqual(aws.schedules().length, 3, "copies of one pointer share its schedule");
      assert.deepStrictEqual(aws.queue, []);
      assert.strictEqual(
        s3.requests.filter((q) => q.method === "GET" && q.path === `${BUCKET}/plans/spring/L2.jsonl`).length,
        1,
      );
    });

    it("--dry-run creates and deletes nothing, says what it would do, and leaves every message visible", async () => {
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "x"], a7: ["sent", ""] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] }), pointer("m2", { recipients: ["a7"] })]);
      const r = await run(aws, ["--campaign", "spring", "--dry-run", "--json"]);
      assert.strictEqual(r.code, 0, r.stdout);
      assert.deepStrictEqual(writes(), []);
      assert.deepStrictEqual(aws.schedules(), []);
      assert.deepStrictEqual(aws.visible(), [
        ["m1", false],
        ["m2", false],
      ]);
      const report = JSON.parse(r.stdout);
      assert.strictEqual(report.dryRun, true);
      assert.deepStrictEqual(
        report.redriven.map((s: any) => s.schedule),
        ["b8-1-r1"],
      );
      assert.deepStrictEqual(
        report.nothingToResend.map((m: any) => m.messageId),
        ["m2"],
      );
    });

    it("--campaign leaves other campaigns' messages as they were; what it cannot read is left and named (exit 1)", async () => {
      const truncated = schedulerDeadLetter("m3", "campaign-spring", BULK, PHISHING_SENDER_INPUT);
      truncated.MessageAttributes!.IS_PAYLOAD_TRUNCATED.StringValue = "true";
      const aws = new FakeAws([
        pointer("m1", { campaign: "autumn", schedule_name: "d4-1", recipients: ["d4"] }),
        { MessageId: "m2", Body: "not json" },
        truncated,
      ]);
      const r = await run(aws, ["--campaign", "spring", "--json"]);
      assert.strictEqual(r.code, 1);
      const report = JSON.parse(r.stdout);
      assert.strictEqual(report.otherCampaigns, 1);
      assert.deepStrictEqual(
        report.left.map((m: any) => [m.messageId, m.campaign]),
        [
          ["m2", null],
          ["m3", "spring"],
        ],
      );
      assert.match(report.left[1].reason, /truncated/);
      assert.deepStrictEqual(writes(), []);
      assert.deepStrictEqual(aws.visible(), [
        ["m1", false],
        ["m2", false],
        ["m3", false],
      ]);
    });

    it("a group that is gone (cancelled) is not brought back: the message is left, exit 1", async () => {
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "x"] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] })]);
      aws.groups.delete("campaign-spring");
      const r = await run(aws, ["--all"]);
      assert.strictEqual(r.code, 1);
      assert.match(
        r.stdout,
        /m1 \(spring\): CreateSchedule campaign-spring\/b8-1-r1: the group campaign-spring does not exist/,
      );
      assert.strictEqual(aws.queue.length, 1);
    });

    it("a throttling Scheduler is bounded by --timeout-seconds: exit 1, the message left and visible again", async () => {
      await record_(ledger.client, occSpring(), { b8: ["not-sent", "x"] });
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] })]);
      aws.override = (q) => (isCreateSchedule(q) ? error(400, "ThrottlingException", "Rate exceeded") : undefined);
      const started = Date.now();
      const r = await run(aws, ["--campaign", "spring", "--timeout-seconds", "1.5"]);
      assert.ok(Date.now() - started < 6_000, `took ${Date.now() - started} ms`);
      assert.strictEqual(r.code, 1);
      assert.match(
        r.stdout,
        /m1 \(spring\): CreateSchedule campaign-spring\/b8-1-r1 \(redrive of bulk\.1\.20261201T1400Z\.0\): no result within the command's time limit of 1\.5 s/,
      );
      assert.deepStrictEqual(aws.visible(), [["m1", false]]);
    });

    it("a ledger that does not answer is bounded too: the message is left naming the GetItem", async () => {
      const aws = new FakeAws([pointer("m1", { recipients: ["b8"] })]);
      const silent = await startEndpoint(() => "hang");
      try {
        const r = await run(aws, ["--all", "--timeout-seconds", "1"], { AWS_ENDPOINT_URL_DYNAMODB: silent.url });
        assert.strictEqual(r.code, 1);
        assert.match(
          r.stdout,
          new RegExp(
            `m1 \\(spring\\): GetItem occ#${arn("campaign-spring", BULK)}#${T} from the ledger ${LEDGER}: no result within`,
          ),
        );
        assert.deepStrictEqual(creates(), []);
      } finally {
        await silent.close();
      }
    });

    it("an SQS that never answers: one line naming the call, exit 1, within the time limit", async () => {
      const aws = new FakeAws([]);
      aws.override = () => "hang";
      const started = Date.now();
      const r = await run(aws, ["--all", "--timeout-seconds", "0.5"]);
      assert.ok(Date.now() - started < 3_000);
      assert.strictEqual(r.code, 1);
      assert.strictEqual(
        r.stderr
          .split("\n")
          .filter((l) => !l.startsWith("still waiting"))
          .join("\n"),
        `error: GetQueueAttributes QueueArn of ${DLQ}: no result within the command's time limit of 0.5 s (--timeout-seconds)\n`,
      );
    });

    it("needs exactly one of --campaign and --all, and the stack outputs it rebuilds from (exit 2)", async () => {
      const r = await runMain(redrive, ["--outputs", outputs]);
      assert.strictEqual(r.code, 2);
      assert.match(r.stderr, /give --campaign ID .* or --all/);
      const partial = path.join(tmp, "partial.json");
      const { ledgerTableName, bucketName, ...rest } = stack;
      fs.writeFileSync(partial, JSON.stringify(rest));
      const missing = await runMain(redrive, ["--all", "--outputs", partial]);
      assert.strictEqual(missing.code, 2);
      assert.match(missing.stderr, /missing stack outputs: bucketName, ledgerTableName/);
      assert.ok(ledgerTableName && bucketName);
    });
  });
});

describe("redrive's plan search and names", () => {
  const send = (original: string, recipients: string[], source: FailedSend["source"] = "sender"): FailedSend => ({
    campaignId: "spring",
    group: "campaign-spring",
    original,
    scheduleArn: arn("campaign-spring", original),
    scheduledTime: T,
    recipients,
    source,
    error: "",
  });
  const lines = SPRING_PLAN.map((r) => JSON.stringify(r));

  it("finds a row by its name, by a redrive of it, and by a hashed redrive of a long recipient-step", () => {
    const long = LONG_ID();
    // By hand: `<id>-1` is 64 characters, so its -r2 keeps 52 of them, a dot, 8 hex of its hash, then -r2.
    const hashed = `${`${long}-1`.slice(0, 52)}.${createHash("sha256").update(`${long}-1`).digest("hex").slice(0, 8)}-r2`;
    assert.strictEqual(redriveName(`${long}-1`, 2), hashed);
    const sends = [
      send(BULK, ["b8"]),
      send(`${BULK}-r3`, ["a7", "c9"], "scheduler"),
      send("b8-2-r1", ["b8"]),
      send(hashed, [long]),
      send("b8-3-r1", ["b8"]),
    ];
    const search = new PlanSearch(sends);
    lines.forEach((l, i) => search.offer(l, `line ${i + 1}`, "L2"));
    const rows = sends.map((s) => {
      const f = search.result(s, "searched");
      return "reason" in f ? f.reason : [f.row.schedule_name, f.where];
    });
    assert.deepStrictEqual(rows.slice(0, 4), [
      [BULK, "line 1"],
      [BULK, "line 1"],
      ["bulk.2.20261203T1400Z.0", "line 2"],
      ["bulk.1.20261201T1401Z.0", "line 3"],
    ]);
    assert.match(rows[4] as string, /^refused: no schedule b8-3-r1/);
    assert.strictEqual(search.pending, 1);
  });

  it("a plan line that is not one is named, line and all", () => {
    const search = new PlanSearch([send(BULK, ["b8"])]);
    assert.throws(
      () => search.offer("{", "plans/spring/L2.jsonl line 7", "L2"),
      /^Error: plans\/spring\/L2.jsonl line 7: not a plan line \(not JSON\)$/,
    );
  });

  it("<original>-r<N>, counting on from a redrive's own -r<M>, and stable within 64 characters", () => {
    assert.strictEqual(redriveName("a1-1", 1), "a1-1-r1");
    assert.strictEqual(redriveName("a1-1-r1", 2), "a1-1-r2");
    const long = "x".repeat(62) + "-1";
    const name = redriveName(long, 3);
    assert.strictEqual(name.length, 64);
    assert.match(name, /^x{52}\.[0-9a-f]{8}-r3$/);
    assert.strictEqual(redriveName(long, 3), name);
    assert.notStrictEqual(redriveName("x".repeat(62) + "-2", 3), name);
  });

  it("reads a launch record's missed-time policy back as the launcher wrote it; none is null, anything else refused", () => {
    const rec = (missed: unknown) =>
      record("spring", "L2", "2026-11-20T10:00:00.000Z", null, missed) as unknown as LaunchRecord;
    assert.deepStrictEqual(launchMissedPolicy(rec(missedSummary("next-day", 0)), "r"), {
      policy: "next-day",
      graceMinutes: 0,
    });
    assert.deepStrictEqual(launchMissedPolicy(rec(missedSummary("send-now", 10_080)), "r"), {
      policy: "send-now",
      graceMinutes: 10_080,
    });
    assert.strictEqual(launchMissedPolicy(rec(NO_MISSED), "r"), null);
    for (const bad of [
      missedSummary("later"),
      missedSummary("Skip"),
      missedSummary("skip", -1),
      missedSummary("skip", 10_081),
      missedSummary("skip", 1.5),
      { ...missedSummary("skip"), graceMinutes: "60" },
      { policy: "skip" },
      null,
      "skip",
    ])
      assert.throws(
        () => launchMissedPolicy(rec(bad), "s3://b/launches/spring/L2.json"),
        /^Error: s3:\/\/b\/launches\/spring\/L2.json: the record's missed-time policy \(missed\) is .*; expected \{policy: skip\|send-now\|next-day, graceMinutes: 0-10080\} as the launcher writes it$/,
      );
  });

  it("reads a launch record's quiet time back as the launcher wrote it, and refuses words it does not know", () => {
    const rec = (quiet: unknown) =>
      ({ ...record("spring", "L2", "2026-11-20T10:00:00.000Z", quiet) }) as unknown as LaunchRecord;
    assert.strictEqual(launchQuietTime(rec(null), "r"), null);
    assert.deepStrictEqual(launchQuietTime(rec({ rule: "21:00-08:00, SUN SAT local", policy: "skip" }), "r"), {
      hours: { start: 21 * 60, end: 8 * 60 },
      days: [0, 6],
      policy: "skip",
    });
    assert.deepStrictEqual(launchQuietTime(rec({ rule: "SUN local", policy: "delay" }), "r"), {
      days: [0],
      policy: "delay",
    });
    for (const bad of [
      { rule: "9pm-8am", policy: "delay" },
      { rule: "25:00-08:00 local", policy: "delay" },
      { rule: "21:00-08:00 local", policy: "later" },
      undefined,
    ])
      assert.throws(
        () => launchQuietTime(rec(bad), "s3://b/launches/spring/L2.json"),
        /^Error: s3:\/\/b\/launches\/spring\/L2.json: the record's quiet time/,
      );
  });
});

describe("what a send a pause held becomes (paused-sends.ts)", () => {
  const launch = { quiet: null, missed: null, record: "s3://b/launches/x/L.json" };
  const policy = (p: string, graceMinutes = 60): HeldPolicy =>
    ({ policy: p, graceMinutes, from: "launch record" }) as HeldPolicy;
  const recipient = (row: PlanRow) => ({ kind: "recipient" as const, row, where: "plan line 1", launch });
  const noQuiet = { quiet: null, windowMinutes: 15 };

  it("a recurring row's held occurrence is never sent again, whatever the policy (as the launcher sends none missed)", () => {
    const row = {
      ...recipientRow("d4", "Asia/Tokyo"),
      schedule_expression: "cron(0 9 * * ? *)",
      start_date: "2026-11-20T10:07:00.000Z",
      end_date: "2027-01-01T00:00:00.000Z",
    };
    for (const p of ["skip", "send-now", "next-day"]) {
      const f = heldFate(
        "2026-12-01T00:00:00Z",
        recipient(row),
        policy(p),
        Date.parse("2026-12-01T00:10:00Z"),
        noQuiet,
      );
      assert.deepStrictEqual([f.held.outcome, f.time], ["not-re-sent", undefined]);
      assert.match(f.held.reason, /a recurring send's missed occurrence is not sent again/);
    }
  });

  it("next-day, then quiet time as redrive applies it: a quiet Wednesday in Tokyo moves it to Thursday 00:00", () => {
    // By hand: held Tuesday 2026-12-01 09:00 JST (00:00Z); redriven at 01:00Z, so Wednesday 09:00 JST (12-02 00:00Z),
    // all quiet (WED), and so Thursday 00:00 JST = Wednesday 15:00Z.
    const quiet: QuietTime = { days: [3], policy: "skip" };
    const f = heldFate(
      "2026-12-01T00:00:00Z",
      recipient(recipientRow("d4", "Asia/Tokyo")),
      policy("next-day"),
      Date.parse("2026-12-01T01:00:00Z"),
      {
        quiet,
        windowMinutes: 15,
      },
    );
    assert.deepStrictEqual(
      [f.held.outcome, f.held.at, f.time],
      ["next-day", "2026-12-02T15:00:00.000Z", { atMs: Date.parse("2026-12-02T15:00:00Z"), quiet: "delayed" }],
    );
    assert.match(
      f.held.reason,
      /^moved to 2026-12-02T00:00:00\.000Z, 09:00 Asia\/Tokyo .*, then after quiet time: 2026-12-02T15:00:00\.000Z$/,
    );
  });

  it("a bulk line's next day is its UTC time (no zone kept); quiet time is not checked for it", () => {
    const row = JSON.parse(JSON.stringify(SPRING_PLAN[0])) as BulkPlanRow;
    const found = { kind: "bulk" as const, row, where: "plan line 1", launch };
    const f = heldFate(T, found, policy("next-day"), Date.parse("2026-12-03T16:00:00Z"), {
      quiet: { days: [0], policy: "delay" },
      windowMinutes: 15,
    });
    assert.deepStrictEqual(
      [f.held.outcome, f.held.lateMinutes, f.time],
      ["next-day", 2 * 1440 + 122, { atMs: Date.parse("2026-12-04T14:00:00Z"), quiet: "not-checked" }],
    );
  });

  it("--missed wins over the record; a record stating none decides nothing", () => {
    const given = { policy: "send-now" as const, graceMinutes: 5 };
    assert.deepStrictEqual(heldPolicy(given, { ...launch, missed: { policy: "skip", graceMinutes: 60 } }), {
      ...given,
      from: "--missed",
    });
    assert.deepStrictEqual(heldPolicy(undefined, { ...launch, missed: { policy: "skip", graceMinutes: 60 } }), {
      policy: "skip",
      graceMinutes: 60,
      from: "launch record",
    });
    assert.match(
      (heldPolicy(undefined, launch) as { reason: string }).reason,
      /^held by a pause, and the launch record s3:\/\/b\/launches\/x\/L\.json states no missed-time policy/,
    );
  });
});
