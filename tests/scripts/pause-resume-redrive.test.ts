/**
 * The whole path of a pause (issue 36: "resume-campaign resumes; the sends whose time passed while paused follow the
 * campaign's missed-time policy"): campaigns launched with each missed-time policy, paused with pause-campaign, their
 * schedules firing into the real sender (the JSONata interpreter, its DynamoDB calls to dynalite) which holds each
 * send in the dead-letter queue as a pointer, resumed with resume-campaign, then redriven with redrive, every CLI
 * over real HTTP: DynamoDB is dynalite, S3 the local S3, SQS and Scheduler one local endpoint. The redriven schedules
 * are read on the wire; their at() instants are worked out by hand below. A text's redriven schedule then fires into
 * the sender once more, to see what becomes of it.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { createHash } from "crypto";
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { startLedger, LocalLedger } from "../helpers/ledger";
import { Answer, Endpoint, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { LocalS3, startLocalS3 } from "../helpers/s3-server";
import { runMain } from "../helpers/cli";
import { StatesError } from "../helpers/asl-interpreter";
import { runJsonataMachine } from "../helpers/jsonata-interpreter";
import { main as pause } from "../../scripts/pause-campaign";
import { main as resume } from "../../scripts/resume-campaign";
import { main as redrive } from "../../scripts/redrive";
import { clock } from "../../scripts/lib/aws/call";
import { stateClock } from "../../scripts/lib/aws/campaign-state";
import { senderDefinition } from "../../infra/state-machines/sender-definition";
import { SenderParameters } from "../../infra/state-machines/sender-states";
import { recipientSenderInput } from "../../infra/core/send/sender-input";
import { smsSenderInput } from "../../infra/core/send/sms-input";
import { PlanRow, SmsPlanRow } from "../../infra/core/plan/plan-row";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pause-path-"));
const DLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq-226c700";
const LEDGER = "sendtime-ledger-dev";
const BUCKET = "sendtime-recipients-dev";
const FROM = "news@mail.example.com";
const CONFIG_SET = "sendtime";
const SMS = {
  originationIdentity: "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-1a2b",
  configurationSetName: "s",
};
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(
  outputs,
  JSON.stringify({
    deadLetterQueueUrl: DLQ,
    schedulerRoleArn: "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b",
    senderStateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev",
    bucketName: BUCKET,
    ledgerTableName: LEDGER,
    fromAddress: FROM,
    configurationSetName: CONFIG_SET,
    region: "us-east-1",
  }),
);
const arn = (group: string, name: string) => `arn:aws:scheduler:us-east-1:123456789012:schedule/${group}/${name}`;

// --- One plan, launched four times: once under each policy ---------------------------------------------------------
// New York is on EST (UTC-5) from 2026-11-01 to 2027-03-14: every instant below is its local time + 5 h.

const row = (id: string, sendAt: string, utc: string): PlanRow => ({
  schedule_name: `${id}-1`,
  send_at: sendAt,
  timezone: "America/New_York",
  email: `${id}@example.com`,
  template: "harvest-1",
  template_data: { name: id, unsubscribe_url: `https://u.example.com/?t=${id}.sig` },
  recipient_id: id,
  step: 1,
  utc,
  variant: null,
  schedule_expression: `at(${sendAt})`,
});
/** f6 at 09:00 on 1 December (14:00Z), g7 at 20:00 (01:00Z on the 2nd). */
const F6 = row("f6", "2026-12-01T09:00:00", "2026-12-01T14:00:00.000Z");
const G7 = row("g7", "2026-12-01T20:00:00", "2026-12-02T01:00:00.000Z");
/** t8, a text at 20:30 (01:30Z on the 2nd), whose legal window (us: until 21:00 local) ends at 02:00Z. */
const T8: SmsPlanRow = {
  ...row("t8", "2026-12-01T20:30:00", "2026-12-02T01:30:00.000Z"),
  email: "",
  template: "harvest-sms",
  template_data: {},
  channel: "sms",
  phone: "+12125550108",
  body: "Harvest sale ends tonight. Reply STOP to opt out.",
  segments: 1,
  until: "2026-12-02T02:00:00.000Z",
};
const PLAN = [F6, G7, T8];
/** The instant Scheduler passes as <aws.scheduler.scheduled-time> for a row (seconds, Z). */
const firedAt = (r: PlanRow) => r.utc.replace(".000Z", "Z");

const CAMPAIGNS = {
  cskip: { policy: "skip", graceMinutes: 60 },
  cnow: { policy: "send-now", graceMinutes: 60 },
  cgrace: { policy: "send-now", graceMinutes: 120 },
  cnext: { policy: "next-day", graceMinutes: 60 },
} as const;
type CampaignId = keyof typeof CAMPAIGNS;

