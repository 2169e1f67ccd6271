/**
 * queue-policy-stack-only (issue 31): every SQS queue of the stack has one policy that accepts sqs:SendMessage only
 * from the stack's own writers — it denies every other principal, excepting only the stack's roles (aws:PrincipalArn)
 * and services acting for a named resource of the account (aws:SourceArn, aws:SourceAccount); its Allows name
 * services with those conditions or the stack's roles; and it locks out none of the stack's writers. Checked on the
 * rendered stacks, changed one way at a time; expected messages written by hand from the rendered names.
 */
import { PolicyResource } from "@pulumi/policy";
import { queuePolicyStackOnly } from "../../policy/queues";
import { renderShipped, renderWith } from "../helpers/stack";
import { assertHasStackViolation, assertNoStackViolations, doc, named, packResources, stackResource } from "./util";

const QUEUE = "aws:sqs/queue:Queue";
const QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy";
const urnOf = (type: string, name: string) => `urn:pulumi:test::sendtime::${type}::${name}`;

let stack: PolicyResource[];
const arnOf = (type: string, name: string) => named(stack, type, name).props.arn as string;
const dlq = () => arnOf(QUEUE, "scheduler-target-dlq");

/** The stack with the policy `name`'s statements replaced by `change(statements)` (or the policy removed). */
function withPolicy(name: string, change: ((statements: any[]) => object[]) | "removed"): PolicyResource[] {
  return stack.flatMap((r) => {
    if (r.type !== QUEUE_POLICY || r.name !== name) return [r];
    if (change === "removed") return [];
    const statements = change(JSON.parse(r.props.policy).Statement);
    return [stackResource(r.type, r.name, { ...r.props, policy: doc(...statements) })];
  });
}
const deny = (Condition: object) => ({
  Sid: "OnlyTheStackWrites",
  Effect: "Deny",
  Principal: "*",
  Action: "sqs:SendMessage",
  Resource: dlq(),
  Condition,
});
const roles = (...names: string[]) => names.map((n) => arnOf("aws:iam/role:Role", n));
const WRITERS = ["scheduler-target-role", "scheduler-target-housekeeping-role", "bulk-sender-role"];

