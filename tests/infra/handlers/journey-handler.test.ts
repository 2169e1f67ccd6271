/**
 * The journey enrolment handler as deployed: bundled by the stack's own esbuild step into one file, required from
 * disk, its (bundled) Scheduler client mocked with aws-sdk-client-mock. Expected instants are worked out by hand
 * from the zones' offsets (Asia/Kathmandu UTC+5:45; America/New_York EST −5, EDT −4 from 2026-03-08 02:00 local;
 * America/Sao_Paulo −3 all year).
 */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { mockClient } from "aws-sdk-client-mock";
import { bundleJourneyHandler } from "../../../infra/handler-bundle";
import type { Journey } from "../../../infra/core/journeys/journeys-definition";
import { startLedger, TEST_CREDENTIALS, TestLedger } from "../../helpers/enrolment-ledger";

const ONBOARDING: Journey = {
  name: "onboarding",
  trigger: { source: "com.example.app", detailType: "UserSignedUp" },
  exit: { source: "com.example.app", detailType: "UserUpgraded" },
  steps: [
    { after: "+0h", template: "onboarding-welcome" },
    { after: "+3d", at: "09:00", template: "onboarding-tips" },
    { after: "+7d", at: "09:00", template: "onboarding-offer" },
  ],
};
const CLOCK: Journey = {
  name: "clock",
  trigger: { source: "com.example.app", detailType: "CartAbandoned" },
  steps: [
    { after: "+0d", at: "02:30", template: "same-day" },
    { after: "+2h", template: "reminder" },
    { after: "+1d", template: "next-day" },
  ],
};
const QUIET: Journey = {
  name: "quiet",
  trigger: { source: "com.example.app", detailType: "TrialStarted" },
  steps: [
    { after: "+0h", template: "welcome" },
    { after: "+4d", at: "09:00", template: "weekend" },
    { after: "+1d", at: "07:00", template: "early" },
  ],
  quietHours: "21:00-08:00",
  quietDays: ["SAT", "SUN"],
};
/** Issue 22's journey: a welcome, a 5-hour nudge and a 07:30 note, quiet at night. */
const NIGHT: Journey = {
  name: "night",
  trigger: { source: "com.example.app", detailType: "NightSignup" },
  steps: [
    { after: "+0h", template: "welcome" },
    { after: "+5h", template: "nudge" },
    { after: "+0d", at: "07:30", template: "morning" },
  ],
  quietHours: "21:00-08:00",
};
const ENROLMENT = {
  target: {
    partition: "aws",
    targetRoleArn: "arn:aws:iam::123456789012:role/scheduler-target-role",
    deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq",
    fromAddress: "news@mail.example.com",
    configurationSetName: "sendtime-dev",
    listManagement: { contactListName: "sendtime-dev", topicName: "campaigns" },
    maxEventAgeSeconds: 7200,
    maxRetryAttempts: 5,
    senderArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev",
  },
  windowMinutes: 15,
};

const awsError = (name: string) => Object.assign(new Error(`${name} from the fake`), { name });

