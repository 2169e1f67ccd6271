/**
 * redrive on the wire: a local endpoint that answers like SQS (AWS JSON 1.0) and Scheduler (REST-JSON), with a queue
 * that hides what it hands out and schedules that conflict by name, as AWS does. The dead letters have the shapes
 * AWS documents for Scheduler (body = the target's Input; SCHEDULE_ARN, SCHEDULED_TIME, TARGET_ARN, ERROR_CODE, …
 * attributes) and that infra/rules/gate-definition.ts writes for the send gate (`{input, error}`, no attributes).
 */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { Answer, Endpoint, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { runMain } from "../helpers/cli";
import { main as redrive } from "../../scripts/redrive";
import { clock } from "../../scripts/lib/aws/call";
import { redriveName } from "../../scripts/lib/planning/dead-letters";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-redrive-"));
const DLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq-226c700";
const DLQ_ARN = "arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq-226c700";
const ROLE = "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b";
const GATE = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-gate-dev";
const SES = "arn:aws:scheduler:::aws-sdk:sesv2:sendEmail";
const SENDER = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev";
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(
  outputs,
  JSON.stringify({
    deadLetterQueueUrl: DLQ,
    schedulerRoleArn: ROLE,
    sendGateArn: GATE,
    senderStateMachineArn: SENDER,
    defaultWindowMinutes: 15,
    region: "us-east-1",
  }),
);
const arn = (group: string, name: string) => `arn:aws:scheduler:us-east-1:123456789012:schedule/${group}/${name}`;
const email = (to: string) => ({
  FromEmailAddress: "news@mail.example.com",
  Destination: { ToAddresses: [to] },
  Content: { Template: { TemplateName: "spring", TemplateData: "{}" } },
  ConfigurationSetName: "sendtime",
  EmailTags: [{ Name: "campaign", Value: "spring" }],
});

interface Message {
  MessageId: string;
  Body: string;
  MessageAttributes?: Record<string, { DataType: string; StringValue: string }>;
}
const attrs = (a: Record<string, string>) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, { DataType: "String", StringValue: v }]));

/** A send Scheduler gave up on: the SendEmail input as body, the documented attributes. */
function schedulerDeadLetter(id: string, group: string, name: string, to = `${name}@example.com`): Message {
  return {
    MessageId: id,
    Body: JSON.stringify(email(to)),
    MessageAttributes: attrs({
      ERROR_CODE: "SESV2.MessageRejected",
      ERROR_MESSAGE: "Email address is not verified.",
      EXECUTION_ID: "ad06616e51cdf74a",
      IS_PAYLOAD_TRUNCATED: "false",
      RETRY_ATTEMPTS: "0",
      SCHEDULED_TIME: "2026-12-01T14:00:00Z",
      SCHEDULE_ARN: arn(group, name),
      TARGET_ARN: SES,
    }),
  };
}

/** A capped send the gate dead-lettered: `{input, error}` (gate-definition.ts DeadLetter state), no attributes. */
function gateDeadLetter(id: string, name: string): Message {
  return {
    MessageId: id,
    Body: JSON.stringify({
      input: {
        email: email("gated@example.com"),
        campaign: "spring",
        schedule: arn("campaign-spring", name),
        scheduled_time: "2026-12-01T14:03:12Z",
      },
      error: { Error: "SesV2.MessageRejectedException", Cause: "Email address is not verified." },
    }),
  };
}

