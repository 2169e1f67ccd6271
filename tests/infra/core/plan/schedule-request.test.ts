import * as assert from "assert";
import { runJsonataMachine } from "../../../helpers/jsonata-interpreter";
import { senderDefinition } from "../../../../infra/state-machines/sender-definition";
import { senderTestParameters, withLedger } from "../../../helpers/sender-ledger";
import { campaignTag } from "../../../../infra/core/send/email-events";
import { fanOutDefinition, FanOutParameters, PlanRow } from "../../../../infra/state-machines/fanout-definition";
import { createScheduleRequest } from "../../../../infra/core/plan/schedule-request";
import { runStateMachine } from "../../../helpers/asl-interpreter";

const SENDER = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev";
const PARAMS: FanOutParameters = {
  partition: "aws",
  targetRoleArn: "arn:aws:iam::123456789012:role/target",
  deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
  resultsBucket: "recipients-bucket",
  fromAddress: "news@mail.example.com",
  configurationSetName: "sendtime-dev",
  listManagement: { contactListName: "sendtime-dev", topicName: "campaigns" },
  maxConcurrency: 10,
  batchSize: 2,
  innerConcurrency: 2,
  toleratedFailurePercentage: 0,
  maxEventAgeSeconds: 3600,
  maxRetryAttempts: 7,
  senderArn: SENDER,
};

const ROWS: PlanRow[] = [
  {
    schedule_name: "a1-1",
    send_at: "2026-12-01T09:00:00",
    schedule_expression: "at(2026-12-01T09:00:00)",
    timezone: "Asia/Kathmandu",
    email: "a1@example.com",
    template: "welcome",
    template_data: { first_name: 'Zoë "the" \\ one', note: "line1\nline2 \u{1F600}", step: "1" },
    recipient_id: "a1",
    step: 1,
    variant: null,
    utc: "2026-12-01T03:15:00.000Z",
  },
  {
    schedule_name: "h.0123456789abcdef0123456789abcdef-2",
    send_at: "2026-03-08T07:30:00",
    schedule_expression: "at(2026-03-08T07:30:00)",
    timezone: "UTC",
    email: "o'brien+tag@example.co.uk",
    template: "tips",
    template_data: { step: "2" },
    recipient_id: "odd id/ü",
    step: 2,
    utc: "2026-03-08T07:30:00.000Z",
    variant: "B",
  },
  {
    schedule_name: "c3-1",
    send_at: "2026-12-01T09:00:00",
    schedule_expression: "at(2026-12-01T09:00:00)",
    timezone: "America/New_York",
    email: "c3@example.com",
    template: "welcome",
    template_data: {},
    recipient_id: "c3",
    step: 1,
    utc: "2026-12-01T14:00:00.000Z",
    variant: null,
  },
  {
    schedule_name: "d4-1",
    send_at: "2026-12-07T09:00:00",
    schedule_expression: "cron(0 9 ? * MON,THU *)",
    timezone: "Europe/Paris",
    email: "d4@example.com",
    template: "digest",
    template_data: { step: "1" },
    recipient_id: "d4",
    step: 1,
    utc: "2026-12-07T08:00:00.000Z",
    variant: "A",
    start_date: "2026-11-30T12:05:01.000Z",
    end_date: "2027-01-31T23:00:00.000Z",
  },
];

/** The CreateSchedule requests the deployed fan-out makes for `rows`, run through the ASL interpreter. */
function fanOutRequests(params: FanOutParameters, rows: PlanRow[], campaign: string, windowMinutes: number): any[] {
  const requests: any[] = [];
  runStateMachine(
    fanOutDefinition(params),
    {
      campaign_id: campaign,
      plan_bucket: "recipients-bucket",
      plan_key: "plans/x.jsonl",
      window_minutes: windowMinutes,
      campaign_tag: campaignTag(campaign),
    },
    {
      getObject: () => rows.map((r) => JSON.stringify(r)).join("\n") + "\n",
      sdk: (_service, action, request) => {
        if (action === "createSchedule") requests.push(request);
        return {};
      },
    },
  );
  return requests;
}

