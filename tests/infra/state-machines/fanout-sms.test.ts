/**
 * The fan-out's SMS rows (issue 37): a one-time plan row of `channel: "sms"` becomes one schedule whose Input is the
 * sender's SMS input of one entry, to the byte as smsSenderInput() (infra/core/send/sms-input.ts) builds it in
 * TypeScript; a bulk line of channel sms carries its entries the same way. Then that Input, started as the sender,
 * makes the SendTextMessage request sms.md gives (written out here by hand).
 */
import * as assert from "assert";
import {
  fanOutDefinition,
  FanOutInput,
  FanOutParameters,
  PlanRow,
} from "../../../infra/state-machines/fanout-definition";
import { smsSenderInput } from "../../../infra/core/send/sms-input";
import { campaignTag } from "../../../infra/core/send/email-events";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { runStateMachine, StatesError } from "../../helpers/asl-interpreter";
import { runJsonataMachine } from "../../helpers/jsonata-interpreter";
import { senderTestParameters, withLedger } from "../../helpers/sender-ledger";
import { fanOutTestParameters, SENDER_ARN } from "../../helpers/fanout-params";

const PARAMS: FanOutParameters = fanOutTestParameters({ toleratedFailurePercentage: 100, senderArn: SENDER_ARN });
const INPUT: FanOutInput = {
  campaign_id: "spring.sale",
  plan_bucket: "recipients-bucket",
  plan_key: "plans/spring.sale/launch-1.jsonl",
  window_minutes: 7,
  campaign_tag: campaignTag("spring.sale"),
};
const POOL = "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-1a2b";

/** An email row's fields, then the SMS fields (sms.md: email may be "", template = the SMS template's name). */
function smsRow(id: string, variant: string | null, limit?: number): PlanRow & Record<string, unknown> {
  return {
    schedule_name: `${id}-1`,
    send_at: "2026-12-01T09:00:00",
    timezone: "America/New_York",
    email: "",
    template: "spring-text",
    template_data: { first_name: id },
    recipient_id: id,
    step: 1,
    utc: "2026-12-01T14:00:00.000Z",
    variant,
    schedule_expression: "at(2026-12-01T09:00:00)",
    channel: "sms",
    phone: "+13055550100",
    body: `Hi ${id} — "Zoë"'s sale \\ ends at 9 😀`,
    segments: 1,
    until: "2026-12-02T01:00:00.000Z",
    ...(limit === undefined ? {} : { same_subject_limit: limit }),
  };
}