/** A bulk entry as SendBulkEmail takes it (bulk-request.ts bulkEmailEntry), written out by hand. */
const bulkEntry = (to: string, name: string) => ({
  Destination: { ToAddresses: [to] },
  ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: JSON.stringify({ name }) } },
  ReplacementHeaders: [
    { Name: "List-Unsubscribe", Value: `<https://u.example.com/?t=${name}.sig>` },
    { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" },
  ],
});
/** The sender's input (sender-definition.ts) as one invocation of bulk schedule `name` received it. */
const senderInput = (name: string, entries: [string, string][]) => ({
  bulk: {
    FromEmailAddress: "news@mail.example.com",
    ConfigurationSetName: "sendtime",
    DefaultContent: { Template: { TemplateName: "spring", TemplateData: "{}" } },
    DefaultEmailTags: [
      { Name: "campaign", Value: "spring" },
      { Name: "step", Value: "1" },
    ],
    BulkEmailEntries: entries.map(([id, to]) => bulkEntry(to, id)),
  },
  recipients: entries.map(([id]) => id),
  campaign: "spring",
  schedule: arn("campaign-spring", name),
  scheduled_time: "2026-12-01T14:04:31Z",
});
const BULK = "bulk.1.20261201T1400Z.0";

/** One entry the bulk sender dead-lettered (sender-definition.ts DeadLetterEntry): its own input, no attributes. */
function senderDeadLetter(id: string, recipient: string, delivery: "not-sent" | "unknown" = "not-sent"): Message {
  return {
    MessageId: id,
    Body: JSON.stringify({
      input: senderInput(BULK, [[recipient, `${recipient}@example.com`]]),
      error: { Error: "MESSAGE_REJECTED", Cause: "Email address is not verified." },
      delivery,
    }),
  };
}

/** SQS and Scheduler in one: a queue that hides what it hands out, and groups of schedules. */
class FakeAws {
  queue: (Message & { handle: string; hidden: boolean })[] = [];
  groups = new Map<string, Map<string, any>>([["campaign-spring", new Map()]]);
  receives = 0;
  handles = 0;
  /** Per-test overrides: return an answer to replace the normal one. */
  override: (q: SeenRequest) => Answer | undefined = () => undefined;

