/**
 * The one door in the rendered stack (Pulumi mocks): every schedule — the fan-out's rows and bulk lines, journeys'
 * steps — starts the one sender, which alone may call SES; with `sendtime:frequencyCap` it admits each entry against
 * the cap's table. Run end to end: the rendered definitions in the tests' interpreters with stateful fakes.
 */
import * as assert from "assert";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { FanOutInput, PlanRow } from "../../infra/state-machines/fanout-definition";
import { createScheduleRequest } from "../../infra/core/plan/schedule-request";
import { runStateMachine, StatesError } from "../helpers/asl-interpreter";
import { FakeTable, runJsonataMachine } from "../helpers/jsonata-interpreter";
import { all, only, renderWith } from "../helpers/stack";

const aslValidator = require("asl-validator");

const statements = (policyJson: string) => JSON.parse(policyJson).Statement as any[];
const SENDER_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev";
const CAP = '{"max": 2, "per": "day"}';

const stateMachine = (stack: RenderedStack, name: string) =>
  only(stack, "aws:sfn/stateMachine:StateMachine", name).inputs;

/** The rendered sender with fakes of its tables and SES: what was sent, with which action. */
function senderRun(stack: RenderedStack) {
  const def = JSON.parse(stateMachine(stack, "bulk-sender").definition);
  const ledger = new FakeTable(def.States.Claim.Arguments.TableName);
  const admit = def.States.AdmitEntries?.ItemProcessor.States.AdmitEntry.Arguments.TableName;
  const cap = admit ? new FakeTable(admit) : undefined;
  const sent: [string, any][] = [];
  const deadLetters: any[] = [];
  const services = {
    call: (service: string, action: string, args: any) => {
      if (service === "dynamodb" && action === "batchGetItem")
        return { Responses: Object.fromEntries(Object.keys(args.RequestItems).map((t) => [t, []])) };
      if (service === "dynamodb") return (args.TableName === ledger["tableName"] ? ledger : cap!).call(action, args);
      if (service === "sesv2" && action === "sendEmail") return (sent.push([action, args]), { MessageId: "m" });
      if (service === "sesv2")
        return (
          sent.push([action, args]),
          { BulkEmailEntryResults: args.BulkEmailEntries.map(() => ({ Status: "SUCCESS", MessageId: "m" })) }
        );
      if (service === "cloudwatch") return {};
      if (service === "sqs") return (deadLetters.push(JSON.parse(args.MessageBody)), { MessageId: "d" });
      throw new StatesError("Unexpected", `${service}:${action}`);
    },
  };
  /** Scheduler's invocation of a created schedule: it fills in the two context attributes. */
  const invoke = (c: { Name: string; GroupName: string; ScheduleExpression: string; Target: { Input: string } }) => {
    const text = c.Target.Input.replace(
      "<aws.scheduler.schedule-arn>",
      `arn:aws:scheduler:us-east-1:123456789012:schedule/${c.GroupName}/${c.Name}`,
    ).replace("<aws.scheduler.scheduled-time>", `${c.ScheduleExpression.slice(3, -1)}Z`);
    return runJsonataMachine(def, JSON.parse(text), services, { startTime: "2026-12-01T12:00:00Z" });
  };
  return { def, cap, sent, deadLetters, invoke };
}