/** A fake Scheduler behind the mock: keeps schedules, answers ConflictException and ResourceNotFoundException. */
class FakeScheduler {
  schedules = new Map<string, any>();
  creates: any[] = [];
  deletes: any[] = [];
  throttle = 0;
  send(command: any) {
    const input = command.input;
    const key = `${input.GroupName}/${input.Name}`;
    if ("ScheduleExpression" in input) {
      assert.match(command.constructor.name, /^CreateScheduleCommand/);
      this.creates.push(input);
      if (this.throttle-- > 0) throw awsError("ThrottlingException");
      if (this.schedules.has(key)) throw awsError("ConflictException");
      this.schedules.set(key, input);
      return { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${key}` };
    }
    assert.match(command.constructor.name, /^DeleteScheduleCommand/);
    this.deletes.push(input);
    if (!this.schedules.delete(key)) throw awsError("ResourceNotFoundException");
    return {};
  }
}

const event = (detailType: string, time: string, recipient: Record<string, unknown>) => ({
  version: "0",
  id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
  "detail-type": detailType,
  source: "com.example.app",
  account: "123456789012",
  time,
  region: "us-east-1",
  resources: [],
  detail: { recipient },
});

describe("journey enrolment handler (the esbuild bundle the stack deploys)", function () {
  this.timeout(60_000);
  let handler: (input: any) => Promise<any>;
  let bundle: any;
  let fake: FakeScheduler;
  let logs: string[];
  let now: number;
  const realNow = Date.now;
  const realLog = console.log;
  const realWarn = console.warn;
  let mock: ReturnType<typeof mockClient>;
  let ledger: TestLedger;
  const savedEnv = { ...process.env };

  before(async () => {
    ledger = await startLedger("sendtime-ledger-test");
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: ledger.url,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
      SENDTIME_LEDGER_TABLE: ledger.tableName,
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-handler-"));
    const file = path.join(dir, "index.js");
    fs.writeFileSync(file, bundleJourneyHandler().code);
    process.env.SENDTIME_JOURNEYS = JSON.stringify([ONBOARDING, CLOCK, QUIET, NIGHT]);
    process.env.SENDTIME_ENROLMENT = JSON.stringify(ENROLMENT);
    process.env.AWS_REGION = "us-east-1";
    bundle = require(file);
    handler = bundle.handler;
    mock = mockClient(bundle.SchedulerClient);
  });
  beforeEach(async () => {
    await ledger.clear();
    fake = new FakeScheduler();
    mock.reset();
    // aws-sdk-client-mock passes the input only; route on the command itself through sinon's call list.
    (mock as any).send.callsFake((command: any) => Promise.resolve().then(() => fake.send(command)));
    logs = [];
    console.log = console.warn = (line: string) => logs.push(String(line));
    Date.now = () => now;
  });
  afterEach(() => {
    Date.now = realNow;
    console.log = realLog;
    console.warn = realWarn;
  });
  after(async () => {
    mock.restore();
    await ledger.close();
    process.env = savedEnv;
  });

  const trigger = (journey: string, e: object) => handler({ journey, kind: "trigger", event: e });
  const when = (r: any) => [r.Name, r.ScheduleExpression, r.ScheduleExpressionTimezone];

  it("a signup in Kathmandu at 23:50 local: welcome at once, tips and offer at 09:00 their time 3 and 7 days later", async () => {
    // 2026-03-10 23:50 +05:45 = 18:05 UTC. The welcome (18:06) is due within the minute a schedule needs: it goes
    // at the first minute it can be created, 18:05:02 + 60 s rounded up = 18:07 UTC, written in UTC.
    now = Date.parse("2026-03-10T18:05:02Z");
    const result = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "u-42",
        email: "ann@example.com",
        timezone: "Asia/Kathmandu",
        first_name: "Ann",
      }),
    );
    assert.deepStrictEqual(fake.creates.map(when), [
      ["u-42-1", "at(2026-03-10T18:07:00)", "UTC"],
      ["u-42-2", "at(2026-03-13T09:00:00)", "Asia/Kathmandu"],
      ["u-42-3", "at(2026-03-17T09:00:00)", "Asia/Kathmandu"],
    ]);
    assert.deepStrictEqual(
      result.steps.map((s: any) => [s.utc, s.status]),
      [
        ["2026-03-10T18:07:00.000Z", "created"],
        ["2026-03-13T03:15:00.000Z", "created"],
        ["2026-03-17T03:15:00.000Z", "created"],
      ],
    );
    const first = fake.creates[0];
    assert.strictEqual(first.GroupName, "campaign-onboarding");
    assert.deepStrictEqual(first.FlexibleTimeWindow, { Mode: "FLEXIBLE", MaximumWindowInMinutes: 15 });
    assert.strictEqual(first.ActionAfterCompletion, "DELETE");
    assert.strictEqual(first.Target.RoleArn, ENROLMENT.target.targetRoleArn);
    assert.deepStrictEqual(first.Target.DeadLetterConfig, { Arn: ENROLMENT.target.deadLetterQueueArn });
    // The one sender's input of one entry: it sends the welcome with SendEmail and SES's list management.
    assert.strictEqual(first.Target.Arn, ENROLMENT.target.senderArn);
    const input = JSON.parse(first.Target.Input);
    const [entry] = input.bulk.BulkEmailEntries;
    assert.deepStrictEqual(entry.Destination, { ToAddresses: ["ann@example.com"] });
    assert.deepStrictEqual(JSON.parse(entry.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData), {
      first_name: "Ann",
      step: "1",
    });
    assert.strictEqual(input.bulk.DefaultContent.Template.TemplateName, "onboarding-welcome");
    assert.deepStrictEqual(input.bulk.DefaultEmailTags, [
      { Name: "campaign", Value: "onboarding" },
      { Name: "step", Value: "1" },
    ]);
    assert.deepStrictEqual(input.recipients, ["u-42"]);
    assert.deepStrictEqual(input.list_management, { ContactListName: "sendtime-dev", TopicName: "campaigns" });
    assert.strictEqual(result.zoneStatus, "ok");
    assert.strictEqual(logs.length, 1);
    assert.ok(!logs[0].includes("@"), logs[0]);
  });

  it("seconds round up: a trigger at 23:59:30 in Kathmandu sends the welcome at 00:01 the next day", async () => {
    // 2026-03-10 23:59:30 +05:45 = 18:14:30 UTC; + 1 minute = 18:15:30 → 18:16 UTC = 00:01 local on the 11th.
    now = Date.parse("2026-03-10T18:14:31Z");
    await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:14:30Z", { id: "u-7", email: "b@example.com", timezone: "Asia/Kathmandu" }),
    );
    assert.deepStrictEqual(when(fake.creates[0]), ["u-7-1", "at(2026-03-11T00:01:00)", "Asia/Kathmandu"]);
    // Tips: the trigger's local date (the 10th) + 3 days, not the UTC date's.
    assert.deepStrictEqual(when(fake.creates[1]), ["u-7-2", "at(2026-03-13T09:00:00)", "Asia/Kathmandu"]);
  });

  it("a trigger on a spring-forward day: 02:30 does not exist (moved to 03:30 EDT, written in UTC); +2h is two real hours", async () => {
    // New York, 2026-03-08 01:30 EST = 06:30 UTC; clocks jump 02:00 → 03:00.
    now = Date.parse("2026-03-08T06:30:01Z");
    const result = await trigger(
      "clock",
      event("CartAbandoned", "2026-03-08T06:30:00Z", {
        id: "c1",
        email: "c@example.com",
        timezone: "America/New_York",
      }),
    );
    assert.deepStrictEqual(fake.creates.map(when), [
      ["c1-1", "at(2026-03-08T07:30:00)", "UTC"], // 03:30 EDT
      ["c1-2", "at(2026-03-08T04:30:00)", "America/New_York"], // 08:30 UTC
      ["c1-3", "at(2026-03-09T01:30:00)", "America/New_York"], // 05:30 UTC, EDT
    ]);
    assert.deepStrictEqual(
      result.steps.map((s: any) => s.utc),
      ["2026-03-08T07:30:00.000Z", "2026-03-08T08:30:00.000Z", "2026-03-09T05:30:00.000Z"],
    );
  });

  it("an `at` time already passed today moves to the next day; a step that would then come before it is dropped", async () => {
    // São Paulo 2026-06-15 10:00 −03:00 = 13:00 UTC: 02:30 today has passed → 02:30 on the 16th = 05:30 UTC.
    // Step 2 (+2h: 12:00 on the 15th) would reach the subscriber before step 1: in order, it is not created.
    now = Date.parse("2026-06-15T13:00:00Z");
    const result = await trigger(
      "clock",
      event("CartAbandoned", "2026-06-15T13:00:00Z", {
        id: "s1",
        email: "s@example.com",
        timezone: "America/Sao_Paulo",
      }),
    );
    assert.deepStrictEqual(fake.creates.map(when), [
      ["s1-1", "at(2026-06-16T02:30:00)", "America/Sao_Paulo"],
      ["s1-3", "at(2026-06-16T10:00:00)", "America/Sao_Paulo"],
    ]);
    assert.deepStrictEqual(
      result.steps.map((s: any) => [s.status, s.note]),
      [
        ["created", undefined],
        ["dropped", "before step 1 (2026-06-16T05:30:00.000Z): steps go out in order; not created"],
        ["created", undefined],
      ],
    );
  });

  it("quiet hours and days delay a step to their end in the subscriber's zone (the launcher's quiet time, delay)", async () => {
    // Kathmandu, Tuesday 2026-03-10 23:50 (18:05 UTC); quiet 21:00–08:00 and on Saturdays and Sundays.
    now = Date.parse("2026-03-10T18:05:02Z");
    await trigger(
      "quiet",
      event("TrialStarted", "2026-03-10T18:05:00Z", { id: "q1", email: "q@example.com", timezone: "Asia/Kathmandu" }),
    );
    // Step 3 (07:00 Wednesday is quiet → 08:00) would go with step 1: never two at once, it is dropped.
    assert.deepStrictEqual(fake.creates.map(when), [
      ["q1-1", "at(2026-03-11T08:00:00)", "Asia/Kathmandu"], // 23:51 is quiet → 08:00 Wednesday (02:15 UTC)
      ["q1-2", "at(2026-03-16T08:00:00)", "Asia/Kathmandu"], // Saturday 09:00 → Monday, after the night's quiet hours
    ]);
  });

  it("issue 22 (1): +0h, +5h and +0d at 07:30 for a 23:10 signup with quiet nights: one send at 08:00, the others dropped", async () => {
    // London, Tuesday 2026-03-10 23:10 GMT (UTC+0). Welcome 23:11 → quiet → 08:00 on the 11th; +5h 04:10 → 08:00;
    // 07:30 on the 10th has passed → 07:30 on the 11th → quiet → 08:00. Only the welcome is created.
    now = Date.parse("2026-03-10T23:10:01Z");
    const result = await trigger(
      "night",
      event("NightSignup", "2026-03-10T23:10:00Z", { id: "n1", email: "n@example.com", timezone: "Europe/London" }),
    );
    assert.deepStrictEqual(fake.creates.map(when), [["n1-1", "at(2026-03-11T08:00:00)", "Europe/London"]]);
    assert.deepStrictEqual(
      result.steps.map((s: any) => [s.status, s.note]),
      [
        ["created", undefined],
        ["dropped", "within 60 minutes of step 1 (2026-03-11T08:00:00.000Z): not created"],
        ["dropped", "within 60 minutes of step 1 (2026-03-11T08:00:00.000Z): not created"],
      ],
    );
  });

  it("issue 22 (2): quiet time covers the window: a welcome at 20:51 with the stack's 15-minute window waits for 08:00", async () => {
    // London 2026-03-10 20:50 GMT: the welcome is due 20:51; its window [20:51, 21:06) reaches the quiet hours.
    now = Date.parse("2026-03-10T20:48:00Z");
    await trigger(
      "night",
      event("NightSignup", "2026-03-10T20:50:00Z", { id: "n2", email: "n@example.com", timezone: "Europe/London" }),
    );
    assert.deepStrictEqual(when(fake.creates[0]), ["n2-1", "at(2026-03-11T08:00:00)", "Europe/London"]);
  });

  const ANN_SIGNUP = event("UserSignedUp", "2026-03-10T18:05:00Z", {
    id: "u-42",
    email: "ann@example.com",
    timezone: "Asia/Kathmandu",
  });
  const ANN_KEY = "enr#onboarding#u-42#6a7e8feb-b491-4cf7-a9f1-bf3703467718";

  /** Runs `work` with the handler's stdout (its metric lines) kept, not printed. */
  async function withStdout<T>(work: () => Promise<T>): Promise<{ value: T; written: string[] }> {
    const written: string[] = [];
    const realWrite = process.stdout.write;
    (process.stdout as any).write = (chunk: string) => (written.push(String(chunk)), true);
    try {
      return { value: await work(), written };
    } finally {
      process.stdout.write = realWrite;
    }
  }

  it("issue 31: the enrolment is claimed in the ledger under the event's id, kept 14 days after the last step", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    const result = await trigger("onboarding", ANN_SIGNUP);
    assert.strictEqual(result.trigger, "6a7e8feb-b491-4cf7-a9f1-bf3703467718");
    const [item, ...others] = await ledger.items();
    assert.deepStrictEqual(others, []);
    assert.strictEqual(item.pk, ANN_KEY);
    assert.strictEqual(item.claimed_at, "2026-03-10T18:05:02.000Z");
    // The offer, the last step, goes at 2026-03-17T03:15Z; 14 days later is 2026-03-31T03:15Z.
    assert.strictEqual(item.expires_at, Date.UTC(2026, 2, 31, 3, 15) / 1000);
  });

  it("issue 31: a re-delivered event (the same id) is a duplicate: no call to Scheduler, logged and counted", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    await trigger("onboarding", ANN_SIGNUP);
    now += 20_000;
    const { value: again, written } = await withStdout(() => trigger("onboarding", ANN_SIGNUP));
    assert.strictEqual(fake.creates.length, 3);
    assert.deepStrictEqual(
      [again.outcome, again.recipient, again.trigger, again.steps],
      ["duplicate", "u-42", "6a7e8feb-b491-4cf7-a9f1-bf3703467718", undefined],
    );
    assert.strictEqual(JSON.parse(logs[1]).outcome, "duplicate");
    assert.ok(JSON.parse(logs[1]).message.endsWith(`(${ANN_KEY}): nothing created`), logs[1]);
    const metric = JSON.parse(written.find((l) => l.includes("_aws"))!);
    assert.deepStrictEqual(metric._aws.CloudWatchMetrics[0].Metrics, [{ Name: "DuplicateTriggers", Unit: "Count" }]);
    assert.deepStrictEqual([metric.journey, metric.DuplicateTriggers], ["onboarding", 1]);
  });

  it("issue 31: another trigger of the same subscriber (another event id) enrols again", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    await trigger("onboarding", ANN_SIGNUP);
    fake.schedules.clear(); // all sent
    now = Date.parse("2026-04-01T10:00:02Z");
    const later = { ...ANN_SIGNUP, id: "0d6c1f7e-2b9a-4c31-8f5e-7a1b2c3d4e5f", time: "2026-04-01T10:00:00Z" };
    const result = await trigger("onboarding", later);
    assert.deepStrictEqual(
      result.steps.map((s: any) => s.status),
      ["created", "created", "created"],
    );
    assert.strictEqual((await ledger.items()).length, 2);
  });

  it("issue 31: a trigger delivered again after step 1 fired (its schedule deleted itself) sends no second welcome", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    await trigger("onboarding", ANN_SIGNUP);
    // 18:07: the welcome is sent and its schedule deletes itself (ActionAfterCompletion DELETE).
    fake.schedules.delete("campaign-onboarding/u-42-1");
    // EventBridge delivers the same event (the same id) again at 18:20, within the journey's 60-minute grace.
    now = Date.parse("2026-03-10T18:20:00Z");
    const { value: again } = await withStdout(() => trigger("onboarding", ANN_SIGNUP));
    assert.deepStrictEqual(
      fake.creates.map((c) => c.Name),
      ["u-42-1", "u-42-2", "u-42-3"],
    );
    assert.strictEqual(fake.schedules.has("campaign-onboarding/u-42-1"), false);
    assert.strictEqual(again.outcome, "duplicate");
  });

  it("issue 22 (5): late, not lost: a welcome handled 24 minutes after its time is sent at once, in UTC", async () => {
    now = Date.parse("2026-03-10T18:30:00Z"); // the welcome was due 18:06; 18:30 + 60 s = 18:31 UTC
    const result = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "u-42",
        email: "ann@example.com",
        timezone: "Asia/Kathmandu",
      }),
    );
    assert.deepStrictEqual(
      result.steps.map((s: any) => [s.schedule, s.status, s.late]),
      [
        ["u-42-1", "created", "2026-03-10T18:06:00.000Z"],
        ["u-42-2", "created", undefined],
        ["u-42-3", "created", undefined],
      ],
    );
    assert.deepStrictEqual(when(fake.creates[0]), ["u-42-1", "at(2026-03-10T18:31:00)", "UTC"]);
  });

  it("issue 22 (5): a step handled after its grace (60 minutes) is not sent: reported late, with a metric line", async () => {
    now = Date.parse("2026-03-10T19:07:00Z"); // 61 minutes after the welcome's 18:06
    const written: string[] = [];
    const realWrite = process.stdout.write;
    (process.stdout as any).write = (chunk: string) => (written.push(String(chunk)), true);
    let result: any;
    try {
      result = await trigger(
        "onboarding",
        event("UserSignedUp", "2026-03-10T18:05:00Z", {
          id: "u-42",
          email: "ann@example.com",
          timezone: "Asia/Kathmandu",
        }),
      );
    } finally {
      process.stdout.write = realWrite;
    }
    assert.deepStrictEqual(
      result.steps.map((s: any) => s.status),
      ["late", "created", "created"],
    );
    assert.deepStrictEqual(
      fake.creates.map((c) => c.Name),
      ["u-42-2", "u-42-3"],
    );
    const metric = JSON.parse(written.find((l) => l.includes("_aws"))!);
    assert.deepStrictEqual(metric._aws.CloudWatchMetrics, [
      { Namespace: "sendtime/journeys", Dimensions: [["journey"]], Metrics: [{ Name: "LateSteps", Unit: "Count" }] },
    ]);
    assert.deepStrictEqual([metric.journey, metric.LateSteps], ["onboarding", 1]);
  });

  it("issue 22 (5): all-or-nothing: a failure deletes what the invocation created, so the retry sends the late welcome once", async () => {
    now = Date.parse("2026-03-10T18:30:00Z");
    const e = event("UserSignedUp", "2026-03-10T18:05:00Z", {
      id: "u-42",
      email: "ann@example.com",
      timezone: "Asia/Kathmandu",
    });
    // The welcome and the tips are created, then the offer fails (throttled past the SDK's retries).
    const realSend = fake.send.bind(fake);
    let calls = 0;
    fake.send = (command: any) => {
      if ("ScheduleExpression" in command.input && ++calls === 3) throw awsError("ThrottlingException");
      return realSend(command);
    };
    await assert.rejects(trigger("onboarding", e), /ThrottlingException/);
    // Deleted: the two it created and the one whose call failed (it may have been created before the failure).
    assert.deepStrictEqual(
      fake.deletes.map((d) => d.Name),
      ["u-42-1", "u-42-2", "u-42-3"],
    );
    assert.strictEqual(fake.schedules.size, 0);
    // The claim is released too: the subscriber is not left claimed but never enrolled.
    assert.deepStrictEqual(await ledger.items(), []);
    // Lambda's retry, a minute later: the welcome was never sent (deleted before its time), so it goes now, once.
    fake.send = realSend;
    now += 60_000;
    const retry = await trigger("onboarding", e);
    assert.deepStrictEqual(
      retry.steps.map((s: any) => s.status),
      ["created", "created", "created"],
    );
    assert.deepStrictEqual(
      (await ledger.items()).map((i) => i.pk),
      [ANN_KEY],
    );
    assert.deepStrictEqual(when(fake.schedules.get("campaign-onboarding/u-42-1")), [
      "u-42-1",
      "at(2026-03-10T18:32:00)",
      "UTC",
    ]);
  });

  it("issue 31: a ledger that refuses the claim (no such table) fails the invocation before any schedule", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    process.env.SENDTIME_LEDGER_TABLE = "sendtime-ledger-missing";
    bundle.resetForTests();
    try {
      await assert.rejects(trigger("onboarding", ANN_SIGNUP), (e: Error) => {
        assert.match(e.message, new RegExp(`^PutItem ${ANN_KEY}: ResourceNotFoundException`));
        return true;
      });
    } finally {
      process.env.SENDTIME_LEDGER_TABLE = ledger.tableName;
      bundle.resetForTests();
    }
    assert.deepStrictEqual(fake.creates, []);
  });

  it("issue 31: a claim that cannot be released after a failure is named in the error (a retry would be a duplicate)", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    fake.throttle = 100;
    const dynamo = mockClient(bundle.DynamoDBClient);
    (dynamo as any).send.callsFake((command: any) =>
      command.constructor.name.startsWith("PutItem")
        ? Promise.resolve({})
        : Promise.reject(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" })),
    );
    try {
      await assert.rejects(trigger("onboarding", ANN_SIGNUP), (e: Error) => {
        assert.strictEqual(
          e.message,
          `CreateSchedule campaign-onboarding/u-42-1: ThrottlingException: ThrottlingException from the fake; could not release the enrolment claim (DeleteItem ${ANN_KEY}: ThrottlingException: Rate exceeded): a retry of this trigger reports a duplicate and creates nothing; delete the ledger item ${ANN_KEY} to enrol it again`,
        );
        return true;
      });
    } finally {
      dynamo.restore();
    }
  });

  it("an exit event deletes the pending steps; re-delivered, it finds nothing left and still succeeds", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "u-42",
        email: "ann@example.com",
        timezone: "Asia/Kathmandu",
      }),
    );
    fake.schedules.delete("campaign-onboarding/u-42-1"); // the welcome was sent and deleted itself
    const exit = {
      journey: "onboarding",
      kind: "exit",
      event: event("UserUpgraded", "2026-03-11T10:00:00Z", { id: "u-42" }),
    };
    const first = await handler(exit);
    assert.deepStrictEqual([first.deleted, first.notPending], [["u-42-2", "u-42-3"], ["u-42-1"]]);
    assert.strictEqual(fake.schedules.size, 0);
    const again = await handler(exit);
    assert.deepStrictEqual([again.deleted, again.notPending], [[], ["u-42-1", "u-42-2", "u-42-3"]]);
    assert.deepStrictEqual(
      fake.deletes.map((d) => `${d.GroupName}/${d.Name}`),
      [1, 2, 3, 1, 2, 3].map((k) => `campaign-onboarding/u-42-${k}`),
    );
    // An exit claims nothing: the ledger holds the trigger's enrolment only.
    assert.deepStrictEqual(
      (await ledger.items()).map((i) => i.pk),
      [ANN_KEY],
    );
  });

  it("an odd id (an address, non-ASCII) gets the planner's hashed names, and the log names the hash", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    const id = "Zoë.Müller@example.com";
    const stem = "h." + createHash("sha256").update(id, "utf8").digest("hex").slice(0, 32);
    const result = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id, email: "zoe@example.com", timezone: "Asia/Kathmandu" }),
    );
    assert.deepStrictEqual(
      fake.creates.map((c) => c.Name),
      [`${stem}-1`, `${stem}-2`, `${stem}-3`],
    );
    assert.strictEqual(result.recipient, stem);
    assert.ok(!logs.join("\n").includes("@"), logs.join("\n"));
  });

  it("a missing or bad email (or a reserved field) is rejected, reported in the result and the log (no address), and nothing is created", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    const result = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "u-9", timezone: "Asia/Kathmandu" }),
    );
    assert.deepStrictEqual([result.outcome, result.reason, result.recipient], ["rejected", "missing-email", "u-9"]);
    const bad = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "u-10", email: "ann at example.com" }),
    );
    assert.deepStrictEqual([bad.outcome, bad.reason], ["rejected", "invalid-email"]);
    // A personalization field the step number would overwrite is refused, not silently dropped.
    const reserved = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "u-11", email: "c@example.com", step: "x" }),
    );
    assert.deepStrictEqual([reserved.outcome, reserved.reason], ["rejected", "reserved-field"]);
    assert.strictEqual(fake.creates.length, 0);
    assert.strictEqual(logs.length, 3);
    assert.ok(
      logs.every((l) => JSON.parse(l).outcome === "rejected" && !l.includes("example.com")),
      logs.join("\n"),
    );
  });

  it("an unknown zone falls back to the journey's default (UTC) and says so; a mis-cased one is re-cased", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    const r1 = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "z1", email: "z@example.com", timezone: "Mars/Olympus" }),
    );
    assert.deepStrictEqual([r1.zone, r1.zoneStatus], ["UTC", "defaulted"]);
    assert.deepStrictEqual(when(fake.creates[1]), ["z1-2", "at(2026-03-13T09:00:00)", "UTC"]);
    const r2 = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "z2", email: "z@example.com", timezone: "asia/kathmandu" }),
    );
    assert.deepStrictEqual([r2.zone, r2.zoneStatus], ["Asia/Kathmandu", "canonicalised"]);
  });

  it("a zone abbreviation is read as the zone people mean, an ambiguous one refused, a country with one zone used (issue 33)", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    const est = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "e1", email: "e@example.com", timezone: "EST" }),
    );
    assert.deepStrictEqual([est.zone, est.zoneStatus], ["America/New_York", "mapped"]);
    const fr = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "f1", email: "f@example.com", country: "FR" }),
    );
    assert.deepStrictEqual([fr.zone, fr.zoneStatus], ["Europe/Paris", "country"]);
    const created = fake.creates.length;
    const cst = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "c1", email: "c@example.com", timezone: "CST" }),
    );
    assert.deepStrictEqual([cst.outcome, cst.reason], ["rejected", "ambiguous-zone"]);
    assert.match(cst.message, /CST.*America\/Chicago.*Asia\/Shanghai/);
    assert.strictEqual(fake.creates.length, created);
  });

  it("a subscriber's latitude/longitude give the zone before the country; bad ones are refused (issue 33)", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    // By hand: Denver (39.7392, -104.9903) is America/Denver, Tokyo (35.6762, 139.6503) Asia/Tokyo.
    const denver = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "l1",
        email: "l@example.com",
        latitude: 39.7392,
        longitude: -104.9903,
        country: "FR",
      }),
    );
    assert.deepStrictEqual([denver.zone, denver.zoneStatus], ["America/Denver", "latlon"]);
    const tokyo = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "l2",
        email: "m@example.com",
        latitude: "35.6762",
        longitude: "139.6503",
      }),
    );
    assert.deepStrictEqual([tokyo.zone, tokyo.zoneStatus], ["Asia/Tokyo", "latlon"]);
    const given = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "l3",
        email: "n@example.com",
        timezone: "Europe/Paris",
        latitude: 999,
        longitude: 0,
      }),
    );
    assert.deepStrictEqual([given.zone, given.zoneStatus], ["Europe/Paris", "ok"]);
    const created = fake.creates.length;
    const bad = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "l4", email: "o@example.com", latitude: 91, longitude: 0 }),
    );
    assert.deepStrictEqual([bad.outcome, bad.reason], ["rejected", "invalid-coordinates"]);
    assert.match(bad.message, /latitude "91" is not decimal degrees from -90 to 90/);
    const half = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "l5", email: "p@example.com", longitude: 2.35 }),
    );
    assert.deepStrictEqual([half.outcome, half.reason], ["rejected", "invalid-coordinates"]);
    assert.strictEqual(fake.creates.length, created);
  });

  it("bundles within 2 MB, the zone tables (coordinates, postal codes, phones) in it (issue 33's target)", () => {
    const size = bundleJourneyHandler().code.length;
    assert.ok(size <= 2_000_000, `${size} bytes`);
  });

  it("a subscriber's postal code, then phone give the zone; a phone of several zones is sent never early (issue 33)", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    const zip = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "p1",
        email: "p@example.com",
        postal_code: "10001",
        country: "US",
        phone: "+1 907 555 0100",
      }),
    );
    assert.deepStrictEqual([zip.zone, zip.zoneStatus], ["America/New_York", "postal"]);
    // Step 2 is 2026-03-13 09:00 local: 17:00Z in Anchorage (AKDT, UTC-8), 18:00Z in Adak (HDT, UTC-9); never early
    // is Adak's.
    const created = fake.creates.length;
    const ak = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "p2", email: "q@example.com", phone: "+1 907 555 0100" }),
    );
    assert.deepStrictEqual([ak.zone, ak.zoneStatus], ["America/Adak", "phone"]);
    assert.deepStrictEqual(when(fake.creates[created + 1]), ["p2-2", "at(2026-03-13T09:00:00)", "America/Adak"]);
    const bad = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", { id: "p3", email: "r@example.com", phone: "12" }),
    );
    assert.deepStrictEqual([bad.outcome, bad.reason], ["rejected", "invalid-phone"]);
    const badZip = await trigger(
      "onboarding",
      event("UserSignedUp", "2026-03-10T18:05:00Z", {
        id: "p4",
        email: "s@example.com",
        postal_code: "1",
        country: "US",
      }),
    );
    assert.deepStrictEqual([badZip.outcome, badZip.reason], ["rejected", "invalid-postal-code"]);
  });

  it("an AWS failure fails the invocation (so Lambda retries, then keeps the event), with no address in the error", async () => {
    now = Date.parse("2026-03-10T18:05:02Z");
    fake.throttle = 100;
    await assert.rejects(
      trigger(
        "onboarding",
        event("UserSignedUp", "2026-03-10T18:05:00Z", {
          id: "u-42",
          email: "ann@example.com",
          timezone: "Asia/Kathmandu",
        }),
      ),
      (e: Error) =>
        /CreateSchedule campaign-onboarding\/u-42-1: ThrottlingException/.test(e.message) && !e.message.includes("@"),
    );
  });
});