  constructor(messages: Message[]) {
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
}

/** Scheduler's REST CreateSchedule: POST /schedules/{Name} (UpdateSchedule is the PUT). */
const isCreateSchedule = (q: SeenRequest) => !q.target && q.method === "POST" && q.url.startsWith("/schedules/");
const md5 = (text: string) => createHash("md5").update(text, "utf8").digest("hex");

const error = (status: number, type: string, message: string): Answer => ({
  status,
  headers: { "x-amzn-errortype": type, "content-type": "application/json" },
  json: { Message: message, message },
});

describe("redrive against a local SQS and Scheduler endpoint", function () {
  this.timeout(30_000);
  let endpoint: Endpoint | undefined;
  const realHeartbeat = clock.heartbeatMs;
  before(() => (clock.heartbeatMs = 100));
  after(() => (clock.heartbeatMs = realHeartbeat));
  afterEach(async () => endpoint?.close());
  const env = (url: string) => ({ AWS_ENDPOINT_URL_SCHEDULER: url, AWS_ENDPOINT_URL_SQS: url });
  const run = async (aws: FakeAws, args: string[], extraEnv: Record<string, string> = {}) => {
    endpoint = await startEndpoint(aws.answer);
    return withEnv({ ...env(endpoint.url), ...extraEnv }, () => runMain(redrive, [...args, "--outputs", outputs]));
  };
  const writes = () =>
    endpoint!.requests.filter((q) => (!q.target && q.method !== "GET") || q.target === "AmazonSQS.DeleteMessage");

  it("re-sends a Scheduler dead letter and a gate's in campaign-<id>, 2–3 minutes on in UTC, and deletes both messages", async () => {
    const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", "a1-1"), gateDeadLetter("m2", "b2-1")]);
    const before = Date.now();
    const r = await run(aws, ["--campaign", "spring", "--json"]);
    const after = Date.now();
    assert.strictEqual(r.code, 0, r.stdout + r.stderr);
    assert.deepStrictEqual(aws.queue, [], "both messages deleted");
    const [ses, gate] = aws.schedules();
    // The time: now + 2 minutes, up to the whole minute, by hand from the clock around the run.
    const at = Date.parse(ses.ScheduleExpression.slice(3, -1) + "Z");
    assert.ok(at >= before + 120_000 && at < after + 180_000 && at % 60_000 === 0, ses.ScheduleExpression);
    assert.deepStrictEqual(ses, {
      Name: "a1-1-r1",
      GroupName: "campaign-spring",
      ScheduleExpression: ses.ScheduleExpression,
      ScheduleExpressionTimezone: "UTC",
      Description: `sendtime redrive of ${arn("campaign-spring", "a1-1")} @ 2026-12-01T14:00:00Z`,
      FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: 15 },
      ActionAfterCompletion: "NONE",
      Target: {
        Arn: SES,
        RoleArn: ROLE,
        Input: JSON.stringify(email("a1-1@example.com")),
        DeadLetterConfig: { Arn: DLQ_ARN },
      },
    });
    assert.strictEqual(gate.Name, "b2-1-r1");
    assert.strictEqual(gate.Target.Arn, GATE);
    // A new occurrence for the gate: Scheduler fills in the redriven schedule's own ARN and time.
    assert.deepStrictEqual(JSON.parse(gate.Target.Input), {
      email: email("gated@example.com"),
      campaign: "spring",
      schedule: "<aws.scheduler.schedule-arn>",
      scheduled_time: "<aws.scheduler.scheduled-time>",
    });
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
    ]);
    assert.deepStrictEqual(
      report.redriven.map((s: any) => [s.messageId, s.campaign, s.original, s.schedule, s.group, s.via, s.error]),
      [
        [
          "m1",
          "spring",
          "a1-1",
          "a1-1-r1",
          "campaign-spring",
          "ses",
          "SESV2.MessageRejected: Email address is not verified.",
        ],
        [
          "m2",
          "spring",
          "b2-1",
          "b2-1-r1",
          "campaign-spring",
          "gate",
          "SesV2.MessageRejectedException: Email address is not verified.",
        ],
      ],
    );
    assert.strictEqual(report.redriven[0].at, new Date(at).toISOString());
    assert.deepStrictEqual([report.received, report.left, report.problems], [2, [], []]);
  });

  it("a message is deleted only after its schedule exists: a failing CreateSchedule leaves it (exit 1), visible again", async () => {
    const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", "a1-1")]);
    aws.override = (q) => (isCreateSchedule(q) ? error(400, "ValidationException", "Invalid RoleArn") : undefined);
    const r = await run(aws, ["--campaign", "spring"]);
    assert.strictEqual(r.code, 1, r.stdout + r.stderr);
    assert.strictEqual(endpoint!.requests.filter((q) => q.target === "AmazonSQS.DeleteMessage").length, 0);
    assert.deepStrictEqual(
      aws.queue.map((m) => [m.MessageId, m.hidden]),
      [["m1", false]],
    );
    assert.match(
      r.stdout,
      /LEFT in the queue: 1\n {4}- m1 \(spring\): CreateSchedule campaign-spring\/a1-1-r1 \(redrive of a1-1\): ValidationException: Invalid RoleArn \(HTTP 400\)\n/,
    );
  });

  it("a second run is idempotent: the schedule the first created (its DeleteMessage failed) is found, nothing sent twice", async () => {
    const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", "a1-1")]);
    aws.override = (q) =>
      q.target === "AmazonSQS.DeleteMessage" ? error(500, "InternalError", "try later") : undefined;
    const first = await run(aws, ["--campaign", "spring"], { AWS_MAX_ATTEMPTS: "1" });
    assert.strictEqual(first.code, 1, "the message is still there");
    await endpoint!.close();
    aws.override = () => undefined;
    const second = await run(aws, ["--campaign", "spring", "--json"]);
    assert.strictEqual(second.code, 0, second.stdout);
    const report = JSON.parse(second.stdout);
    assert.deepStrictEqual(report.redriven, []);
    assert.deepStrictEqual(
      report.alreadyRedriven.map((s: any) => [s.messageId, s.schedule]),
      [["m1", "a1-1-r1"]],
    );
    assert.deepStrictEqual(
      aws.schedules().map((s) => s.Name),
      ["a1-1-r1"],
    );
    assert.deepStrictEqual(aws.queue, []);
  });

  it("a redrive of a redrive counts on past the names other sends hold (a1-1-r1 failed: a1-1-r2)", async () => {
    const aws = new FakeAws([schedulerDeadLetter("m9", "campaign-spring", "a1-1-r1")]);
    aws.groups
      .get("campaign-spring")!
      .set("a1-1-r1", { Name: "a1-1-r1", Description: "sendtime redrive of something else" });
    const r = await run(aws, ["--all", "--json"]);
    assert.strictEqual(r.code, 0, r.stdout);
    assert.deepStrictEqual(
      aws.schedules().map((s) => s.Name),
      ["a1-1-r1", "a1-1-r2"],
    );
  });

  it("pages ReceiveMessage until the queue answers empty (25 messages: 3 pages and an empty one)", async () => {
    const aws = new FakeAws(
      Array.from({ length: 25 }, (_, i) => schedulerDeadLetter(`m${i}`, "campaign-spring", `r${i}-1`)),
    );
    const r = await run(aws, ["--campaign", "spring", "--json"]);
    assert.strictEqual(r.code, 0, r.stdout);
    assert.strictEqual(aws.receives, 4);
    assert.strictEqual(JSON.parse(r.stdout).redriven.length, 25);
    assert.strictEqual(aws.schedules().length, 25);
    assert.deepStrictEqual(aws.queue, []);
  });

  it("--dry-run creates and deletes nothing, says what it would do, and leaves every message visible", async () => {
    const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", "a1-1"), gateDeadLetter("m2", "b2-1")]);
    const r = await run(aws, ["--campaign", "spring", "--dry-run", "--json"]);
    assert.strictEqual(r.code, 0, r.stdout);
    assert.deepStrictEqual(writes(), []);
    assert.deepStrictEqual(aws.schedules(), []);
    assert.deepStrictEqual(
      aws.queue.map((m) => [m.MessageId, m.hidden]),
      [
        ["m1", false],
        ["m2", false],
      ],
    );
    const report = JSON.parse(r.stdout);
    assert.strictEqual(report.dryRun, true);
    assert.deepStrictEqual(
      report.redriven.map((s: any) => s.schedule),
      ["a1-1-r1", "b2-1-r1"],
    );
  });

  it("--campaign leaves other campaigns' messages as they were; what it cannot read is left and named (exit 1)", async () => {
    const aws = new FakeAws([
      schedulerDeadLetter("m1", "campaign-autumn", "z1-1"),
      { MessageId: "m2", Body: "not json" },
      {
        ...schedulerDeadLetter("m3", "campaign-spring", "a3-1"),
        MessageAttributes: {
          ...schedulerDeadLetter("m3", "campaign-spring", "a3-1").MessageAttributes,
          IS_PAYLOAD_TRUNCATED: { DataType: "String", StringValue: "true" },
        },
      },
    ]);
    aws.groups.set("campaign-autumn", new Map());
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
    assert.deepStrictEqual(
      aws.queue.map((m) => [m.MessageId, m.hidden]),
      [
        ["m1", false],
        ["m2", false],
        ["m3", false],
      ],
    );
  });

  it("a group that is gone (cancelled) is not brought back: the message is left, exit 1", async () => {
    const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-gone", "a1-1")]);
    const r = await run(aws, ["--all"]);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stdout,
      /m1 \(gone\): CreateSchedule campaign-gone\/a1-1-r1: the group campaign-gone does not exist/,
    );
    assert.strictEqual(aws.queue.length, 1);
  });

  it("a throttling Scheduler is bounded by --timeout-seconds: exit 1, the message left and visible again", async () => {
    const aws = new FakeAws([schedulerDeadLetter("m1", "campaign-spring", "a1-1")]);
    aws.override = (q) => (isCreateSchedule(q) ? error(400, "ThrottlingException", "Rate exceeded") : undefined);
    const started = Date.now();
    const r = await run(aws, ["--campaign", "spring", "--timeout-seconds", "1"]);
    assert.ok(Date.now() - started < 6_000, `took ${Date.now() - started} ms`);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stdout,
      /m1 \(spring\): CreateSchedule campaign-spring\/a1-1-r1 \(redrive of a1-1\): no result within the command's time limit of 1 s/,
    );
    assert.deepStrictEqual(
      aws.queue.map((m) => [m.MessageId, m.hidden]),
      [["m1", false]],
    );
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

  it("needs exactly one of --campaign and --all (exit 2)", async () => {
    const r = await runMain(redrive, ["--outputs", outputs]);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /give --campaign ID .* or --all/);
  });
});

