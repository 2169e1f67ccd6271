/**
 * SES's own opt-outs into the opt-out table, in the stack under Pulumi mocks: the configuration set publishes
 * SUBSCRIPTION events to the default EventBridge bus, a rule for the stack's contact list invokes the recorder
 * (the unsubscribe bundle's second entry point), failures are retried and kept in a queue with an alarm, and the
 * recorder's role is evaluated request by request with the independent IAM evaluator.
 */
import * as assert from "assert";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { enrolmentTargetFailureHandling } from "../../policy/events";
import { sesOptOutRecorderRoleMinimal } from "../../policy/opt-out-events";
import { expectDecision } from "../helpers/iam-evaluator";
import { all, inlineStatements, only, renderWith } from "../helpers/stack";
import { assertNoStackViolations, stackResource } from "../policy/util";

const ACCOUNT = "123456789012";

describe("SES opt-outs into the opt-out table, in the stack under Pulumi mocks", () => {
  let stack: RenderedStack;
  before(async () => {
    stack = await renderWith();
  });
  const fn = () => only(stack, "aws:lambda/function:Function", "ses-opt-outs-function");
  const queue = () => only(stack, "aws:sqs/queue:Queue", "ses-opt-outs-dlq");
  const table = () => only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs");

  it("the configuration set publishes SUBSCRIPTION events to the default bus (the only bus SES publishes to)", () => {
    const d = only(
      stack,
      "aws:sesv2/configurationSetEventDestination:ConfigurationSetEventDestination",
      "ses-opt-outs-events",
    );
    const set = only(stack, "aws:sesv2/configurationSet:ConfigurationSet", "sender-config");
    assert.strictEqual(d.inputs.configurationSetName, set.outputs.configurationSetName);
    assert.deepStrictEqual(d.inputs.eventDestination, {
      enabled: true,
      matchingEventTypes: ["SUBSCRIPTION"],
      eventBridgeDestination: { eventBusArn: `arn:aws:events:us-east-1:${ACCOUNT}:event-bus/default` },
    });
  });

  it("a rule for the stack's contact list's Email Subscribed events invokes the recorder, with retries and a dead-letter queue", () => {
    const rule = only(stack, "aws:cloudwatch/eventRule:EventRule", "ses-opt-outs-rule");
    assert.strictEqual(rule.inputs.eventBusName, "default");
    assert.deepStrictEqual(JSON.parse(rule.inputs.eventPattern), {
      source: ["aws.ses"],
      "detail-type": ["Email Subscribed"],
      detail: { subscription: { contactList: ["sendtime-dev"] } },
    });
    const target = only(stack, "aws:cloudwatch/eventTarget:EventTarget", "ses-opt-outs-target");
    assert.strictEqual(target.inputs.rule, rule.outputs.name);
    assert.strictEqual(target.inputs.arn, fn().outputs.arn);
    assert.deepStrictEqual(target.inputs.retryPolicy, { maximumEventAgeInSeconds: 86_400, maximumRetryAttempts: 185 });
    assert.strictEqual(target.inputs.deadLetterConfig.arn, queue().outputs.arn);
    const invoke = only(stack, "aws:lambda/permission:Permission", "ses-opt-outs-invoke");
    assert.deepStrictEqual(
      [invoke.inputs.principal, invoke.inputs.sourceArn, invoke.inputs.function],
      ["events.amazonaws.com", rule.outputs.arn, fn().outputs.name],
    );
    const config = only(
      stack,
      "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig",
      "ses-opt-outs-failures",
    );
    assert.strictEqual(config.inputs.maximumRetryAttempts, 2);
    assert.strictEqual(config.inputs.destinationConfig.onFailure.destination, queue().outputs.arn);
    const qp = only(stack, "aws:sqs/queuePolicy:QueuePolicy", "ses-opt-outs-dlq-policy");
    const [s] = JSON.parse(qp.inputs.policy).Statement;
    assert.deepStrictEqual(s.Condition, { ArnEquals: { "aws:SourceArn": [rule.outputs.arn] } });
    assert.strictEqual(stack.outputs.optOutEventsDeadLetterQueueUrl, queue().outputs.url);
  });

  it("the recorder is the unsubscribe bundle's second entry point, configured with the list, topic and table", () => {
    const unsubscribe = only(stack, "aws:lambda/function:Function", "unsubscribe-function");
    assert.strictEqual(fn().inputs.handler, "index.sesOptOutHandler");
    assert.strictEqual(unsubscribe.inputs.handler, "index.handler");
    assert.deepStrictEqual(JSON.parse(fn().inputs.environment.variables.SENDTIME_SES_OPT_OUTS), {
      contactListName: "sendtime-dev",
      topicName: "campaigns",
      optOutTable: table().outputs.name,
    });
    assert.strictEqual(fn().inputs.reservedConcurrentExecutions, undefined, "not behind the endpoint's concurrency");
    assert.strictEqual(all(stack, "aws:lambda/functionUrl:FunctionUrl").length, 1, "no URL of its own");
  });

  it("its role records in the opt-out table, keeps failed events and logs: nothing else (no SES, no read, no delete)", () => {
    const r = inlineStatements(stack, "ses-opt-outs-role");
    const t = table().outputs.arn;
    const dlq = queue().outputs.arn;
    const logs = only(stack, "aws:cloudwatch/logGroup:LogGroup", "ses-opt-outs-logs").outputs.arn;
    expectDecision(r, "Allow", [
      { action: "dynamodb:UpdateItem", resource: t },
      { action: "sqs:SendMessage", resource: dlq },
      { action: "logs:PutLogEvents", resource: `${logs}:log-stream:x` },
    ]);
    expectDecision(r, "Deny", [
      { action: "dynamodb:GetItem", resource: t },
      { action: "dynamodb:DeleteItem", resource: t },
      { action: "dynamodb:UpdateItem", resource: t + "-other" },
      {
        action: "dynamodb:UpdateItem",
        resource: only(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger").outputs.arn,
      },
      { action: "ses:UpdateContact", resource: `arn:aws:ses:us-east-1:${ACCOUNT}:contact-list/sendtime-dev` },
      { action: "ses:SendEmail", resource: `arn:aws:ses:us-east-1:${ACCOUNT}:identity/example.com` },
      { action: "sqs:SendMessage", resource: only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn },
    ]);
  });

  it("an alarm fires on any message in its dead-letter queue", () => {
    const alarm = all(stack, "aws:cloudwatch/metricAlarm:MetricAlarm").find(
      (a) => a.inputs.dimensions?.QueueName === queue().outputs.name,
    );
    assert.ok(alarm, "an alarm on the recorder's queue");
    assert.strictEqual(alarm!.inputs.metricName, "ApproximateNumberOfMessagesVisible");
    assert.strictEqual(alarm!.inputs.threshold, 0);
  });

  it("the pack passes it: its rule target and function keep failures, its role is minimal", async () => {
    const resources = stack.resources.map((r) => stackResource(r.type, r.name, { ...r.inputs, ...r.outputs }));
    await assertNoStackViolations(enrolmentTargetFailureHandling, resources);
    await assertNoStackViolations(sesOptOutRecorderRoleMinimal, resources);
  });

  it("without sendtime:unsubscribe* there is none of it", async () => {
    const bare = await renderWith({ unsubscribeContactList: undefined, unsubscribeTopic: undefined });
    assert.strictEqual(
      bare.resources.filter((r) => r.name.startsWith("ses-opt-outs")).length,
      0,
      "no recorder, rule, queue or event destination",
    );
    assert.strictEqual(bare.outputs.optOutEventsDeadLetterQueueUrl, undefined);
    assert.strictEqual(bare.outputs.contactListName, undefined);
    assert.strictEqual(bare.outputs.unsubscribeTopic, undefined);
    assert.strictEqual(stack.outputs.contactListName, "sendtime-dev");
    assert.strictEqual(stack.outputs.unsubscribeTopic, "campaigns");
  });
});