function fanOut(rows: object[], params = PARAMS): any[] {
  const created: any[] = [];
  runStateMachine(fanOutDefinition(params), INPUT, {
    getObject: () => rows.map((r) => JSON.stringify(r)).join("\n") + "\n",
    writeResults: () => undefined,
    sdk: (_service: string, action: string, p: any) => {
      if (action === "createScheduleGroup") return {};
      if (action !== "createSchedule") throw new StatesError("Unexpected", action);
      created.push(p);
      return { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${p.GroupName}/${p.Name}` };
    },
  });
  return created;
}

describe("fan-out: SMS rows", () => {
  it("a one-time SMS row's schedule starts the sender with the SMS input smsSenderInput builds, to the byte (with and without variant and limit)", () => {
    const rows = [smsRow("ann", "B", 3), smsRow("bob", null)];
    const created = fanOut(rows);
    assert.strictEqual(created.length, 2);
    for (const [k, row] of rows.entries()) {
      const expected = smsSenderInput("spring.sale", { step: 1, variant: row.variant }, [row as any]);
      assert.strictEqual(created[k].Target.Input, JSON.stringify(expected));
      assert.strictEqual(created[k].Target.Arn, SENDER_ARN);
    }
    // Written out by hand from sms.md for the first.
    assert.deepStrictEqual(JSON.parse(created[0].Target.Input), {
      channel: "sms",
      sms: {
        MessageType: "PROMOTIONAL",
        Entries: [
          {
            DestinationPhoneNumber: "+13055550100",
            MessageBody: `Hi ann — "Zoë"'s sale \\ ends at 9 😀`,
            Until: "2026-12-02T01:00:00.000Z",
            SameSubjectLimit: 3,
          },
        ],
      },
      recipients: ["ann"],
      campaign: "spring_sale-d3c41dd6",
      step: 1,
      variant: "B",
      schedule: "<aws.scheduler.schedule-arn>",
      scheduled_time: "<aws.scheduler.scheduled-time>",
    });
  });

  it("the message type: the stack's (smsMessageType), or the row's own message_type", () => {
    const stack = fanOut([smsRow("ann", null)], { ...PARAMS, smsMessageType: "TRANSACTIONAL" });
    const own = fanOut([{ ...smsRow("bob", null), message_type: "TRANSACTIONAL" }]);
    assert.deepStrictEqual(
      [stack, own].map((c) => JSON.parse(c[0].Target.Input).sms.MessageType),
      ["TRANSACTIONAL", "TRANSACTIONAL"],
    );
    assert.strictEqual(
      fanOut([smsRow("cy", null)])[0].Target.Input,
      JSON.stringify(
        smsSenderInput("spring.sale", { step: 1, variant: null }, [smsRow("cy", null) as any], "PROMOTIONAL"),
      ),
    );
  });

  it("a bulk line of channel sms: one schedule whose Input carries every entry, as smsSenderInput builds it", () => {
    const entries = ["ann", "bob"].map((id, k) => ({
      recipient_id: id,
      phone: `+1202555010${k}`,
      body: `Hi ${id}`,
      until: "2026-12-02T01:00:00.000Z",
      ...(k === 0 ? { same_subject_limit: 3 } : {}),
    }));
    const line = {
      schedule_name: "b.sms.1",
      send_at: "2026-12-01T14:00:00",
      timezone: "UTC",
      utc: "2026-12-01T14:00:00.000Z",
      schedule_expression: "at(2026-12-01T14:00:00)",
      step: 2,
      template: "spring-text",
      variant: null,
      channel: "sms",
      entries,
    };
    const created = fanOut([line]);
    assert.strictEqual(
      created[0].Target.Input,
      JSON.stringify(smsSenderInput("spring.sale", { step: 2, variant: null }, entries)),
    );
  });

  it("end to end: the schedule's Input, started as the sender, sends the text sms.md describes", async () => {
    const created = fanOut([smsRow("ann", "B", 3)]);
    const requests: any[] = [];
    const sender = senderDefinition(
      senderTestParameters({
        deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq",
        sms: { originationIdentity: POOL, configurationSetName: "sendtime-dev-sms" },
      }),
    );
    const input = {
      ...JSON.parse(created[0].Target.Input),
      schedule: `arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring.sale/${created[0].Name}`,
      scheduled_time: "2026-12-01T14:00:00Z",
    };
    const { output } = await runJsonataMachine(
      sender,
      input,
      withLedger({
        call: (service, action, args) => {
          assert.deepStrictEqual([service, action], ["pinpointsmsvoicev2", "sendTextMessage"]);
          requests.push(args);
          return { MessageId: "m-1" };
        },
      }),
      { startTime: "2026-12-01T14:00:03Z" },
    );
    // Until 2026-12-02T01:00:00Z − 14:00:03Z = 10 h 59 min 57 s = 39,597 s.
    assert.deepStrictEqual(requests, [
      {
        DestinationPhoneNumber: "+13055550100",
        OriginationIdentity: POOL,
        ConfigurationSetName: "sendtime-dev-sms",
        MessageBody: `Hi ann — "Zoë"'s sale \\ ends at 9 😀`,
        MessageType: "PROMOTIONAL",
        Context: { campaign: "spring_sale-d3c41dd6", step: "1", variant: "B" },
        TimeToLive: 39_597,
      },
    ]);
    assert.strictEqual(output.sent, 1);
  });
});