describe("redrive of bulk sends against a local SQS and Scheduler endpoint", function () {
  this.timeout(30_000);
  let endpoint: Endpoint | undefined;
  afterEach(async () => endpoint?.close());
  const run = async (aws: FakeAws, args: string[], extraEnv: Record<string, string> = {}) => {
    endpoint = await startEndpoint(aws.answer);
    return withEnv({ AWS_ENDPOINT_URL_SCHEDULER: endpoint.url, AWS_ENDPOINT_URL_SQS: endpoint.url, ...extraEnv }, () =>
      runMain(redrive, [...args, "--outputs", outputs]),
    );
  };
  const placeholders = { schedule: "<aws.scheduler.schedule-arn>", scheduled_time: "<aws.scheduler.scheduled-time>" };

  it("re-sends each entry the sender dead-lettered as a one-entry bulk schedule named after its recipient-step", async () => {
    const aws = new FakeAws([senderDeadLetter("m1", "a7"), senderDeadLetter("m2", "b8")]);
    const r = await run(aws, ["--campaign", "spring", "--json"]);
    assert.strictEqual(r.code, 0, r.stdout + r.stderr);
    assert.deepStrictEqual(aws.queue, [], "both messages deleted");
    const [a, b] = aws.schedules();
    assert.deepStrictEqual([a.Name, b.Name], ["a7-1-r1", "b8-1-r1"]);
    assert.strictEqual(a.Target.Arn, SENDER);
    assert.strictEqual(a.ActionAfterCompletion, "NONE");
    assert.strictEqual(
      a.Description,
      `sendtime redrive of ${arn("campaign-spring", BULK)} @ 2026-12-01T14:04:31Z entry a7-1`,
    );
    // The entry byte for byte, in a new occurrence: Scheduler fills in the redriven schedule's own ARN and time.
    assert.strictEqual(
      a.Target.Input,
      JSON.stringify({ ...senderInput(BULK, [["a7", "a7@example.com"]]), ...placeholders }),
    );
    const report = JSON.parse(r.stdout);
    assert.deepStrictEqual(
      report.redriven.map((s: any) => [s.messageId, s.original, s.schedule, s.via, s.error]),
      [
        ["m1", BULK, "a7-1-r1", "bulk", "MESSAGE_REJECTED: Email address is not verified."],
        ["m2", BULK, "b8-1-r1", "bulk", "MESSAGE_REJECTED: Email address is not verified."],
      ],
    );
  });

  it("a second run is idempotent: the entry's schedule (its DeleteMessage failed) is found by name and Description", async () => {
    const aws = new FakeAws([senderDeadLetter("m1", "a7")]);
    aws.override = (q) =>
      q.target === "AmazonSQS.DeleteMessage" ? error(500, "InternalError", "try later") : undefined;
    const first = await run(aws, ["--campaign", "spring"], { AWS_MAX_ATTEMPTS: "1" });
    assert.strictEqual(first.code, 1);
    await endpoint!.close();
    aws.override = () => undefined;
    const second = await run(aws, ["--campaign", "spring", "--json"]);
    assert.strictEqual(second.code, 0, second.stdout);
    const report = JSON.parse(second.stdout);
    assert.deepStrictEqual(report.redriven, []);
    assert.deepStrictEqual(
      report.alreadyRedriven.map((s: any) => s.schedule),
      ["a7-1-r1"],
    );
    assert.deepStrictEqual(
      aws.schedules().map((s) => s.Name),
      ["a7-1-r1"],
    );
    assert.deepStrictEqual(aws.queue, []);
  });

  it("a redriven entry that fails again counts on from its own name (a7-1-r1 → a7-1-r2)", async () => {
    const m = senderDeadLetter("m1", "a7");
    const body = JSON.parse(m.Body);
    body.input.schedule = arn("campaign-spring", "a7-1-r1");
    const aws = new FakeAws([{ MessageId: "m1", Body: JSON.stringify(body) }]);
    // The failed redrive is still there (redriven schedules stay after firing), with another send's Description.
    aws.groups
      .get("campaign-spring")!
      .set("a7-1-r1", { Name: "a7-1-r1", Description: "sendtime redrive of the first failure" });
    const r = await run(aws, ["--all"]);
    assert.strictEqual(r.code, 0, r.stdout);
    assert.deepStrictEqual(
      aws.schedules().map((s) => s.Name),
      ["a7-1-r1", "a7-1-r2"],
    );
  });

  it("an entry SES may have sent (delivery unknown) is left and named (exit 1) unless --resend-unknown", async () => {
    const aws = new FakeAws([senderDeadLetter("m1", "a7", "unknown")]);
    const r = await run(aws, ["--campaign", "spring"]);
    assert.strictEqual(r.code, 1, r.stdout);
    assert.match(r.stdout, /m1 \(spring\): .*entry a7-1: SES may have sent it .*--resend-unknown/);
    assert.deepStrictEqual(aws.schedules(), []);
    assert.deepStrictEqual(
      aws.queue.map((q) => [q.MessageId, q.hidden]),
      [["m1", false]],
    );
    await endpoint!.close();
    const again = await run(aws, ["--campaign", "spring", "--resend-unknown"]);
    assert.strictEqual(again.code, 0, again.stdout);
    assert.deepStrictEqual(
      aws.schedules().map((s) => s.Name),
      ["a7-1-r1"],
    );
  });

  it("a bulk schedule whose sender Scheduler could not start is redriven whole, as <original>-r1 with every entry", async () => {
    const entries: [string, string][] = [
      ["a7", "a7@example.com"],
      ["b8", "b8@example.com"],
      ["c9", "c9@example.com"],
    ];
    const m = schedulerDeadLetter("m1", "campaign-spring", BULK);
    m.Body = JSON.stringify(senderInput(BULK, entries));
    m.MessageAttributes!.TARGET_ARN.StringValue = SENDER;
    m.MessageAttributes!.ERROR_CODE.StringValue = "StepFunctions.ThrottlingException";
    const aws = new FakeAws([m]);
    const r = await run(aws, ["--campaign", "spring"]);
    assert.strictEqual(r.code, 0, r.stdout);
    const [s] = aws.schedules();
    assert.strictEqual(s.Name, `${BULK}-r1`);
    assert.strictEqual(s.Target.Arn, SENDER);
    assert.strictEqual(s.Target.Input, JSON.stringify({ ...senderInput(BULK, entries), ...placeholders }));
  });

  it("a sender's dead letter whose ids do not match its entries is left and named, not sent", async () => {
    const body = JSON.parse(senderDeadLetter("m1", "a7").Body);
    body.input.recipients = ["a7", "b8"];
    const aws = new FakeAws([{ MessageId: "m1", Body: JSON.stringify(body) }]);
    const r = await run(aws, ["--all"]);
    assert.strictEqual(r.code, 1);
    assert.match(r.stdout, /the bulk sender's dead letter: 2 recipient ids for 1 entries/);
    assert.deepStrictEqual(aws.schedules(), []);
  });
});

describe("redrive names", () => {
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
});
