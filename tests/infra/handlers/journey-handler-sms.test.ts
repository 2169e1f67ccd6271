/**
 * Journeys with SMS steps (issue 37): an email step then a text, enrolled through the journey handler as deployed (the
 * esbuild bundle, its Scheduler client mocked with aws-sdk-client-mock, the ledger in dynalite). Expected instants
 * come from luxon or by hand from the zones' offsets (America/New_York and America/Toronto: EDT −4 from 2026-03-08);
 * the legal hours by hand from the laws (docs/sms.md): federal 8:00–21:00, Florida 8:00–20:00, Canada 9:00–21:30 on
 * weekdays and 10:00–18:00 on weekends. 2026-03-10 is a Tuesday, 2026-03-13 a Friday.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DateTime } from "luxon";
import { mockClient } from "aws-sdk-client-mock";
import { bundleJourneyHandler } from "../../../infra/handler-bundle";
import type { Journey } from "../../../infra/core/journeys/journeys-definition";
import { startLedger, TEST_CREDENTIALS, TestLedger } from "../../helpers/enrolment-ledger";

const WELCOME = "Hi {{first_name}}, welcome! Reply STOP to opt out.";
const REMINDER = "{{first_name}}, your trial ends soon (step {{step}}). Reply STOP to opt out.";
const LONG_NAME = "{{first_name}} " + "x".repeat(150);

const TEXTS: Journey = {
  name: "texts",
  trigger: { source: "com.example.app", detailType: "TrialStarted" },
  steps: [
    { after: "+0h", template: "onboarding-welcome" },
    { after: "+1d", at: "10:00", template: "trial-reminder", channel: "sms", legalHours: ["us"] },
  ],
};
/** A text due at 22:00 local the trigger's day: outside every preset's hours. */
const LATE: Journey = {
  name: "late-text",
  trigger: { source: "com.example.app", detailType: "CartAbandoned" },
  steps: [
    { after: "+0h", template: "onboarding-welcome" },
    { after: "+0d", at: "22:00", template: "trial-reminder", channel: "sms", legalHours: ["us", "ca"] },
  ],
};
const PLAIN: Journey = {
  name: "plain-text",
  trigger: { source: "com.example.app", detailType: "Ordered" },
  steps: [{ after: "+2h", template: "sms-welcome", channel: "sms", maxSegments: 1 }],
};
const LONG: Journey = {
  name: "long-text",
  trigger: { source: "com.example.app", detailType: "Browsed" },
  steps: [
    { after: "+0h", template: "onboarding-welcome" },
    { after: "+3h", template: "long", channel: "sms", maxSegments: 1 },
  ],
};
const ENROLMENT = {
  target: {
    partition: "aws",
    targetRoleArn: "arn:aws:iam::123456789012:role/scheduler-target-role",
    deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq",
    fromAddress: "news@mail.example.com",
    configurationSetName: "sendtime-dev",
    maxEventAgeSeconds: 7200,
    maxRetryAttempts: 5,
    senderArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev",
  },
  windowMinutes: 15,
  sms: {
    templates: { "trial-reminder": REMINDER, "sms-welcome": WELCOME, long: LONG_NAME },
    messageType: "PROMOTIONAL",
  },
};

const event = (detailType: string, time: string, recipient: Record<string, unknown>) => ({
  version: "0",
  id: `ev-${detailType}-${time}-${recipient.id}`,
  "detail-type": detailType,
  source: "com.example.app",
  time,
  detail: { recipient },
});
const iso = (local: string, zone: string) => DateTime.fromISO(local, { zone }).toUTC().toISO()!;

