import * as assert from "assert";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { FanOutInput, PlanRow } from "../../infra/rules/fanout-definition";
import { createScheduleRequest } from "../../infra/rules/schedule-request";
import { runStateMachine, StatesError } from "../helpers/asl-interpreter";
import { FakeTable, runJsonataMachine } from "../helpers/jsonata-interpreter";
import { all, only, renderWith } from "../helpers/stack";

const aslValidator = require("asl-validator");

const statements = (policyJson: string) => JSON.parse(policyJson).Statement as any[];
const GATE_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-gate-dev";
const CAP = '{"max": 2, "per": "day"}';

const stateMachine = (stack: RenderedStack, name: string) =>
  only(stack, "aws:sfn/stateMachine:StateMachine", name).inputs;

describe("frequency cap (sendtime:frequencyCap) under Pulumi mocks", () => {
  let stack: RenderedStack;
  before(async () => {
    stack = await renderWith({ frequencyCap: CAP });
  });

  it("without it: no gate, no gate table (only the unsubscribe endpoint's opt-outs and the ledger), schedules call SES directly", async () => {
    const plain = await renderWith();
    assert.deepStrictEqual(
      all(plain, "aws:dynamodb/table:Table").map((t) => t.name),
      ["unsubscribe-opt-outs", "ledger"],
    );
    assert.deepStrictEqual(
      all(plain, "aws:sfn/stateMachine:StateMachine").map((m) => m.name),
      ["bulk-sender", "fanout"],
    );
    assert.strictEqual(plain.outputs.sendGateArn, undefined);
  });

  it("adds an on-demand table, encrypted, recoverable, expiring old periods", () => {
    const table = only(stack, "aws:dynamodb/table:Table", "send-gate-sends").inputs;
    assert.strictEqual(table.billingMode, "PAY_PER_REQUEST");
    assert.strictEqual(table.hashKey, "pk");
    assert.deepStrictEqual(table.ttl, { attributeName: "expires_at", enabled: true });
    assert.deepStrictEqual(table.serverSideEncryption, { enabled: true });
    assert.deepStrictEqual(table.pointInTimeRecovery, { enabled: true });
  });

  it("adds the EXPRESS gate; its definition passes asl-validator and names the table and the dead-letter queue", () => {
    const gate = stateMachine(stack, "send-gate");
    assert.strictEqual(gate.type, "EXPRESS");
    assert.strictEqual(gate.name, "sendtime-gate-dev");
    assert.strictEqual(stack.outputs.sendGateArn, GATE_ARN);
    const def = JSON.parse(gate.definition);
    assert.deepStrictEqual(aslValidator(structuredClone(def), { checkPaths: true, checkArn: true }).errors, []);
    assert.strictEqual(
      def.States.Admit.Arguments.TableName,
      only(stack, "aws:dynamodb/table:Table", "send-gate-sends").inputs.name ?? def.States.Admit.Arguments.TableName,
    );
    assert.strictEqual(def.States.Admit.Arguments.ExpressionAttributeValues[":max"].N, "2");
    assert.strictEqual(def.States.DeadLetter.Arguments.QueueUrl, stack.outputs.deadLetterQueueUrl);
  });

  it("the gate's role: UpdateItem/GetItem on its table, SES on the identity, its own metric, the dead-letter queue", () => {
    const table = only(stack, "aws:dynamodb/table:Table", "send-gate-sends");
    const s = statements(only(stack, "aws:iam/rolePolicy:RolePolicy", "send-gate-permissions").inputs.policy);
    assert.deepStrictEqual(
      s.map((x) => [x.Sid, x.Action]),
      [
        ["CountSends", ["dynamodb:UpdateItem", "dynamodb:GetItem"]],
        ["SendCampaignEmail", "ses:SendEmail"],
        ["CountCappedSends", "cloudwatch:PutMetricData"],
        ["DeadLetter", "sqs:SendMessage"],
      ],
    );
    const tableName = JSON.parse(stateMachine(stack, "send-gate").definition).States.Admit.Arguments.TableName;
    assert.strictEqual(s[0].Resource, `arn:aws:dynamodb:us-east-1:123456789012:table/${tableName}`);
    assert.ok(table.urn);
    assert.ok(s[1].Resource.includes("arn:aws:ses:us-east-1:123456789012:identity/mail.example.com"));
    assert.deepStrictEqual(s[2].Condition, { StringEquals: { "cloudwatch:namespace": "sendtime" } });
    const trust = statements(only(stack, "aws:iam/role:Role", "send-gate-role").inputs.assumeRolePolicy);
    assert.deepStrictEqual(trust[0].Principal, { Service: "states.amazonaws.com" });
  });

  it("Scheduler's role may then only start the gate and dead-letter, never call SES itself, with journeys or without", async () => {
    const campaignsOnly = await renderWith({ frequencyCap: CAP, journeys: undefined });
    for (const s of [campaignsOnly, stack]) {
      const granted = statements(only(s, "aws:iam/rolePolicy:RolePolicy", "scheduler-target-send").inputs.policy);
      assert.deepStrictEqual(granted[0], {
        Sid: "StartSendGate",
        Effect: "Allow",
        Action: "states:StartExecution",
        Resource: GATE_ARN,
      });
      assert.ok(!JSON.stringify(granted).includes("ses:"), JSON.stringify(granted));
    }
  });

  it("journeys go through the gate too: the handler's schedules start it, and their invocations are admitted and capped", async () => {
    const fn = only(stack, "aws:lambda/function:Function", "journeys-function").inputs;
    const enrolment = JSON.parse(fn.environment.variables.SENDTIME_ENROLMENT);
    assert.strictEqual(enrolment.target.sendGateArn, GATE_ARN);
    const gate = JSON.parse(stateMachine(stack, "send-gate").definition);
    const row = (step: number, hour: string) => ({
      schedule_name: `ann-${step}`,
      schedule_expression: `at(2026-12-01T${hour}:00:00)`,
      timezone: "UTC",
      email: "ann@example.com",
      template: `onboarding-${step}`,
      template_data: { step: String(step) },
      step,
      variant: null,
    });
    // What the deployed handler creates (infra/rules/journeys.ts calls this with the function's enrolment).
    const requests = [row(1, "09:00"), row(2, "10:00"), row(3, "11:00")].map((r) =>
      createScheduleRequest(enrolment.target, "onboarding", enrolment.windowMinutes, r),
    );
    for (const r of requests) assert.strictEqual(r.Target.Arn, GATE_ARN);
    const table = new FakeTable(gate.States.Admit.Arguments.TableName);
    const sent: any[] = [];
    const services = {
      call: (service: string, action: string, args: any) => {
        if (service === "dynamodb") return table.call(action, args);
        if (service === "sesv2") return (sent.push(args), { MessageId: "m" });
        if (service === "cloudwatch") return {};
        throw new StatesError("Unexpected", `${service}:${action}`);
      },
    };
    for (const r of requests) {
      const text = r.Target.Input.replace(
        "<aws.scheduler.schedule-arn>",
        `arn:aws:scheduler:us-east-1:123456789012:schedule/${r.GroupName}/${r.Name}`,
      ).replace("<aws.scheduler.scheduled-time>", `${r.ScheduleExpression.slice(3, -1)}Z`);
      await runJsonataMachine(gate, JSON.parse(text), services, { startTime: "2026-12-01T12:00:00Z" });
    }
    // A cap of 2 a day: the third journey mail is capped, and what was sent is the SendEmail the handler built.
    assert.deepStrictEqual(
      sent.map((e) => e.Content.Template.TemplateName),
      ["onboarding-1", "onboarding-2"],
    );
    assert.deepStrictEqual(sent[0], JSON.parse(requests[0].Target.Input).email);
    assert.deepStrictEqual(sent[0].EmailTags[0], { Name: "campaign", Value: "onboarding" });
  });

  it("end to end: the fan-out schedules the gate; Scheduler's invocation of it admits, caps and sends", async () => {
    const fanOut = JSON.parse(stateMachine(stack, "fanout").definition);
    const gate = JSON.parse(stateMachine(stack, "send-gate").definition);
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
    for (const c of created) assert.strictEqual(c.Target.Arn, GATE_ARN);

    // Scheduler fills in the context attributes of the target input when it invokes the gate
    const table = new FakeTable(gate.States.Admit.Arguments.TableName);
    const sent: any[] = [];
    const services = {
      call: (service: string, action: string, args: any) => {
        if (service === "dynamodb") return table.call(action, args);
        if (service === "sesv2") return (sent.push(args), { MessageId: "m" });
        if (service === "cloudwatch") return {};
        throw new StatesError("Unexpected", `${service}:${action}`);
      },
    };
    const invoke = (c: any) => {
      const text = c.Target.Input.replace(
        "<aws.scheduler.schedule-arn>",
        `arn:aws:scheduler:us-east-1:123456789012:schedule/${c.GroupName}/${c.Name}`,
      ).replace("<aws.scheduler.scheduled-time>", `${c.ScheduleExpression.slice(3, -1)}Z`);
      return runJsonataMachine(gate, JSON.parse(text), services, { startTime: "2026-12-01T12:00:00Z" });
    };
    for (const c of created) await invoke(c);
    await invoke(created[0]); // Scheduler retrying the first invocation
    assert.deepStrictEqual(
      sent.map((e) => [e.Content.Template.TemplateName, e.EmailTags.map((t: any) => t.Value).join("/")]),
      [
        ["spring", "spring/1"],
        ["summer", "spring/2"],
      ],
    );
    assert.strictEqual(table.items.get("ann@example.com#2026-12-01")!.sends.N, "2");
  });
});
