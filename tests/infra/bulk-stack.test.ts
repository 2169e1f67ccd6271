/**
 * Bulk sends in the stack under Pulumi mocks: the sender, the unsubscribe endpoint and its key, their outputs, and
 * their roles evaluated request by request with the independent IAM evaluator (tests/helpers/iam-evaluator.ts).
 */
import * as assert from "assert";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { expectDecision } from "../helpers/iam-evaluator";
import { all, definitionOf, inlineStatements, only, renderWith } from "../helpers/stack";

const aslValidator = require("asl-validator");

const CAP = '{"max": 2, "per": "day"}';
const ACCOUNT = "123456789012";
const SES = `arn:aws:ses:us-east-1:${ACCOUNT}`;
const SENDER_ARN = `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:sendtime-sender-dev`;

const sender = (stack: RenderedStack) => only(stack, "aws:sfn/stateMachine:StateMachine", "bulk-sender").inputs;

describe("bulk sends in the stack under Pulumi mocks", function () {
  // The suite's first render of the stack (loading @pulumi/aws, bundling the handlers), while npm test's tsc and eslint
  // run beside it: over 30 s on a busy 2-core machine, as for the other files that render it first.
  this.timeout(60_000);
  let stack: RenderedStack;
  let capped: RenderedStack;
  before(async () => {
    stack = await renderWith();
    capped = await renderWith({ frequencyCap: CAP });
  });

  it("an EXPRESS sender whose definition passes asl-validator and dead-letters to the stack's queue; the fan-out's bulk schedules start it", () => {
    const s = sender(stack);
    assert.strictEqual(s.type, "EXPRESS");
    assert.strictEqual(s.name, "sendtime-sender-dev");
    assert.strictEqual(stack.outputs.senderStateMachineArn, SENDER_ARN);
    const def = JSON.parse(s.definition);
    assert.deepStrictEqual(aslValidator(structuredClone(def), { checkPaths: true, checkArn: true }).errors, []);
    assert.strictEqual(
      def.States.Settle.ItemProcessor.States.DeadLetterEntry.Arguments.QueueUrl,
      stack.outputs.deadLetterQueueUrl,
    );
    assert.strictEqual(def.States.AdmitEntries, undefined, "no cap, no admission");
    const create =
      definitionOf(stack).States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor.States.CreateSchedule;
    assert.strictEqual(create.Parameters.Target.Arn, SENDER_ARN);
    assert.strictEqual(create.Parameters.Target.RoleArn, stack.outputs.schedulerRoleArn);
  });

  it("with a cap the sender admits entries against the cap's table", () => {
    const def = JSON.parse(sender(capped).definition);
    const table = only(capped, "aws:dynamodb/table:Table", "bulk-sender-sends").outputs.name;
    assert.strictEqual(def.States.AdmitEntries.ItemProcessor.States.AdmitEntry.Arguments.TableName, table);
    assert.strictEqual(
      def.States.AdmitEntries.ItemProcessor.States.AdmitEntry.Arguments.ExpressionAttributeValues[":max"].N,
      "2",
    );
  });

  it("the unsubscribe endpoint: a public function URL, reserved concurrency, its key in a SecureString parameter; outputs name both", () => {
    const url = only(stack, "aws:lambda/functionUrl:FunctionUrl");
    const fn = only(stack, "aws:lambda/function:Function", "unsubscribe-function");
    const key = only(stack, "aws:ssm/parameter:Parameter");
    assert.strictEqual(url.inputs.authorizationType, "NONE");
    assert.strictEqual(url.inputs.functionName, fn.outputs.name);
    assert.match(String(stack.outputs.unsubscribeUrl), /^https:\/\/[a-z0-9]+\.lambda-url\.us-east-1\.on\.aws\/$/);
    assert.strictEqual(fn.inputs.reservedConcurrentExecutions, 5);
    assert.strictEqual(key.inputs.type, "SecureString");
    assert.strictEqual(stack.outputs.unsubscribeKeyParameter, key.outputs.name);
    assert.deepStrictEqual(JSON.parse(fn.inputs.environment.variables.SENDTIME_UNSUBSCRIBE), {
      contactListName: "sendtime-dev",
      topicName: "campaigns",
      keyParameter: key.outputs.name,
      optOutTable: only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs").outputs.name,
    });
  });

  it("the opt-out table: on-demand, KMS-encrypted, point-in-time recovery, keyed by address; the sender looks entries up in it first", () => {
    const t = only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs");
    assert.strictEqual(t.inputs.billingMode, "PAY_PER_REQUEST");
    assert.strictEqual(t.inputs.hashKey, "address");
    assert.deepStrictEqual(t.inputs.attributes, [{ name: "address", type: "S" }]);
    assert.strictEqual(t.inputs.serverSideEncryption.enabled, true);
    assert.strictEqual(t.inputs.pointInTimeRecovery.enabled, true);
    assert.strictEqual(stack.outputs.optOutTableName, t.outputs.name);
    for (const st of [stack, capped]) {
      const def = JSON.parse(sender(st).definition);
      assert.strictEqual(def.States.Claim.Next, "IsText", "right after the claim");
      assert.strictEqual(def.States.IsText.Default, "LookUpOptOuts", "for every mail (texts skip the address table)");
      assert.strictEqual(def.States.LookUpOptOuts.Resource, "arn:aws:states:::aws-sdk:dynamodb:batchGetItem");
      assert.ok(def.States.LookUpOptOuts.Arguments.includes(JSON.stringify(t.outputs.name)));
    }
    // With a cap, the look-up comes before the admissions: an opted-out entry takes none.
    assert.strictEqual(JSON.parse(sender(capped).definition).States.AnyOptedOut.Default, "AdmitEntries");
  });

  it("without sendtime:unsubscribe* there is no endpoint, no key and no such output; the sender is still there", async () => {
    const bare = await renderWith({ unsubscribeContactList: undefined, unsubscribeTopic: undefined });
    assert.strictEqual(all(bare, "aws:lambda/functionUrl:FunctionUrl").length, 0);
    assert.strictEqual(all(bare, "aws:ssm/parameter:Parameter").length, 0);
    assert.strictEqual(bare.outputs.unsubscribeUrl, undefined);
    assert.strictEqual(bare.outputs.unsubscribeKeyParameter, undefined);
    assert.strictEqual(bare.outputs.senderStateMachineArn, SENDER_ARN);
    assert.deepStrictEqual(
      all(bare, "aws:dynamodb/table:Table").map((t) => t.name),
      ["bulk-sender-ledger"],
    );
    assert.strictEqual(bare.outputs.optOutTableName, undefined);
    assert.strictEqual(JSON.parse(sender(bare).definition).States.LookUpOptOuts, undefined);
  });

  it("IAM: the sender sends only as the stack's identity, configuration set and templates, and dead-letters; with a cap it also counts", () => {
    const s = inlineStatements(stack, "bulk-sender-role");
    const dlq = only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn;
    const allowed = [
      `${SES}:identity/mail.example.com`,
      `${SES}:configuration-set/sendtime-dev`,
      `${SES}:template/spring-sale`,
      `${SES}:contact-list/sendtime-dev`,
    ].flatMap((resource) => ["ses:SendBulkEmail", "ses:SendEmail"].map((action) => ({ action, resource })));
    expectDecision(s, "Allow", [...allowed, { action: "sqs:SendMessage", resource: dlq }]);
    expectDecision(s, "Deny", [
      { action: "ses:SendBulkEmail", resource: `${SES}:identity/other.example.com` },
      { action: "ses:SendEmail", resource: `${SES}:template/not-the-stacks` },
      { action: "ses:SendRawEmail", resource: `${SES}:identity/mail.example.com` },
      { action: "sqs:SendMessage", resource: `arn:aws:sqs:us-east-1:${ACCOUNT}:other` },
      { action: "dynamodb:UpdateItem", resource: `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/any` },
    ]);
    // The opt-out table: read, one key or a batch, and nothing else; no other table.
    const optOuts = only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs").outputs.arn;
    expectDecision(s, "Allow", [
      { action: "dynamodb:GetItem", resource: optOuts },
      { action: "dynamodb:BatchGetItem", resource: optOuts },
      { action: "cloudwatch:PutMetricData", resource: "*", context: { "cloudwatch:namespace": "sendtime" } },
    ]);
    expectDecision(s, "Deny", [
      { action: "dynamodb:UpdateItem", resource: optOuts },
      { action: "dynamodb:PutItem", resource: optOuts },
      { action: "dynamodb:DeleteItem", resource: optOuts },
      { action: "dynamodb:Scan", resource: optOuts },
      { action: "dynamodb:BatchGetItem", resource: `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/other` },
      { action: "cloudwatch:PutMetricData", resource: "*", context: { "cloudwatch:namespace": "AWS/SES" } },
    ]);
    const c = inlineStatements(capped, "bulk-sender-role");
    const table = only(capped, "aws:dynamodb/table:Table", "bulk-sender-sends").outputs.arn;
    expectDecision(c, "Allow", [
      { action: "dynamodb:UpdateItem", resource: table },
      { action: "dynamodb:GetItem", resource: table },
      { action: "cloudwatch:PutMetricData", resource: "*", context: { "cloudwatch:namespace": "sendtime" } },
    ]);
    expectDecision(c, "Deny", [
      { action: "dynamodb:DeleteItem", resource: table },
      { action: "dynamodb:UpdateItem", resource: `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/other` },
      { action: "cloudwatch:PutMetricData", resource: "*", context: { "cloudwatch:namespace": "AWS/SES" } },
    ]);
  });

  it("IAM: the scheduler role may start the sender, and never call SES itself", () => {
    for (const st of [stack, capped]) {
      const t = inlineStatements(st, "scheduler-target-role");
      expectDecision(t, "Allow", [{ action: "states:StartExecution", resource: SENDER_ARN }]);
      expectDecision(t, "Deny", [
        {
          action: "states:StartExecution",
          resource: `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:sendtime-fanout-dev`,
        },
        { action: "ses:SendBulkEmail", resource: `${SES}:identity/mail.example.com` },
      ]);
    }
    for (const st of [stack, capped])
      expectDecision(inlineStatements(st, "scheduler-target-role"), "Deny", [
        { action: "ses:SendEmail", resource: `${SES}:identity/mail.example.com` },
      ]);
  });

  it("IAM: the public unsubscribe function reads its key, reads and writes contacts of its list, records opt-outs (UpdateItem only), logs, and nothing else", () => {
    const u = inlineStatements(stack, "unsubscribe-role");
    const key = only(stack, "aws:ssm/parameter:Parameter").outputs.arn;
    const list = `${SES}:contact-list/sendtime-dev`;
    const logs = only(stack, "aws:cloudwatch/logGroup:LogGroup", "unsubscribe-logs").outputs.arn;
    const optOuts = only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs").outputs.arn;
    expectDecision(u, "Allow", [
      { action: "ssm:GetParameter", resource: key },
      { action: "ses:GetContact", resource: list },
      { action: "ses:CreateContact", resource: list },
      { action: "ses:UpdateContact", resource: list },
      { action: "logs:PutLogEvents", resource: `${logs}:log-stream:2026/12/01/abc` },
      { action: "dynamodb:UpdateItem", resource: optOuts },
    ]);
    expectDecision(u, "Deny", [
      { action: "dynamodb:GetItem", resource: optOuts },
      { action: "dynamodb:BatchGetItem", resource: optOuts },
      { action: "dynamodb:DeleteItem", resource: optOuts },
      { action: "dynamodb:Scan", resource: optOuts },
      { action: "dynamodb:UpdateItem", resource: `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/other` },
      { action: "ssm:GetParameter", resource: `arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/other` },
      { action: "ssm:PutParameter", resource: key },
      { action: "ses:UpdateContact", resource: `${SES}:contact-list/other` },
      { action: "ses:DeleteContact", resource: list },
      { action: "ses:DeleteContactList", resource: list },
      { action: "ses:SendEmail", resource: `${SES}:identity/mail.example.com` },
      { action: "ses:SendBulkEmail", resource: `${SES}:identity/mail.example.com` },
      { action: "scheduler:CreateSchedule", resource: `arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule/campaign-x/y` },
      { action: "iam:PassRole", resource: only(stack, "aws:iam/role:Role", "scheduler-target-role").outputs.arn },
    ]);
  });
});
