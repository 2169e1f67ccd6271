/**
 * Every role holds what its code calls, and no more: the stack's rendered role policies, evaluated request by request
 * with an independent IAM evaluator (tests/helpers/iam-evaluator.ts). Each role gets the requests its code makes
 * (allowed) and the ones a mistake or an attacker would make (denied).
 */
import * as assert from "assert";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { evaluate, expectDecision, IamStatement, resourceMatches } from "../helpers/iam-evaluator";
import { all, inlineStatements, only, renderWith } from "../helpers/stack";

const CAP = '{"max": 2, "per": "day"}';
const ACCOUNT = "arn:aws:scheduler:us-east-1:123456789012";
const schedule = (group: string, name: string) => `${ACCOUNT}:schedule/${group}/${name}`;
const group = (name: string) => `${ACCOUNT}:schedule-group/${name}`;
const SES = "arn:aws:ses:us-east-1:123456789012";
const SCHEDULER = { "iam:PassedToService": "scheduler.amazonaws.com" };

/** A role's ARN and the statements of every inline policy attached to it (the stack attaches no managed policy). */
function role(stack: RenderedStack, name: string): { arn: string; statements: IamStatement[] } {
  const r = only(stack, "aws:iam/role:Role", name);
  assert.deepStrictEqual(r.inputs.managedPolicyArns ?? [], []);
  const statements = inlineStatements(stack, name);
  assert.ok(statements.length, `role ${name} has a policy`);
  return { arn: r.outputs.arn, statements };
}