describe("journeys with SMS steps: the handler's schedules (issue 37)", function () {
  this.timeout(60_000);
  let handler: (input: any) => Promise<any>;
  let bundle: any;
  let creates: any[];
  let now: number;
  let mock: ReturnType<typeof mockClient>;
  let ledger: TestLedger;
  const realNow = Date.now;
  const realLog = console.log;
  const realWarn = console.warn;
  const savedEnv = { ...process.env };

  before(async () => {
    ledger = await startLedger("sendtime-ledger-sms-test");
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: ledger.url,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
      AWS_REGION: "us-east-1",
      SENDTIME_LEDGER_TABLE: ledger.tableName,
      SENDTIME_JOURNEYS: JSON.stringify([TEXTS, LATE, PLAIN, LONG]),
      SENDTIME_ENROLMENT: JSON.stringify(ENROLMENT),
    });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-sms-handler-")), "index.js");
    fs.writeFileSync(file, bundleJourneyHandler().code);
    bundle = require(file);
    handler = bundle.handler;
    mock = mockClient(bundle.SchedulerClient);
  });
  beforeEach(async () => {
    await ledger.clear();
    creates = [];
    mock.reset();
    (mock as any).send.callsFake((command: any) => {
      creates.push(command.input);
      return Promise.resolve({ ScheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/x" });
    });
    console.log = console.warn = () => undefined;
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

  it("an email step then an SMS step: the email's input as for any journey, the text's with its rendered body and Until", async () => {
    // Tue 2026-03-10 10:00 EDT = 14:00 UTC. The welcome goes at once (14:00:02 + 60 s, rounded up: 14:02 UTC); the
    // text the next day at 10:00 New York time, inside the federal 8:00–21:00 (212 is New York: no state rule).
    now = Date.parse("2026-03-10T14:00:02Z");
    const result = await trigger(
      "texts",
      event("TrialStarted", "2026-03-10T14:00:00Z", {
        id: "u-1",
        email: "ann@example.com",
        phone: "+1 212 555 0123",
        timezone: "America/New_York",
        first_name: "Ann",
      }),
    );
    assert.strictEqual(result.outcome, "enrolled");
    assert.deepStrictEqual(creates.map(when), [
      ["u-1-1", "at(2026-03-10T14:02:00)", "UTC"],
      ["u-1-2", "at(2026-03-11T10:00:00)", "America/New_York"],
    ]);
    const [mail, text] = creates.map((c) => JSON.parse(c.Target.Input));
    assert.deepStrictEqual(mail.bulk.BulkEmailEntries[0].Destination, { ToAddresses: ["ann@example.com"] });
    assert.strictEqual(mail.bulk.DefaultContent.Template.TemplateName, "onboarding-welcome");
    assert.strictEqual(mail.channel, undefined);
    // Until: when the federal window holding 10:00 closes, 21:00 New York time that day (luxon's reading).
    const until = iso("2026-03-11T21:00", "America/New_York");
    assert.strictEqual(until, "2026-03-12T01:00:00.000Z");
    assert.deepStrictEqual(text, {
      channel: "sms",
      sms: {
        MessageType: "PROMOTIONAL",
        Entries: [
          {
            DestinationPhoneNumber: "+12125550123",
            MessageBody: "Ann, your trial ends soon (step 2). Reply STOP to opt out.",
            Until: until,
          },
        ],
      },
      recipients: ["u-1"],
      campaign: "texts",
      step: 2,
      schedule: "<aws.scheduler.schedule-arn>",
      scheduled_time: "<aws.scheduler.scheduled-time>",
    });
    // The same one sender, role, retries and dead letters as the email.
    for (const key of ["Arn", "RoleArn", "RetryPolicy", "DeadLetterConfig"])
      assert.deepStrictEqual(creates[1].Target[key], creates[0].Target[key], key);
    assert.deepStrictEqual(creates[1].FlexibleTimeWindow, { Mode: "FLEXIBLE", MaximumWindowInMinutes: 15 });
    assert.deepStrictEqual(
      result.steps.map((s: any) => [s.status, s.channel, s.segments, s.until]),
      [
        ["created", undefined, undefined, undefined],
        ["created", "sms", 1, until],
      ],
    );
  });

  it("legal hours: a Florida text due at 22:00 moves to 08:00 the next morning, until 20:00, 3 in 24 h", async () => {
    // Tue 2026-03-10 22:00 EDT = 2026-03-11 02:00 UTC: after Florida's 20:00 and the federal 21:00. Florida opens at
    // 08:00 (Wed, 12:00 UTC) and closes at 20:00 (Thu 00:00 UTC); its same-subject limit is 3 in 24 h.
    now = Date.parse("2026-03-10T14:00:02Z");
    const result = await trigger(
      "late-text",
      event("CartAbandoned", "2026-03-10T14:00:00Z", {
        id: "fl-1",
        email: "fl@example.com",
        phone: "+1 305 555 0142",
        timezone: "America/New_York",
        first_name: "Flo",
      }),
    );
    assert.deepStrictEqual(when(creates[1]), ["fl-1-2", "at(2026-03-11T08:00:00)", "America/New_York"]);
    const [entry] = JSON.parse(creates[1].Target.Input).sms.Entries;
    assert.deepStrictEqual(entry, {
      DestinationPhoneNumber: "+13055550142",
      MessageBody: "Flo, your trial ends soon (step 2). Reply STOP to opt out.",
      Until: "2026-03-12T00:00:00.000Z",
      SameSubjectLimit: 3,
    });
    assert.strictEqual(result.steps[1].utc, "2026-03-11T12:00:00.000Z");
    assert.match(result.steps[1].note, /outside legal hours \(us,ca\): moved to 2026-03-11T12:00:00.000Z/);
  });

  it("legal hours: a Toronto text due at 22:00 on a Friday moves to Saturday 10:00 (Canada's weekend), until 18:00", async () => {
    // Fri 2026-03-13 22:00 EDT = Sat 02:00 UTC: after Canada's 21:30. Saturday's hours are 10:00–18:00: 14:00 and
    // 22:00 UTC. Canada has no same-subject limit.
    now = Date.parse("2026-03-13T14:00:02Z");
    const result = await trigger(
      "late-text",
      event("CartAbandoned", "2026-03-13T14:00:00Z", {
        id: "to-1",
        email: "to@example.com",
        phone: "+1 416 555 0175",
        timezone: "America/Toronto",
        first_name: "Tom",
      }),
    );
    assert.deepStrictEqual(when(creates[1]), ["to-1-2", "at(2026-03-14T10:00:00)", "America/Toronto"]);
    const [entry] = JSON.parse(creates[1].Target.Input).sms.Entries;
    assert.strictEqual(entry.Until, iso("2026-03-14T18:00", "America/Toronto"));
    assert.strictEqual(entry.Until, "2026-03-14T22:00:00.000Z");
    assert.strictEqual(entry.SameSubjectLimit, undefined);
    assert.strictEqual(result.steps[1].utc, "2026-03-14T14:00:00.000Z");
  });

  it("a text whose flexible window would cross the close of legal hours waits for the next opening", async () => {
    // Florida closes at 20:00: a text at 19:50 with a 15-minute window could start at 20:04, so it goes at 08:00.
    now = Date.parse("2026-03-10T14:00:02Z");
    const journeys = JSON.parse(process.env.SENDTIME_JOURNEYS!);
    const late = journeys.find((j: Journey) => j.name === "late-text");
    late.steps[1].at = "19:50";
    process.env.SENDTIME_JOURNEYS = JSON.stringify(journeys);
    reload();
    try {
      await trigger(
        "late-text",
        event("CartAbandoned", "2026-03-10T14:00:00Z", {
          id: "fl-2",
          email: "fl2@example.com",
          phone: "+13055550142",
          timezone: "America/New_York",
          first_name: "Flo",
        }),
      );
      assert.deepStrictEqual(when(creates[1]), ["fl-2-2", "at(2026-03-11T08:00:00)", "America/New_York"]);
    } finally {
      process.env.SENDTIME_JOURNEYS = JSON.stringify([TEXTS, LATE, PLAIN, LONG]);
      reload();
    }
  });

  it("a subscriber without a phone: the email is created, the text is skipped with why, never sent as an email", async () => {
    now = Date.parse("2026-03-10T14:00:02Z");
    const result = await trigger(
      "texts",
      event("TrialStarted", "2026-03-10T14:00:00Z", {
        id: "u-2",
        email: "bo@example.com",
        timezone: "America/New_York",
        first_name: "Bo",
      }),
    );
    assert.strictEqual(result.outcome, "enrolled");
    assert.deepStrictEqual(creates.map(when), [["u-2-1", "at(2026-03-10T14:02:00)", "UTC"]]);
    assert.deepStrictEqual(
      result.steps.map((s: any) => s.status),
      ["created", "skipped"],
    );
    assert.match(result.steps[1].note, /no phone: detail\.recipient\.phone is missing.*not sent/);
    // An invalid number is skipped too, with libphonenumber's word for it.
    const bad = await trigger(
      "texts",
      event("TrialStarted", "2026-03-10T14:00:00Z", {
        id: "u-3",
        email: "cy@example.com",
        phone: "+1 555",
        timezone: "America/New_York",
        first_name: "Cy",
      }),
    );
    assert.deepStrictEqual(
      bad.steps.map((s: any) => s.status),
      ["created", "skipped"],
    );
    assert.match(bad.steps[1].note, /phone "\+1 555" is not a valid number/);
    assert.strictEqual(creates.filter((c) => JSON.parse(c.Target.Input).channel === "sms").length, 0);
  });

  it("a journey of texts only needs no address; without legal hours Until is 72 hours (TimeToLive's most) after", async () => {
    // Ordered 2026-03-10 14:00 UTC, +2h: 16:00 UTC (written in the subscriber's zone, national number with country).
    now = Date.parse("2026-03-10T14:00:02Z");
    const result = await trigger(
      "plain-text",
      event("Ordered", "2026-03-10T14:00:00Z", {
        id: "u-4",
        phone: "(212) 555-0123",
        country: "us",
        timezone: "America/New_York",
        first_name: "Di",
      }),
    );
    assert.strictEqual(result.outcome, "enrolled");
    assert.deepStrictEqual(when(creates[0]), ["u-4-1", "at(2026-03-10T12:00:00)", "America/New_York"]);
    const [entry] = JSON.parse(creates[0].Target.Input).sms.Entries;
    assert.deepStrictEqual(entry, {
      DestinationPhoneNumber: "+12125550123",
      MessageBody: "Hi Di, welcome! Reply STOP to opt out.",
      Until: new Date(Date.parse("2026-03-10T16:00:00Z") + 259_200_000).toISOString(),
    });
  });

  it("a text rendered over its step's maxSegments is skipped with its count; a lacking variable too", async () => {
    now = Date.parse("2026-03-10T14:00:02Z");
    // "Ann " + 150 x = 154 GSM-7 characters: one part. A 10-character name makes 161: two parts, over 1.
    const fits = await trigger(
      "long-text",
      event("Browsed", "2026-03-10T14:00:00Z", {
        id: "u-5",
        email: "a@example.com",
        phone: "+12125550123",
        first_name: "Ann",
      }),
    );
    assert.deepStrictEqual(
      fits.steps.map((s: any) => s.status),
      ["created", "created"],
    );
    const over = await trigger(
      "long-text",
      event("Browsed", "2026-03-10T14:00:00Z", {
        id: "u-6",
        email: "b@example.com",
        phone: "+12125550123",
        first_name: "Bartholome",
      }),
    );
    assert.strictEqual(over.steps[1].status, "skipped");
    assert.match(over.steps[1].note, /renders to 2 message parts \(GSM-7, 161 septets\).*over 1/);
    const lacking = await trigger(
      "long-text",
      event("Browsed", "2026-03-10T14:00:00Z", { id: "u-7", email: "c@example.com", phone: "+12125550123" }),
    );
    assert.strictEqual(lacking.steps[1].status, "skipped");
    assert.match(lacking.steps[1].note, /uses \{\{first_name\}\}, which detail.recipient lacks/);
  });

  it("settings without a journey's SMS template fail the handler (a deployment fault: the event is kept)", async () => {
    process.env.SENDTIME_ENROLMENT = JSON.stringify({ ...ENROLMENT, sms: { templates: { long: LONG_NAME } } });
    reload();
    try {
      await assert.rejects(
        trigger("texts", event("TrialStarted", "2026-03-10T14:00:00Z", { id: "u-8", email: "d@example.com" })),
        /SENDTIME_ENROLMENT lacks the SMS templates sms-welcome, trial-reminder/,
      );
    } finally {
      process.env.SENDTIME_ENROLMENT = JSON.stringify(ENROLMENT);
      reload();
    }
  });

  /** The handler reads its environment once: forget it, so the next event reads the changed one. */
  function reload() {
    bundle.resetForTests();
  }
});