/** The launch record and plan as the launcher writes them (launch-record.ts buildLaunchRecord, summary `missed`). */
function seed(s3: LocalS3, id: CampaignId): void {
  const put = (key: string, body: string) => s3.objects.set(`${BUCKET}/${key}`, Buffer.from(body));
  const plan = PLAN.map((r) => JSON.stringify(r) + "\n").join("");
  put(`plans/${id}/L1.jsonl`, plan);
  put(
    `launches/${id}/L1.json`,
    JSON.stringify({
      campaignId: id,
      planSha256: createHash("sha256").update(plan).digest("hex"),
      firstSend: F6.utc,
      lastSend: T8.utc,
      launch: {
        id: "L1",
        planKey: `plans/${id}/L1.jsonl`,
        planKeys: [`plans/${id}/L1.jsonl`],
        at: "2026-11-30T10:00:00.000Z",
      },
      scheduled: [{ step: 1, variant: null, schedules: 3 }],
      holdoutRecipients: 0,
      quiet: null,
      missed: { ...CAMPAIGNS[id], cutoff: "2026-11-30T10:07:00.000Z", skipped: 0, sentNow: 0, movedToNextDay: 0 },
    }),
  );
}

// --- SQS and Scheduler on one local endpoint --------------------------------------------------------------------------