describe("the one door in the stack, and the frequency cap (sendtime:frequencyCap), under Pulumi mocks", () => {
  let stack: RenderedStack;
  before(async () => {
    stack = await renderWith({ frequencyCap: CAP });
  });

  it("one sender state machine beside the fan-out, with its ledger; no cap table without a cap", async () => {
    const plain = await renderWith();
    assert.deepStrictEqual(
      all(plain, "aws:dynamodb/table:Table")
        .map((t) => t.name)
        .sort(),
      ["bulk-sender-ledger", "unsubscribe-opt-outs"],
    );
    assert.deepStrictEqual(
      all(plain, "aws:sfn/stateMachine:StateMachine").map((m) => m.name),
      // The guardrails' two small machines set campaign states and put alarms; they send nothing.
      ["guardrails-arm", "guardrails-pause", "bulk-sender", "fanout"],
    );
    const sender = stateMachine(plain, "bulk-sender");
    assert.deepStrictEqual([sender.type, sender.name], ["EXPRESS", "sendtime-sender-dev"]);
    assert.strictEqual(plain.outputs.senderStateMachineArn, SENDER_ARN);
    assert.match(String(plain.outputs.ledgerTableName), /^bulk-sender-ledger/);
    assert.strictEqual(plain.outputs.sendGateArn, undefined);
  });

  it("the ledger and the cap's table: on demand, encrypted, recoverable, expiring by TTL", () => {
    for (const name of ["bulk-sender-ledger", "bulk-sender-sends"]) {
      const table = only(stack, "aws:dynamodb/table:Table", name).inputs;
      assert.strictEqual(table.billingMode, "PAY_PER_REQUEST");
      assert.strictEqual(table.hashKey, "pk");
      assert.deepStrictEqual(table.ttl, { attributeName: "expires_at", enabled: true });
      assert.deepStrictEqual(table.serverSideEncryption, { enabled: true });
      assert.deepStrictEqual(table.pointInTimeRecovery, { enabled: true });
    }
  });

  it("the sender's definition passes asl-validator and admits against the cap's table with its max", () => {
    const { def } = senderRun(stack);
    assert.deepStrictEqual(aslValidator(structuredClone(def), { checkPaths: true, checkArn: true }).errors, []);
    const admit = def.States.AdmitEntries.ItemProcessor.States.AdmitEntry.Arguments;
    assert.match(admit.TableName, /^bulk-sender-sends/);
    assert.strictEqual(admit.ExpressionAttributeValues[":max"].N, "2");
    assert.strictEqual(
      def.States.Settle.ItemProcessor.States.DeadLetterEntry.Arguments.QueueUrl,
      stack.outputs.deadLetterQueueUrl,
    );
  });

  it("the sender's role is the only one that may send: SES on the identity, configuration set, templates and contact list; its tables; its metrics; the queue", () => {
    const s = statements(only(stack, "aws:iam/rolePolicy:RolePolicy", "bulk-sender-permissions").inputs.policy);
    assert.deepStrictEqual(
      s.map((x) => [x.Sid, x.Action]),
      [
        ["SendEmail", ["ses:SendEmail", "ses:SendBulkEmail"]],
        ["ClaimAndRecordOccurrences", ["dynamodb:PutItem", "dynamodb:UpdateItem"]],
        ["ReadCampaignStates", "dynamodb:GetItem"],
        ["DeadLetterEntries", "sqs:SendMessage"],
        ["LookUpOptOuts", ["dynamodb:GetItem", "dynamodb:BatchGetItem"]],
        ["AdmitEntries", ["dynamodb:UpdateItem", "dynamodb:GetItem"]],
        ["CountSkippedEntries", "cloudwatch:PutMetricData"],
        // The example stack sends texts: tests/infra/sms-stack.test.ts checks the pool and configuration set.
        ["SendText", "sms-voice:SendTextMessage"],
      ],
    );
    const ses: string[] = s[0].Resource;
    assert.ok(ses.includes("arn:aws:ses:us-east-1:123456789012:identity/mail.example.com"), ses.join(" "));
    assert.ok(
      ses.every((r) => !r.endsWith("template/*")),
      "the stack's templates by name",
    );
    assert.deepStrictEqual(s[6].Condition, { StringEquals: { "cloudwatch:namespace": "sendtime" } });
    // The ledger by the item's key: occurrences claimed and recorded, campaigns' states read (never written).
    assert.deepStrictEqual(
      [s[1].Condition, s[2].Condition],
      [
        { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["occ#*"] } },
        { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["campaign#*"] } },
      ],
    );
    const trust = statements(only(stack, "aws:iam/role:Role", "bulk-sender-role").inputs.assumeRolePolicy);
    assert.deepStrictEqual(trust[0].Principal, { Service: "states.amazonaws.com" });
    const granting = all(stack, "aws:iam/rolePolicy:RolePolicy").filter((p) => p.inputs.policy.includes('"ses:Send'));
    assert.deepStrictEqual(
      granting.map((p) => p.name),
      ["bulk-sender-permissions"],
    );
  });

  it("Scheduler's role may only start the sender and dead-letter, never call SES, with a cap or without, journeys or not", async () => {
    for (const s of [stack, await renderWith({ journeys: undefined }), await renderWith()]) {
      const granted = statements(only(s, "aws:iam/rolePolicy:RolePolicy", "scheduler-target-send").inputs.policy);
      assert.deepStrictEqual(
        granted.map((g) => [g.Sid, g.Action, g.Resource]),
        [
          ["StartSender", "states:StartExecution", SENDER_ARN],
          ["DeadLetter", "sqs:SendMessage", granted[1].Resource],
        ],
      );
    }
  });

  it("journeys go through the same door: the handler's schedules start the sender, and their invocations are capped", async () => {
    const fn = only(stack, "aws:lambda/function:Function", "journeys-function").inputs;
    const enrolment = JSON.parse(fn.environment.variables.SENDTIME_ENROLMENT);
    assert.strictEqual(enrolment.target.senderArn, SENDER_ARN);
    const row = (step: number, hour: string) => ({
      schedule_name: `ann-${step}`,
      schedule_expression: `at(2026-12-01T${hour}:00)`,
      timezone: "UTC",
      email: "ann@example.com",
      template: `onboarding-${step}`,
      template_data: { step: String(step) },
      recipient_id: "ann",
      step,
      variant: null,
    });
    // What the deployed handler creates (infra/core/journeys/journeys.ts calls this with the function's enrolment).
    const requests = [row(1, "09:00"), row(2, "10:00"), row(3, "11:00")].map((r) =>
      createScheduleRequest(enrolment.target, "onboarding", enrolment.windowMinutes, r),
    );
    for (const r of requests) assert.strictEqual(r.Target.Arn, SENDER_ARN);
    const run = senderRun(stack);
    for (const r of requests) await run.invoke(r).catch((e) => assert.fail(`${e}: ${JSON.stringify(run.deadLetters)}`));
    // A cap of 2 a day: the third journey mail is capped; each went by SendEmail with SES's list management.
    assert.deepStrictEqual(
      run.sent.map(([action, e]) => [action, e.Content.Template.TemplateName, e.ListManagementOptions?.TopicName]),
      [
        ["sendEmail", "onboarding-1", "campaigns"],
        ["sendEmail", "onboarding-2", "campaigns"],
      ],
    );
    assert.deepStrictEqual(run.sent[0][1].EmailTags[0], { Name: "campaign", Value: "onboarding" });
  });

  it("end to end: the fan-out schedules the sender; Scheduler's invocations of it are admitted, capped and sent once", async () => {
    const fanOut = JSON.parse(stateMachine(stack, "fanout").definition);
    // 09:00, 10:00 and 11:00 UTC (the hour padded to two digits: "T010:00" is no time at all).
    const hour = (i: number) => String(9 + i).padStart(2, "0");
    const rows: PlanRow[] = ["spring", "summer", "autumn"].map((c, i) => ({
      schedule_name: `ann-${i + 1}`,
      send_at: `2026-12-01T${hour(i)}:00:00`,
      timezone: "UTC",
      email: "ann@example.com",
      template: c,
      template_data: { step: String(i + 1) },
      recipient_id: "ann",
      step: i + 1,
      utc: `2026-12-01T${hour(i)}:00:00.000Z`,
      variant: null,
      schedule_expression: `at(2026-12-01T${hour(i)}:00:00)`,
    }));
    const input: FanOutInput = {
      campaign_id: "spring",
      plan_bucket: "b",
      plan_key: "plans/spring/x.jsonl",
      window_minutes: 5,
      campaign_tag: "spring",
    };
    const created: any[] = [];
    runStateMachine(fanOut, input, {
      getObject: () => rows.map((r) => JSON.stringify(r)).join("\n"),
      sdk: (_s, action, params) => (action === "createSchedule" ? created.push(params) : undefined, {}),
    });
    assert.strictEqual(created.length, 3);
    for (const c of created) assert.strictEqual(c.Target.Arn, SENDER_ARN);
    const run = senderRun(stack);
    for (const c of created) await run.invoke(c);
    const repeat = await run.invoke(created[0]); // Scheduler invoking the first occurrence again
    assert.deepStrictEqual(repeat.output, { repeat: true, entries: 1 });
    assert.deepStrictEqual(
      run.sent.map(([, e]) => [e.Content.Template.TemplateName, e.EmailTags.map((t: any) => t.Value).join("/")]),
      [
        ["spring", "spring/1"],
        ["summer", "spring/2"],
      ],
    );
    assert.strictEqual(run.cap!.items.get("ann@example.com#2026-12-01")!.sends.N, "2");
  });
});