describe("createScheduleRequest: the fan-out's CreateSchedule request, built in TypeScript", () => {
  for (const [label, params] of [
    ["with one-click unsubscribe", PARAMS],
    ["without a contact list", { ...PARAMS, listManagement: undefined }],
  ] as const) {
    it(`gives exactly the request the fan-out makes for the same row (${label})`, () => {
      // A journey name with a dot exercises the campaign tag's mapping (SES tags take no dot).
      const viaAsl = fanOutRequests(params, ROWS, "onboarding.v2", 9);
      assert.strictEqual(viaAsl.length, ROWS.length);
      const viaBuilder = ROWS.map((row) => createScheduleRequest(params, "onboarding.v2", 9, row));
      // Byte for byte: the Input JSON text included (field order, escaping of quotes, backslashes, newlines, emoji).
      assert.deepStrictEqual(viaBuilder, viaAsl);
      assert.strictEqual(JSON.stringify(viaBuilder), JSON.stringify(viaAsl));
    });
  }

  it("passes a recurring row's start_date and end_date as StartDate and EndDate, right after the zone", () => {
    const r = createScheduleRequest(PARAMS, "digest", 9, ROWS[3]);
    assert.deepStrictEqual(Object.keys(r).slice(0, 6), [
      "Name",
      "GroupName",
      "ScheduleExpression",
      "ScheduleExpressionTimezone",
      "StartDate",
      "EndDate",
    ]);
    assert.deepStrictEqual([r.StartDate, r.EndDate], ["2026-11-30T12:05:01.000Z", "2027-01-31T23:00:00.000Z"]);
    assert.ok(!("StartDate" in createScheduleRequest(PARAMS, "digest", 9, ROWS[0])));
  });

  it("is a request Scheduler accepts: the one sender as target, the role, retry policy, DLQ and the sender's input", () => {
    const r = createScheduleRequest(PARAMS, "onboarding", 9, ROWS[0]);
    assert.strictEqual(r.GroupName, "campaign-onboarding");
    assert.strictEqual(r.Target.Arn, SENDER);
    assert.strictEqual(r.ActionAfterCompletion, "DELETE");
    assert.deepStrictEqual(JSON.parse(r.Target.Input), {
      bulk: {
        FromEmailAddress: "news@mail.example.com",
        ConfigurationSetName: "sendtime-dev",
        DefaultContent: { Template: { TemplateName: "welcome", TemplateData: "{}" } },
        DefaultEmailTags: [
          { Name: "campaign", Value: "onboarding" },
          { Name: "step", Value: "1" },
        ],
        BulkEmailEntries: [
          {
            Destination: { ToAddresses: ["a1@example.com"] },
            ReplacementEmailContent: {
              ReplacementTemplate: { ReplacementTemplateData: JSON.stringify(ROWS[0].template_data) },
            },
            ReplacementHeaders: [],
          },
        ],
      },
      recipients: ["a1"],
      campaign: "onboarding",
      step: 1,
      schedule: "<aws.scheduler.schedule-arn>",
      scheduled_time: "<aws.scheduler.scheduled-time>",
      list_management: { ContactListName: "sendtime-dev", TopicName: "campaigns" },
    });
  });

  it("plain sends reach SES with ListManagementOptions through the one sender (so SES drops a contact opted out of the topic)", async () => {
    const r = createScheduleRequest(PARAMS, "onboarding", 9, ROWS[0]);
    // Scheduler fills in the context attributes; the sender sends the one entry with SendEmail.
    const input = {
      ...JSON.parse(r.Target.Input),
      schedule: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-onboarding/x",
      scheduled_time: "2026-12-01T09:00:00Z",
    };
    const sent: any[] = [];
    await runJsonataMachine(
      senderDefinition(
        senderTestParameters({ deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq" }),
      ),
      input,
      withLedger({
        call: (service, action, args) => {
          assert.deepStrictEqual([service, action], ["sesv2", "sendEmail"]);
          sent.push(args);
          return { MessageId: "m" };
        },
      }),
      { startTime: "2026-12-01T09:00:00Z" },
    );
    assert.strictEqual(sent.length, 1);
    assert.deepStrictEqual(sent[0].ListManagementOptions, { ContactListName: "sendtime-dev", TopicName: "campaigns" });
  });
});