describe("roles hold what their code calls (IAM evaluation of the rendered stack)", () => {
  let capped: RenderedStack;
  let plain: RenderedStack;
  before(async () => {
    capped = await renderWith({ frequencyCap: CAP });
    plain = await renderWith();
  });

  it("the evaluator: Deny wins, wildcards stay within ARN segments but span the resource, missing condition keys fail", () => {
    const allow: IamStatement = {
      Effect: "Allow",
      Action: "scheduler:Get*",
      Resource: `${ACCOUNT}:schedule/campaign-*/*`,
    };
    assert.strictEqual(
      evaluate([allow], { action: "Scheduler:GetSchedule", resource: schedule("campaign-a", "x") }),
      "Allow",
    );
    assert.strictEqual(
      evaluate([allow], { action: "scheduler:CreateSchedule", resource: schedule("campaign-a", "x") }),
      "ImplicitDeny",
    );
    assert.strictEqual(
      evaluate([allow], { action: "scheduler:GetSchedule", resource: schedule("default", "x") }),
      "ImplicitDeny",
    );
    const deny: IamStatement = { Effect: "Deny", NotAction: "scheduler:GetSchedule", Resource: "*" };
    assert.strictEqual(
      evaluate([allow, deny], { action: "scheduler:GetScheduleGroup", resource: schedule("campaign-a", "x") }),
      "ExplicitDeny",
    );
    assert.ok(!resourceMatches("arn:aws:scheduler:*:123456789012:x", "arn:aws:scheduler:us-east-1:a:b:123456789012:x"));
    assert.ok(
      resourceMatches("arn:aws:logs:us-east-1:1:log-group:/a:*", "arn:aws:logs:us-east-1:1:log-group:/a:log-stream:b"),
    );
    const pass: IamStatement = {
      Effect: "Allow",
      Action: "iam:PassRole",
      Resource: "arn:aws:iam::1:role/t",
      Condition: { StringEquals: SCHEDULER },
    };
    assert.strictEqual(evaluate([pass], { action: "iam:PassRole", resource: "arn:aws:iam::1:role/t" }), "ImplicitDeny");
    assert.strictEqual(
      evaluate([pass], { action: "iam:PassRole", resource: "arn:aws:iam::1:role/t", context: SCHEDULER }),
      "Allow",
    );
    assert.throws(() =>
      evaluate([{ ...pass, Condition: { NumericLessThan: { x: "1" } } }], {
        action: "iam:PassRole",
        resource: "arn:aws:iam::1:role/t",
        context: { x: "0" },
      }),
    );
    // ForAllValues: every value of the request's set matches; an absent key holds (IAM's rule, which is why such a
    // grant names only actions that always carry the key).
    const keyed: IamStatement = {
      Effect: "Allow",
      Action: "dynamodb:PutItem",
      Resource: "arn:aws:dynamodb:us-east-1:1:table/t",
      Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["enr#a#*"] } },
    };
    const put = (keys?: string[]) =>
      evaluate([keyed], {
        action: "dynamodb:PutItem",
        resource: "arn:aws:dynamodb:us-east-1:1:table/t",
        ...(keys ? { context: { "dynamodb:LeadingKeys": keys } } : {}),
      });
    assert.deepStrictEqual(
      [put(["enr#a#u#e"]), put(["occ#x"]), put(["enr#a#u", "enr#b#u"]), put(["enr#ab#u"]), put()],
      ["Allow", "ImplicitDeny", "ImplicitDeny", "ImplicitDeny", "Allow"],
    );
  });

  it("the journeys role writes only its journeys' enrolments in the ledger: no occurrence, no campaign state, no other table", () => {
    for (const stack of [capped, plain]) {
      const journeys = role(stack, "journeys-role");
      const ledger = only(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger").outputs.arn as string;
      const item = (action: string, key: string) => ({
        action,
        resource: ledger,
        context: { "dynamodb:LeadingKeys": [key] },
      });
      expectDecision(journeys.statements, "Allow", [
        item("dynamodb:PutItem", "enr#onboarding#u-42#6a7e8feb-b491-4cf7-a9f1-bf3703467718"),
        item("dynamodb:DeleteItem", "enr#onboarding#h.0123abcd#at.2026-03-10T18:05:02.000Z"),
      ]);
      const occurrence =
        "occ#arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/ann-1#2026-03-10T09:00:00Z";
      expectDecision(journeys.statements, "Deny", [
        // Claiming an occurrence or pausing a campaign would stop another campaign's sends.
        item("dynamodb:PutItem", occurrence),
        item("dynamodb:DeleteItem", occurrence),
        item("dynamodb:PutItem", "campaign#spring"),
        item("dynamodb:PutItem", "enr#winback#u-42#e1"),
        item("dynamodb:PutItem", "enr#onboarding2#u-42#e1"),
        item("dynamodb:UpdateItem", "enr#onboarding#u-42#e1"),
        item("dynamodb:GetItem", "enr#onboarding#u-42#e1"),
        { action: "dynamodb:Scan", resource: ledger },
        { action: "dynamodb:Query", resource: ledger },
        { action: "dynamodb:DeleteTable", resource: ledger },
      ]);
      // Every other table of the stack (the opt-outs, with a cap the gate's counts): nothing at all.
      const others = all(stack, "aws:dynamodb/table:Table").filter((t) => t.name !== "bulk-sender-ledger");
      assert.ok(others.length >= (stack === capped ? 2 : 1));
      for (const t of others)
        for (const action of ["dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem", "dynamodb:GetItem"])
          expectDecision(journeys.statements, "Deny", [
            { action, resource: t.outputs.arn, context: { "dynamodb:LeadingKeys": ["enr#onboarding#u-42#e1"] } },
          ]);
    }
  });

  it("the journeys role creates and deletes schedules only in its journeys' groups, and passes only a role that cannot delete groups", () => {
    const journeys = role(capped, "journeys-role");
    const send = role(capped, "scheduler-target-role");
    expectDecision(journeys.statements, "Allow", [
      { action: "scheduler:CreateSchedule", resource: schedule("campaign-onboarding", "ann-1") },
      { action: "scheduler:DeleteSchedule", resource: schedule("campaign-onboarding", "ann-3") },
      { action: "iam:PassRole", resource: send.arn, context: SCHEDULER },
    ]);
    const everyOtherRole = all(capped, "aws:iam/role:Role")
      .map((r) => r.outputs.arn as string)
      .filter((a) => a !== send.arn);
    expectDecision(journeys.statements, "Deny", [
      { action: "scheduler:CreateSchedule", resource: schedule("campaign-spring", "ann-1") },
      { action: "scheduler:DeleteSchedule", resource: schedule("campaign-spring", "ann-1") },
      { action: "scheduler:CreateSchedule", resource: schedule("campaign-onboarding2", "ann-1") },
      { action: "scheduler:DeleteSchedule", resource: schedule("campaign-spring", "sendtime.cleanup") },
      { action: "scheduler:DeleteScheduleGroup", resource: group("campaign-onboarding") },
      { action: "scheduler:UpdateSchedule", resource: schedule("campaign-onboarding", "ann-1") },
      { action: "iam:PassRole", resource: send.arn, context: { "iam:PassedToService": "lambda.amazonaws.com" } },
      ...everyOtherRole.map((arn) => ({ action: "iam:PassRole", resource: arn, context: SCHEDULER })),
    ]);
    // Every role the journeys may pass (of all the stack's roles) may not delete a schedule group.
    for (const r of all(capped, "aws:iam/role:Role")) {
      if (
        evaluate(journeys.statements, { action: "iam:PassRole", resource: r.outputs.arn, context: SCHEDULER }) !==
        "Allow"
      )
        continue;
      expectDecision(role(capped, r.name).statements, "Deny", [
        { action: "scheduler:DeleteScheduleGroup", resource: group("campaign-spring") },
      ]);
    }
  });

  it("the fan-out creates any campaign's schedules but reads and updates only the housekeeping schedule", () => {
    const fanOut = role(capped, "fanout-role");
    const send = role(capped, "scheduler-target-role");
    const housekeeping = role(capped, "scheduler-target-housekeeping-role");
    expectDecision(fanOut.statements, "Allow", [
      { action: "scheduler:CreateScheduleGroup", resource: group("campaign-spring") },
      { action: "scheduler:TagResource", resource: group("campaign-spring") },
      { action: "scheduler:CreateSchedule", resource: schedule("campaign-spring", "ann-1") },
      { action: "scheduler:CreateSchedule", resource: schedule("campaign-spring", "sendtime.cleanup") },
      { action: "scheduler:GetSchedule", resource: schedule("campaign-spring", "sendtime.cleanup") },
      { action: "scheduler:UpdateSchedule", resource: schedule("campaign-spring", "sendtime.cleanup") },
      { action: "iam:PassRole", resource: send.arn, context: SCHEDULER },
      { action: "iam:PassRole", resource: housekeeping.arn, context: SCHEDULER },
    ]);
    expectDecision(fanOut.statements, "Deny", [
      { action: "scheduler:GetSchedule", resource: schedule("campaign-spring", "ann-1") },
      { action: "scheduler:UpdateSchedule", resource: schedule("campaign-spring", "ann-1") },
      { action: "scheduler:UpdateSchedule", resource: schedule("campaign-spring", "sendtime.cleanup-1") },
      { action: "scheduler:DeleteSchedule", resource: schedule("campaign-spring", "ann-1") },
      { action: "scheduler:DeleteScheduleGroup", resource: group("campaign-spring") },
      { action: "scheduler:CreateSchedule", resource: schedule("default", "ann-1") },
      { action: "iam:PassRole", resource: role(capped, "journeys-role").arn, context: SCHEDULER },
      { action: "iam:PassRole", resource: send.arn, context: { "iam:PassedToService": "lambda.amazonaws.com" } },
    ]);
  });

  it("the scheduler role, with a cap or without, only starts the one sender and dead-letters: no SES, no group deletion", () => {
    for (const stack of [capped, plain]) {
      const send = role(stack, "scheduler-target-role");
      const dlq = only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn;
      expectDecision(send.statements, "Allow", [
        { action: "states:StartExecution", resource: stack.outputs.senderStateMachineArn as string },
        { action: "sqs:SendMessage", resource: dlq },
      ]);
      expectDecision(send.statements, "Deny", [
        { action: "ses:SendEmail", resource: `${SES}:identity/mail.example.com` },
        { action: "ses:SendEmail", resource: `${SES}:configuration-set/sendtime-dev` },
        { action: "ses:SendBulkEmail", resource: `${SES}:identity/mail.example.com` },
        { action: "scheduler:DeleteScheduleGroup", resource: group("campaign-spring") },
        { action: "states:StartExecution", resource: stack.outputs.stateMachineArn as string },
      ]);
    }
  });

  it("only the sender's role sends, as the stack's identity and with its templates", () => {
    const sender = role(plain, "bulk-sender-role");
    expectDecision(sender.statements, "Allow", [
      { action: "ses:SendEmail", resource: `${SES}:identity/mail.example.com` },
      { action: "ses:SendEmail", resource: `${SES}:template/onboarding-welcome` },
    ]);
    expectDecision(sender.statements, "Deny", [
      { action: "ses:SendEmail", resource: `${SES}:identity/other.example.com` },
      { action: "scheduler:DeleteScheduleGroup", resource: group("campaign-spring") },
    ]);
  });

  it("only the housekeeping role deletes groups — campaign groups only — and the journeys cannot pass it", () => {
    for (const stack of [capped, plain]) {
      const housekeeping = role(stack, "scheduler-target-housekeeping-role");
      expectDecision(housekeeping.statements, "Allow", [
        { action: "scheduler:DeleteScheduleGroup", resource: group("campaign-spring") },
        { action: "sqs:SendMessage", resource: only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn },
      ]);
      expectDecision(housekeeping.statements, "Deny", [
        { action: "scheduler:DeleteScheduleGroup", resource: group("default") },
        { action: "ses:SendEmail", resource: `${SES}:identity/mail.example.com` },
        {
          action: "states:StartExecution",
          resource: `arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev`,
        },
      ]);
      expectDecision(role(stack, "journeys-role").statements, "Deny", [
        { action: "iam:PassRole", resource: housekeeping.arn, context: SCHEDULER },
      ]);
      const deleters = all(stack, "aws:iam/role:Role").filter(
        (r) =>
          evaluate(role(stack, r.name).statements, {
            action: "scheduler:DeleteScheduleGroup",
            resource: group("campaign-spring"),
          }) === "Allow",
      );
      assert.deepStrictEqual(
        deleters.map((r) => r.name),
        ["scheduler-target-housekeeping-role"],
      );
    }
  });

  it("the housekeeping schedule the fan-out creates runs as the housekeeping role; recipients' schedules as the send role", () => {
    const definition = JSON.parse(only(capped, "aws:sfn/stateMachine:StateMachine", "fanout").inputs.definition);
    const cleanup = definition.States.ScheduleCleanup.Parameters.Target;
    assert.strictEqual(cleanup.RoleArn, role(capped, "scheduler-target-housekeeping-role").arn);
    assert.strictEqual(definition.States.MoveCleanup.Parameters.Target.RoleArn, cleanup.RoleArn);
    const create = definition.States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor.States.CreateSchedule;
    assert.strictEqual(create.Parameters.Target.RoleArn, role(capped, "scheduler-target-role").arn);
  });
});