interface Queued {
  id: string;
  body: string;
  handle: string;
  hidden: boolean;
}
class FakeAws {
  queue: Queued[] = [];
  groups = new Map<string, Map<string, any>>(Object.keys(CAMPAIGNS).map((c) => [`campaign-${c}`, new Map()]));
  creates: any[] = [];
  private n = 0;
  answer = (q: SeenRequest): Answer => {
    const body = q.body ? JSON.parse(q.body) : {};
    switch (q.target) {
      case "AmazonSQS.GetQueueAttributes":
        return {
          json: { Attributes: { QueueArn: "arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq-226c700" } },
        };
      case "AmazonSQS.ReceiveMessage": {
        const out = this.queue.filter((m) => !m.hidden).slice(0, body.MaxNumberOfMessages ?? 1);
        for (const m of out) Object.assign(m, { hidden: true, handle: `h-${m.id}-${++this.n}` });
        const md5 = (t: string) => createHash("md5").update(t, "utf8").digest("hex");
        return {
          json: out.length
            ? {
                Messages: out.map((m) => ({
                  MessageId: m.id,
                  Body: m.body,
                  ReceiptHandle: m.handle,
                  MD5OfBody: md5(m.body),
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
    if (!m) return fail(400, "ValidationException", `unexpected ${q.method} ${q.url} ${q.target}`);
    const name = decodeURIComponent(m[1]);
    const group = this.groups.get(q.method === "GET" ? decodeURIComponent(m[2]) : body.GroupName);
    if (!group) return fail(404, "ResourceNotFoundException", "Schedule group does not exist.");
    if (q.method === "GET")
      return group.has(name) ? { json: group.get(name) } : fail(404, "ResourceNotFoundException", "no schedule");
    if (group.has(name)) return fail(409, "ConflictException", `Schedule ${name} already exists.`);
    const { ClientToken, ...request } = body;
    void ClientToken;
    this.creates.push({ Name: name, ...request });
    group.set(name, { Name: name, ...request });
    return { json: { ScheduleArn: arn(body.GroupName, name) } };
  };
}
const fail = (status: number, type: string, message: string): Answer => ({
  status,
  headers: { "x-amzn-errortype": type, "content-type": "application/json" },
  json: { Message: message, message },
});

// --- The real sender, its DynamoDB calls to dynalite -------------------------------------------------------------------

const PARAMETERS: SenderParameters = {
  partition: "aws",
  deadLetterQueueUrl: DLQ,
  ledger: { tableName: LEDGER },
  sms: SMS,
};
const COMMANDS: Record<string, any> = {
  putItem: PutItemCommand,
  getItem: GetItemCommand,
  updateItem: UpdateItemCommand,
};

/** The sender as a schedule fires it at `at`: dead letters go to the fake queue; SES and texts are counted. */
async function fire(ledger: LocalLedger, aws: FakeAws, input: any, at: string, sent: string[]) {
  await runJsonataMachine(
    senderDefinition(PARAMETERS),
    input,
    {
      call: async (service, action, args) => {
        if (service === "dynamodb")
          try {
            const { $metadata, ...out } = await ledger.client.send(new COMMANDS[action](args));
            void $metadata;
            return out;
          } catch (e) {
            throw new StatesError(`DynamoDB.${(e as Error).name}`, (e as Error).message);
          }
        if (service === "sqs") {
          aws.queue.push({
            id: `d${aws.queue.length + 1}-${Math.random()}`,
            body: args.MessageBody,
            handle: "",
            hidden: false,
          });
          return { MessageId: "d" };
        }
        if (service === "cloudwatch") return {};
        sent.push(`${service}.${action}`);
        if (action === "sendTextMessage") return { MessageId: "t" };
        return { BulkEmailEntryResults: args.BulkEmailEntries.map(() => ({ Status: "SUCCESS", MessageId: "m" })) };
      },
    },
    { startTime: at },
  );
}

/** What the fan-out gives each row's schedule as its input, Scheduler's context filled in as it fires. */
function scheduledInput(campaign: CampaignId, r: PlanRow) {
  const base =
    r.channel === "sms"
      ? smsSenderInput(campaign, r as SmsPlanRow, [r as SmsPlanRow])
      : recipientSenderInput({ fromAddress: FROM, configurationSetName: CONFIG_SET }, campaign, r);
  return { ...base, schedule: arn(`campaign-${campaign}`, r.schedule_name), scheduled_time: firedAt(r) };
}

/** A redriven schedule's Input as Scheduler gives it to the sender when it fires (its context placeholders filled). */
const firedInput = (s: any, at: string) =>
  JSON.parse(
    s.Target.Input.replace("<aws.scheduler.schedule-arn>", arn(s.GroupName, s.Name)).replace(
      "<aws.scheduler.scheduled-time>",
      at,
    ),
  );

// --- The redrive's clock: 21:30:20 EST on 1 December (02:30:20Z on the 2nd) ------------------------------------------
// redriveAt: 2 minutes on, up to the whole minute: 02:33:00Z. How late each held send is then, by hand:
// f6 (14:00Z) 12 h 33 min = 753 min; g7 (01:00Z) 93 min; t8 (01:30Z) 63 min.

const NOW = Date.parse("2026-12-02T02:30:20Z");

/** The reason a held text is not re-sent when its legal window closed before the redrive's time (by hand). */
const closed = (until: string, at: string) =>
  `missed while paused: a text's legal window closed at ${until} (its plan's until), before the redrive's ${at}; launch it again to send it`;

describe("pause → sender holds → resume → redrive, every CLI over HTTP (issue 36)", function () {
  this.timeout(60_000);
  let s3: LocalS3;
  let ledger: LocalLedger;
  let endpoint: Endpoint;
  let aws: FakeAws;
  const real = { now: clock.now, heartbeat: clock.heartbeatMs, state: { ...stateClock } };
  before(() => {
    clock.now = () => NOW;
    clock.heartbeatMs = 100;
    // pause-campaign's wait for sends under way: counted, not slept.
    let skipped = 0;
    stateClock.now = () => Date.now() + skipped;
    stateClock.sleep = async (ms) => void (skipped += ms);
  });
  after(() => {
    clock.now = real.now;
    clock.heartbeatMs = real.heartbeat;
    Object.assign(stateClock, real.state);
  });
  beforeEach(async () => {
    s3 = await startLocalS3();
    ledger = await startLedger([], LEDGER);
    aws = new FakeAws();
    endpoint = await startEndpoint(aws.answer);
    for (const id of Object.keys(CAMPAIGNS) as CampaignId[]) seed(s3, id);
  });
  afterEach(async () => {
    await endpoint.close();
    await s3.close();
    await ledger.close();
  });
  const cli = (main: typeof pause, args: string[]) =>
    withEnv(
      {
        AWS_ENDPOINT_URL_SCHEDULER: endpoint.url,
        AWS_ENDPOINT_URL_SQS: endpoint.url,
        AWS_ENDPOINT_URL_S3: s3.endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: ledger.url,
      },
      () => runMain(main, [...args, "--outputs", outputs]),
    );

  /** Pauses `id`, fires its three schedules into the sender, resumes it and redrives it: the redrive's answer. */
  async function pauseFireResumeRedrive(id: CampaignId) {
    const paused = await cli(pause, ["--campaign", id, "--reason", "bounces"]);
    assert.strictEqual(paused.code, 0, paused.stderr + paused.stdout);
    const sent: string[] = [];
    for (const r of PLAN) await fire(ledger, aws, scheduledInput(id, r), firedAt(r), sent);
    assert.deepStrictEqual(sent, [], "a paused campaign sends nothing");
    // Each pointer as the sender wrote it (ledger.ts DeadLetterPointer), each outcome as the ledger records it.
    assert.deepStrictEqual(
      aws.queue.map((m) => JSON.parse(m.body)),
      PLAN.map((r) => ({
        campaign: id,
        schedule_name: r.schedule_name,
        scheduled_time: firedAt(r),
        recipients: [r.recipient_id],
        outcome: "skipped",
        reason: "paused",
      })),
    );
    const resumed = await cli(resume, ["--campaign", id]);
    assert.strictEqual(resumed.code, 0, resumed.stderr + resumed.stdout);
    assert.match(resumed.stdout, new RegExp(`3 held sends \\(3 recipients\\) wait in the dead-letter queue`));
    assert.strictEqual(aws.queue.length, 3, "resume deletes nothing");
    const state = await ledger.get(`campaign#${id}`);
    assert.strictEqual(state?.state?.S, "live");
    const r = await cli(redrive, ["--campaign", id, "--json"]);
    return { ...r, report: r.code <= 1 && r.stdout ? JSON.parse(r.stdout) : undefined };
  }

  /** A redriven schedule fires at `at`: the ledger's outcome of its recipient, the sends made, dead letters added. */
  async function fireRedriven(id: CampaignId, s: any, at: string) {
    const sent: string[] = [];
    const before = aws.queue.length;
    const input = firedInput(s, at);
    await fire(ledger, aws, input, at, sent);
    const item = await ledger.get(`occ#${arn("campaign-" + id, s.Name)}#${at}`);
    const o = item?.outcomes?.M?.[input.recipients[0]]?.M;
    return [[o?.outcome?.S, o?.reason?.S], sent, aws.queue.length - before];
  }

  const created = () =>
    aws.creates.map((c) => [`${c.GroupName}/${c.Name}`, c.ScheduleExpression, c.ScheduleExpressionTimezone]);
  const notResent = (report: any) =>
    report.nothingToResend.map((m: any) => [m.original, m.recipients.map((x: any) => x.reason).join()]);

  it("skip: no schedule created; all three held sends listed as not sent again and deleted (exit 0)", async () => {
    const r = await pauseFireResumeRedrive("cskip");
    assert.strictEqual(r.code, 0, r.stderr + r.stdout);
    assert.deepStrictEqual(created(), []);
    assert.deepStrictEqual(notResent(r.report), [
      ["f6-1", "missed while paused: missed-time policy skip"],
      ["g7-1", "missed while paused: missed-time policy skip"],
      ["t8-1", "missed while paused: missed-time policy skip"],
    ]);
    assert.strictEqual(aws.queue.length, 0);
  });

  it("send-now with the grace of 60 minutes: every held send is 63 minutes late or more, none sent again", async () => {
    const r = await pauseFireResumeRedrive("cnow");
    assert.strictEqual(r.code, 0, r.stderr + r.stdout);
    assert.deepStrictEqual(created(), []);
    const late = (m: number) =>
      `missed while paused: ${m} minutes late at 2026-12-02T02:33:00.000Z, not less than the grace of 60 minutes: missed-time policy send-now`;
    assert.deepStrictEqual(notResent(r.report), [
      ["f6-1", late(753)],
      ["g7-1", late(93)],
      ["t8-1", late(63)],
    ]);
  });

  it("send-now with a grace of 120 minutes: g7 at 02:33Z as <original>-r1; f6 (753 min late) and the text (its legal window closed) not", async () => {
    const r = await pauseFireResumeRedrive("cgrace");
    assert.strictEqual(r.code, 0, r.stderr + r.stdout);
    // The text is 63 minutes late, within the grace, but its legal window closed at 02:00Z (its plan's until), before
    // 02:33Z: a schedule for it could only be skipped by the sender (legal-hours), so none is made.
    assert.deepStrictEqual(created(), [["campaign-cgrace/g7-1-r1", "at(2026-12-02T02:33:00)", "UTC"]]);
    assert.deepStrictEqual(notResent(r.report), [
      ["f6-1", notResent(r.report)[0][1]],
      ["t8-1", closed(T8.until, "2026-12-02T02:33:00.000Z")],
    ]);
    assert.strictEqual(aws.queue.length, 0);
    // It fires: the mail is sent.
    const [g7] = aws.creates;
    assert.deepStrictEqual(await fireRedriven("cgrace", g7, "2026-12-02T02:33:00Z"), [
      ["sent", ""],
      ["sesv2.sendBulkEmail"],
      0,
    ]);
  });

  it("next-day: each email at its New York time on the first later day past 02:33Z; the text not (its legal window closed)", async () => {
    const r = await pauseFireResumeRedrive("cnext");
    assert.strictEqual(r.code, 0, r.stderr + r.stdout);
    // 09:00 EST on the 2nd = 14:00Z; 20:00 EST on the 2nd = 01:00Z on the 3rd; 20:30 EST = 01:30Z on the 3rd.
    // The text would move to the next evening (01:30Z on the 3rd), past its planned legal window (02:00Z on the 2nd):
    // not re-sent, said, rather than a schedule the sender could only skip.
    assert.deepStrictEqual(created(), [
      ["campaign-cnext/f6-1-r1", "at(2026-12-02T14:00:00)", "UTC"],
      ["campaign-cnext/g7-1-r1", "at(2026-12-03T01:00:00)", "UTC"],
    ]);
    assert.deepStrictEqual(notResent(r.report), [["t8-1", closed(T8.until, "2026-12-03T01:30:00.000Z")]]);
  });
});
