/**
 * Every queue of the stack accepts messages only from the stack's own writers (issue 31: the send dead-letter queue
 * had no policy, so any principal of the account allowed sqs:SendMessage could plant a dead letter for redrive).
 * Each rendered queue policy is evaluated by the tests' own IAM evaluator (tests/helpers/iam-evaluator.ts), with each
 * caller's request context written by hand as AWS builds it: a role's call carries aws:PrincipalArn (the role's
 * ARN); EventBridge delivering a rule's dead letter carries aws:SourceArn (the rule's ARN) and no aws:PrincipalArn.
 * The writers of each queue are listed here by hand.
 */
import * as assert from "assert";
import { evaluateResourcePolicy, IamStatement } from "../helpers/iam-evaluator";
import { all, inlineStatements, only, renderShipped, renderWith } from "../helpers/stack";
import { evaluate } from "../helpers/iam-evaluator";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";

const ACCOUNT = "123456789012";
const INTRUDERS = [`arn:aws:iam::${ACCOUNT}:user/intruder`, `arn:aws:iam::${ACCOUNT}:role/ops-admin`];

/** The queue's one policy (by its URL), as statements. */
function policyOf(stack: RenderedStack, queueName: string): IamStatement[] {
  const queue = only(stack, "aws:sqs/queue:Queue", queueName);
  const policies = all(stack, "aws:sqs/queuePolicy:QueuePolicy").filter((p) => p.inputs.queueUrl === queue.outputs.url);
  assert.strictEqual(policies.length, 1, `${queueName}: one policy`);
  return JSON.parse(policies[0].inputs.policy).Statement;
}

const arn = (stack: RenderedStack, type: string, name: string) => only(stack, type, name).outputs.arn as string;
const send = (queueArn: string, context: Record<string, string>) => ({
  action: "sqs:SendMessage",
  resource: queueArn,
  context: { "aws:SourceAccount": ACCOUNT, ...context },
});

/** A queue, the roles that write it, and the rules whose targets dead-letter into it. */
function expectOnlyWriters(stack: RenderedStack, queueName: string, roleNames: string[], ruleNames: string[]) {
  const queueArn = arn(stack, "aws:sqs/queue:Queue", queueName);
  const policy = policyOf(stack, queueName);
  for (const intruder of INTRUDERS)
    assert.strictEqual(
      evaluateResourcePolicy(policy, { role: intruder }, send(queueArn, { "aws:PrincipalArn": intruder })),
      "ExplicitDeny",
      `${queueName}: ${intruder}`,
    );
  for (const name of roleNames) {
    const roleArn = arn(stack, "aws:iam/role:Role", name);
    const request = send(queueArn, { "aws:PrincipalArn": roleArn });
    // Same account: the role's own policy allows it, and the queue's policy does not deny it.
    assert.notStrictEqual(
      evaluateResourcePolicy(policy, { role: roleArn }, request),
      "ExplicitDeny",
      `${queueName}: ${name}`,
    );
    assert.strictEqual(evaluate(inlineStatements(stack, `${name}`), request), "Allow", `${name} sends to ${queueName}`);
  }
  const rules = all(stack, "aws:cloudwatch/eventRule:EventRule");
  for (const rule of rules) {
    const decision = evaluateResourcePolicy(
      policy,
      { service: "events.amazonaws.com" },
      send(queueArn, { "aws:SourceArn": rule.outputs.arn }),
    );
    assert.strictEqual(
      decision === "Allow",
      ruleNames.includes(rule.name),
      `${queueName}: EventBridge for ${rule.name}`,
    );
  }
  // The stack's other roles, even if a policy of theirs were widened to the queue, are denied by the queue's policy.
  for (const role of all(stack, "aws:iam/role:Role").filter((r) => !roleNames.includes(r.name)))
    assert.strictEqual(
      evaluateResourcePolicy(
        policy,
        { role: role.outputs.arn },
        send(queueArn, { "aws:PrincipalArn": role.outputs.arn }),
      ),
      "ExplicitDeny",
      `${queueName}: ${role.name}`,
    );
}

const SEND_WRITERS = ["scheduler-target-role", "scheduler-target-housekeeping-role", "bulk-sender-role"];

describe("queue policies: every queue accepts messages only from the stack's writers (issue 31)", () => {
  it("the example config: the send DLQ (Scheduler's roles, the sender), the journeys' and the recorder's", async () => {
    const stack = await renderWith();
    assert.deepStrictEqual(
      all(stack, "aws:sqs/queue:Queue")
        .map((q) => q.name)
        .sort(),
      ["guardrails-dlq", "journeys-dlq", "scheduler-target-dlq", "ses-opt-outs-dlq"],
    );
    // EventBridge writes it for the guardrails' two rules, Scheduler as the clean-up role for the alarm deletions.
    expectOnlyWriters(
      stack,
      "guardrails-dlq",
      ["guardrails-cleanup-role"],
      ["guardrails-alarms", "guardrails-launches"],
    );
    expectOnlyWriters(stack, "scheduler-target-dlq", SEND_WRITERS, []);
    expectOnlyWriters(
      stack,
      "journeys-dlq",
      ["journeys-role"],
      ["journeys-onboarding-trigger", "journeys-onboarding-exit"],
    );
    expectOnlyWriters(stack, "ses-opt-outs-dlq", ["ses-opt-outs-role"], ["ses-opt-outs-rule"]);
  });

  it("prod (a frequency cap): the same writers, the sender admitting entries itself", async () => {
    const stack = await renderShipped("prod");
    expectOnlyWriters(stack, "scheduler-target-dlq", SEND_WRITERS, []);
    expectOnlyWriters(stack, "ses-opt-outs-dlq", ["ses-opt-outs-role"], ["ses-opt-outs-rule"]);
  });

  it("the minimal dev stack: its one queue has its policy", async () => {
    const stack = await renderShipped("dev");
    assert.deepStrictEqual(
      all(stack, "aws:sqs/queue:Queue").map((q) => q.name),
      ["scheduler-target-dlq", "guardrails-dlq"],
    );
    expectOnlyWriters(stack, "scheduler-target-dlq", SEND_WRITERS, []);
  });
});