describe("queue-policy-stack-only: every queue accepts messages only from the stack's writers", () => {
  before(async () => {
    stack = packResources(await renderWith());
  });

  it("every queue of the rendered stacks (example config, prod, the minimal dev stack) passes", async () => {
    await assertNoStackViolations(queuePolicyStackOnly, stack);
    await assertNoStackViolations(queuePolicyStackOnly, packResources(await renderShipped("prod")));
    await assertNoStackViolations(queuePolicyStackOnly, packResources(await renderShipped("dev")));
  });

  it("a queue without a policy is a violation, on the queue", async () => {
    await assertHasStackViolation(queuePolicyStackOnly, withPolicy("scheduler-target-dlq-policy", "removed"), {
      message: `Queue "scheduler-target-dlq" has no queue policy, so any principal of the account allowed sqs:SendMessage can put a message in it: add one aws.sqs.QueuePolicy that denies sqs:SendMessage to every principal but the stack's roles that write it`,
      urn: urnOf(QUEUE, "scheduler-target-dlq"),
    });
  });

  it("a policy without the Deny (Allows alone) is a violation: the account's other principals could still write", async () => {
    await assertHasStackViolation(
      queuePolicyStackOnly,
      withPolicy("journeys-dlq-policy", (s) => s.filter((x) => x.Effect === "Allow")),
      {
        message: `QueuePolicy "journeys-dlq-policy" (queue "journeys-dlq") has no statement that denies sqs:SendMessage to every other principal`,
        urn: urnOf(QUEUE_POLICY, "journeys-dlq-policy"),
      },
    );
  });

  it("an Allow to everyone, to a role not of the stack, or to a service without SourceArn/SourceAccount is a violation", async () => {
    const cases: [unknown, string][] = [
      [
        { AWS: "*" },
        `lets {"AWS":"*"} send to it: name a service (with aws:SourceArn or aws:SourceAccount) or the stack's roles`,
      ],
      ["*", `lets "*" send to it`],
      [
        { AWS: "arn:aws:iam::123456789012:role/ops-admin" },
        `lets "arn:aws:iam::123456789012:role/ops-admin" send to it, which is not a role of this stack`,
      ],
      [
        { Service: "sns.amazonaws.com" },
        `lets {"Service":"sns.amazonaws.com"} send to it without aws:SourceArn or aws:SourceAccount naming one account`,
      ],
    ];
    for (const [Principal, message] of cases)
      await assertHasStackViolation(
        queuePolicyStackOnly,
        withPolicy("scheduler-target-dlq-policy", (s) => [
          { Sid: "Planted", Effect: "Allow", Principal, Action: "sqs:SendMessage", Resource: dlq() },
          ...s,
        ]),
        {
          message: `QueuePolicy "scheduler-target-dlq-policy" (queue "scheduler-target-dlq") statement "Planted" ${message}`,
        },
      );
  });

  it("a Deny whose exceptions name a role not of the stack, a wildcard, or hold only on another condition is a violation", async () => {
    const cases: [object, string][] = [
      [
        { ArnNotEquals: { "aws:PrincipalArn": [...roles(...WRITERS), "arn:aws:iam::123456789012:role/ops-admin"] } },
        `excepts aws:PrincipalArn "arn:aws:iam::123456789012:role/ops-admin", which is not a role of this stack`,
      ],
      [
        { ArnNotLike: { "aws:PrincipalArn": "arn:aws:iam::123456789012:role/*" } },
        `excepts aws:PrincipalArn "arn:aws:iam::123456789012:role/*", which is not a role of this stack`,
      ],
      [
        { ArnNotEquals: { "aws:PrincipalArn": roles(...WRITERS), "aws:SourceArn": "arn:aws:sns:*:*:*" } },
        `excepts aws:SourceArn "arn:aws:sns:*:*:*", which does not name one resource of one account`,
      ],
      [
        { ArnNotEquals: { "aws:PrincipalArn": roles(...WRITERS) }, Bool: { "aws:SecureTransport": "false" } },
        `denies only when Bool aws:SecureTransport also holds: a Deny of other writers may except only by aws:PrincipalArn, aws:SourceArn or aws:SourceAccount`,
      ],
    ];
    for (const [Condition, message] of cases)
      await assertHasStackViolation(
        queuePolicyStackOnly,
        withPolicy("scheduler-target-dlq-policy", () => [deny(Condition)]),
        {
          message: `QueuePolicy "scheduler-target-dlq-policy" (queue "scheduler-target-dlq") statement "OnlyTheStackWrites" ${message}`,
        },
      );
  });

  it("a writer the Deny locks out is a violation: a role whose own policy sends to the queue, a rule that dead-letters into it", async () => {
    await assertHasStackViolation(
      queuePolicyStackOnly,
      withPolicy("scheduler-target-dlq-policy", () => [
        deny({
          ArnNotEquals: { "aws:PrincipalArn": roles("scheduler-target-role", "scheduler-target-housekeeping-role") },
        }),
      ]),
      {
        message: `QueuePolicy "scheduler-target-dlq-policy" (queue "scheduler-target-dlq") denies Role "bulk-sender-role", whose own policy allows it to send to the queue: add ${arnOf("aws:iam/role:Role", "bulk-sender-role")} to the Deny's aws:PrincipalArn`,
      },
    );
    const rule = arnOf("aws:cloudwatch/eventRule:EventRule", "journeys-onboarding-exit");
    await assertHasStackViolation(
      queuePolicyStackOnly,
      withPolicy("journeys-dlq-policy", (s) =>
        s.map((x) => ({
          ...x,
          Condition: JSON.parse(JSON.stringify(x.Condition).replace(`,"${rule}"`, "")),
        })),
      ),
      {
        message: `QueuePolicy "journeys-dlq-policy" (queue "journeys-dlq") does not let EventBridge dead-letter for rule "journeys-onboarding-exit" (EventTarget "journeys-onboarding-exit-target"): allow events.amazonaws.com with aws:SourceArn ${rule}, and except it from the Deny`,
      },
    );
  });

  it("two policies for one queue are a violation (SQS keeps one); a queue's own policy counts as its one", async () => {
    const extra = named(stack, QUEUE_POLICY, "scheduler-target-dlq-policy");
    await assertHasStackViolation(
      queuePolicyStackOnly,
      [...stack, stackResource(QUEUE_POLICY, "second", { ...extra.props })],
      {
        message: `Queue "scheduler-target-dlq" has 2 queue policies (QueuePolicy "scheduler-target-dlq-policy", QueuePolicy "second"): SQS keeps one, the last written: make them one`,
      },
    );
    const inline = withPolicy("scheduler-target-dlq-policy", "removed").map((r) =>
      r.name === "scheduler-target-dlq" ? stackResource(r.type, r.name, { ...r.props, policy: extra.props.policy }) : r,
    );
    await assertNoStackViolations(queuePolicyStackOnly, inline);
  });
});
