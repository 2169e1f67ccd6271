import * as fs from "fs";
import * as assert from "assert";
import * as pulumi from "@pulumi/pulumi";
import { type RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { STACK_QUOTA_TAG } from "../../infra/core/plan/naming";
import { all, definitionOf, only, renderWith } from "../helpers/stack";
import { StackConfigError } from "../../scripts/lib/offline/mock-stack";

const ACCOUNT = "123456789012";
const statements = (policyJson: string) => JSON.parse(policyJson).Statement as any[];
const asArray = (v: unknown) => (Array.isArray(v) ? v : [v]);

describe("the stack under Pulumi mocks (dev config)", () => {
  let stack: RenderedStack;
  before(async () => {
    stack = await renderWith();
  });

  describe("recipient bucket", () => {
    it("blocks all public access", () => {
      const pab = only(stack, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock").inputs;
      for (const k of ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"])
        assert.strictEqual(pab[k], true, k);
      assert.strictEqual(pab.bucket, stack.outputs.bucketName);
    });
    it("encrypts with SSE-S3, versions, and enforces bucket-owner ownership", () => {
      const enc = only(
        stack,
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
      ).inputs;
      assert.strictEqual(enc.rules[0].applyServerSideEncryptionByDefault.sseAlgorithm, "AES256");
      assert.strictEqual(
        only(stack, "aws:s3/bucketVersioning:BucketVersioning").inputs.versioningConfiguration.status,
        "Enabled",
      );
      assert.strictEqual(
        only(stack, "aws:s3/bucketOwnershipControls:BucketOwnershipControls").inputs.rule.objectOwnership,
        "BucketOwnerEnforced",
      );
    });
    it("denies every request that is not over TLS", () => {
      const [deny] = statements(only(stack, "aws:s3/bucketPolicy:BucketPolicy").inputs.policy);
      assert.strictEqual(deny.Effect, "Deny");
      assert.strictEqual(deny.Principal, "*");
      assert.deepStrictEqual(deny.Condition, { Bool: { "aws:SecureTransport": "false" } });
      assert.deepStrictEqual(deny.Resource, [
        `arn:aws:s3:::${stack.outputs.bucketName}`,
        `arn:aws:s3:::${stack.outputs.bucketName}/*`,
      ]);
    });
    it("expires plans/ and results/ after recipientRetentionDays", () => {
      const rules = only(stack, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration").inputs.rules;
      assert.deepStrictEqual(
        rules.map((r: any) => [r.filter.prefix, r.expiration.days, r.status]),
        [
          ["plans/", 30, "Enabled"],
          ["results/", 30, "Enabled"],
        ],
      );
    });
  });

  describe("sender", () => {
    it("creates the identity, a configuration set suppressing bounces and complaints, with reputation metrics", () => {
      assert.strictEqual(only(stack, "aws:sesv2/emailIdentity:EmailIdentity").inputs.emailIdentity, "mail.example.com");
      const cs = only(stack, "aws:sesv2/configurationSet:ConfigurationSet").inputs;
      assert.deepStrictEqual(cs.suppressionOptions.suppressedReasons, ["BOUNCE", "COMPLAINT"]);
      assert.strictEqual(cs.reputationOptions.reputationMetricsEnabled, true);
      assert.strictEqual(stack.outputs.configurationSetName, cs.configurationSetName);
    });
    it("publishes every event type to CloudWatch per campaign, step and variant (message tags)", () => {
      const dest = only(
        stack,
        "aws:sesv2/configurationSetEventDestination:ConfigurationSetEventDestination",
        "sender-events",
      ).inputs;
      assert.strictEqual(dest.configurationSetName, stack.outputs.configurationSetName);
      assert.strictEqual(dest.eventDestination.enabled, true);
      assert.deepStrictEqual([...dest.eventDestination.matchingEventTypes].sort(), [
        "BOUNCE",
        "CLICK",
        "COMPLAINT",
        "DELIVERY",
        "DELIVERY_DELAY",
        "OPEN",
        "REJECT",
        "RENDERING_FAILURE",
        "SEND",
        "SUBSCRIPTION",
      ]);
      assert.deepStrictEqual(dest.eventDestination.cloudWatchDestination.dimensionConfigurations, [
        { dimensionName: "campaign", dimensionValueSource: "MESSAGE_TAG", defaultDimensionValue: "none" },
        { dimensionName: "step", dimensionValueSource: "MESSAGE_TAG", defaultDimensionValue: "none" },
        { dimensionName: "variant", dimensionValueSource: "MESSAGE_TAG", defaultDimensionValue: "no-variant" },
      ]);
    });
    it("tracks opens and clicks on SES's own domain unless trackingDomain is set", () => {
      const cs = only(stack, "aws:sesv2/configurationSet:ConfigurationSet").inputs;
      assert.strictEqual(cs.trackingOptions, undefined);
    });
    it("exports the DKIM tokens of a domain identity", () =>
      assert.strictEqual((stack.outputs.dkimTokens as string[]).length, 3));
    it("creates the unsubscribe contact list with its topic", () => {
      const cl = only(stack, "aws:sesv2/contactList:ContactList").inputs;
      assert.strictEqual(cl.contactListName, "sendtime-dev");
      assert.strictEqual(cl.topics[0].topicName, "campaigns");
    });
  });

  describe("scheduler target", () => {
    it("is a role only scheduler.amazonaws.com can assume, from this account", () => {
      const [trust, ...rest] = statements(
        only(stack, "aws:iam/role:Role", "scheduler-target-role").inputs.assumeRolePolicy,
      );
      assert.strictEqual(rest.length, 0);
      assert.deepStrictEqual(trust.Principal, { Service: "scheduler.amazonaws.com" });
      assert.deepStrictEqual(trust.Condition, { StringEquals: { "aws:SourceAccount": ACCOUNT } });
    });
    it("may only start the one sender and dead-letter: no SES (the sender's role alone sends)", () => {
      const s = statements(only(stack, "aws:iam/rolePolicy:RolePolicy", "scheduler-target-send").inputs.policy);
      const dlq = only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs;
      assert.deepStrictEqual(
        s.map((x) => [x.Sid, x.Action, x.Resource]),
        [
          ["StartSender", "states:StartExecution", stack.outputs.senderStateMachineArn],
          ["DeadLetter", "sqs:SendMessage", dlq.arn],
        ],
      );
      // The sender's role sends through the identity, the configuration set, the templates and the contact list.
      const sender = statements(only(stack, "aws:iam/rolePolicy:RolePolicy", "bulk-sender-permissions").inputs.policy);
      assert.deepStrictEqual(sender.find((x) => x.Sid === "SendEmail").Resource, [
        `arn:aws:ses:us-east-1:${ACCOUNT}:identity/mail.example.com`,
        `arn:aws:ses:us-east-1:${ACCOUNT}:configuration-set/sendtime-dev`,
        // The templates the stack deploys, each by name: one per folder of templates/ (a text's, sms.txt alone, is not SES's).
        ...fs
          .readdirSync("templates")
          .filter((name) => fs.existsSync(`templates/${name}/subject.txt`))
          .sort()
          .map((name) => `arn:aws:ses:us-east-1:${ACCOUNT}:template/${name}`),
        `arn:aws:ses:us-east-1:${ACCOUNT}:contact-list/sendtime-dev`,
      ]);
      const housekeeping = statements(
        only(stack, "aws:iam/rolePolicy:RolePolicy", "scheduler-target-housekeeping").inputs.policy,
      );
      assert.deepStrictEqual(
        housekeeping.map((x) => [x.Action, x.Resource]),
        [
          ["scheduler:DeleteScheduleGroup", `arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule-group/campaign-*`],
          ["sqs:SendMessage", dlq.arn],
        ],
      );
      assert.strictEqual(
        stack.outputs.housekeepingRoleArn,
        only(stack, "aws:iam/role:Role", "scheduler-target-housekeeping-role").outputs.arn,
      );
    });
    it("has an encrypted dead-letter queue keeping messages 14 days", () => {
      const q = only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq");
      assert.strictEqual(q.inputs.messageRetentionSeconds, 14 * 24 * 3600);
      assert.strictEqual(q.inputs.sqsManagedSseEnabled, true);
      assert.match(q.outputs.arn, /^arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq-[0-9a-f]{7}$/);
      assert.strictEqual(stack.outputs.deadLetterQueueUrl, q.outputs.url);
    });
  });

  describe("fan-out", () => {
    it("creates schedules with the target role and the dead-letter queue the stack made", () => {
      const def = definitionOf(stack);
      const target =
        def.States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor.States.CreateSchedule.Parameters.Target;
      assert.strictEqual(target.RoleArn, only(stack, "aws:iam/role:Role", "scheduler-target-role").outputs.arn);
      assert.strictEqual(target.RoleArn, stack.outputs.schedulerRoleArn);
      assert.strictEqual(
        target.DeadLetterConfig.Arn,
        only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn,
      );
      assert.deepStrictEqual(target.RetryPolicy, { MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 5 });
      assert.strictEqual(def.States.FanOut.ResultWriter.Parameters.Bucket, stack.outputs.bucketName);
    });
    it("logs errors only, without execution data, to a log group with retention", () => {
      const sm = only(stack, "aws:sfn/stateMachine:StateMachine", "fanout").inputs;
      const lg = only(stack, "aws:cloudwatch/logGroup:LogGroup", "fanout-logs");
      assert.deepStrictEqual(sm.loggingConfiguration, {
        level: "ERROR",
        includeExecutionData: false,
        logDestination: `${lg.outputs.arn}:*`,
      });
      assert.strictEqual(lg.inputs.retentionInDays, 30);
      assert.strictEqual(sm.type, "STANDARD");
    });
    it("scopes the role: schedules and groups under campaign-*, the housekeeping schedule alone read and moved, PassRole of the target roles to Scheduler only", () => {
      const s = statements(only(stack, "aws:iam/rolePolicy:RolePolicy", "fanout-permissions").inputs.policy);
      const bySid = Object.fromEntries(s.map((x) => [x.Sid, x]));
      assert.strictEqual(
        bySid.CreateCampaignSchedules.Resource,
        `arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule/campaign-*/*`,
      );
      assert.strictEqual(
        bySid.CreateCampaignGroups.Resource,
        `arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule-group/campaign-*`,
      );
      assert.deepStrictEqual(bySid.CreateCampaignSchedules.Action, "scheduler:CreateSchedule");
      assert.deepStrictEqual(bySid.MoveHousekeepingSchedule.Action, [
        "scheduler:GetSchedule",
        "scheduler:UpdateSchedule",
      ]);
      assert.strictEqual(
        bySid.MoveHousekeepingSchedule.Resource,
        `arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule/campaign-*/sendtime.cleanup`,
      );
      assert.deepStrictEqual(bySid.PassTargetRolesToScheduler.Resource, [
        stack.outputs.schedulerRoleArn,
        stack.outputs.housekeepingRoleArn,
      ]);
      assert.deepStrictEqual(bySid.PassTargetRolesToScheduler.Condition, {
        StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" },
      });
      assert.strictEqual(bySid.ReadPlans.Resource, `arn:aws:s3:::${stack.outputs.bucketName}/plans/*`);
      assert.strictEqual(bySid.WriteResults.Resource, `arn:aws:s3:::${stack.outputs.bucketName}/results/*`);
      assert.strictEqual(bySid.StartChildren.Resource, stack.outputs.stateMachineArn);
      // Only log delivery is on "*", as AWS requires.
      assert.deepStrictEqual(
        s.filter((x) => asArray(x.Resource).includes("*")).map((x) => x.Sid),
        ["DeliverLogs"],
      );
    });
    it("the state machine's role trusts Step Functions from this account only", () => {
      const [trust] = statements(only(stack, "aws:iam/role:Role", "fanout-role").inputs.assumeRolePolicy);
      assert.deepStrictEqual(trust.Principal, { Service: "states.amazonaws.com" });
      assert.deepStrictEqual(trust.Condition, { StringEquals: { "aws:SourceAccount": ACCOUNT } });
    });
  });

  describe("alarms", () => {
    it("watch the DLQ, failed fan-outs, Scheduler throttles and target errors, SES bounce and complaint rates", () => {
      // The Alarms component's (the guardrails' own are tested in guardrails.test.ts).
      const alarms = all(stack, "aws:cloudwatch/metricAlarm:MetricAlarm")
        .filter((a) => a.name.startsWith("alarms-"))
        .map((a) => a.inputs);
      const metric = (ns: string, name: string) => alarms.find((a) => a.namespace === ns && a.metricName === name);
      assert.deepStrictEqual(metric("AWS/SQS", "ApproximateNumberOfMessagesVisible")!.dimensions, {
        QueueName: only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.name,
      });
      assert.deepStrictEqual(metric("AWS/States", "ExecutionsFailed")!.dimensions, {
        StateMachineArn: stack.outputs.stateMachineArn,
      });
      assert.ok(metric("AWS/Scheduler", "InvocationThrottleCount"));
      assert.ok(metric("AWS/Scheduler", "TargetErrorCount"));
      assert.strictEqual(metric("AWS/SES", "Reputation.BounceRate")!.threshold, 0.05);
      assert.strictEqual(metric("AWS/SES", "Reputation.ComplaintRate")!.threshold, 0.001);
      const topic = only(stack, "aws:sns/topic:Topic").outputs.arn;
      for (const a of alarms) assert.deepStrictEqual(a.alarmActions, [topic]);
    });
    it("email the alarm address", () => {
      const sub = only(stack, "aws:sns/topicSubscription:TopicSubscription").inputs;
      assert.deepStrictEqual([sub.protocol, sub.endpoint], ["email", "ops@example.com"]);
    });
  });

  it("exports every output the scripts rely on, in AWS formats", () => {
    const o = stack.outputs as Record<string, string>;
    assert.match(o.bucketName, /^recipients-[0-9a-f]{7}$/);
    assert.strictEqual(o.stateMachineArn, `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:sendtime-fanout-dev`);
    assert.match(o.schedulerRoleArn, /^arn:aws:iam::123456789012:role\/scheduler-target-role-[0-9a-f]{7}$/);
    assert.match(
      o.deadLetterQueueUrl,
      /^https:\/\/sqs\.us-east-1\.amazonaws\.com\/123456789012\/scheduler-target-dlq-[0-9a-f]{7}$/,
    );
    assert.strictEqual(o.configurationSetName, "sendtime-dev");
    assert.strictEqual(o.fromAddress, "news@mail.example.com");
    assert.strictEqual(o.scheduleGroupPrefix, "campaign-");
  });
});

describe("the stack with other config", () => {
  it("uses the customer KMS key for the bucket and the queue, and lets the roles use it", async () => {
    const key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const stack = await renderWith({ kmsKeyArn: key });
    const sse = only(stack, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
      .inputs.rules[0];
    assert.deepStrictEqual(sse.applyServerSideEncryptionByDefault, { sseAlgorithm: "aws:kms", kmsMasterKeyId: key });
    assert.strictEqual(only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").inputs.kmsMasterKeyId, key);
    for (const name of ["fanout-permissions", "scheduler-target-send"]) {
      assert.ok(
        statements(only(stack, "aws:iam/rolePolicy:RolePolicy", name).inputs.policy).some((s) => s.Resource === key),
        name,
      );
    }
  });

  it("without alarmEmail or unsubscribe: no subscription, no contact list, no ListManagementOptions", async () => {
    const stack = await renderWith({
      alarmEmail: undefined,
      unsubscribeContactList: undefined,
      unsubscribeTopic: undefined,
    });
    assert.strictEqual(all(stack, "aws:sns/topicSubscription:TopicSubscription").length, 0);
    assert.strictEqual(all(stack, "aws:sesv2/contactList:ContactList").length, 0);
    const child = definitionOf(stack).States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor.States;
    // The sender's input names the configuration set and carries no list management.
    assert.ok(child.SenderRequest.Output.includes(`'ConfigurationSetName': "sendtime-dev"`));
    assert.ok(!child.SenderRequest.Output.includes("list_management"));
    const withList = definitionOf(await renderWith()).States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor;
    assert.ok(withList.States.SenderRequest.Output.includes("list_management"));
  });

  it("stops on a misspelt sendtime: key, naming the key it resembles", async () => {
    await assert.rejects(renderWith({ maxConcurency: "100" }), (e: unknown) => {
      assert.ok(e instanceof pulumi.RunError);
      assert.strictEqual(
        e.message,
        "sendtime:maxConcurency is not a sendtime setting: did you mean sendtime:maxConcurrency?",
      );
      return true;
    });
  });

  it("says that aws:region is missing instead of assuming one", async () => {
    await assert.rejects(renderWith({ "aws:region": undefined }), (e: unknown) => {
      assert.ok(e instanceof StackConfigError);
      assert.strictEqual(
        e.message,
        "aws:region is not set: the offline preview assumes no Region (pulumi config set aws:region us-east-1)",
      );
      return true;
    });
  });

  it("tags the state machine with the quota it was sized for, so the policy pack can compare", async () => {
    const stack = await renderWith({ createScheduleTps: "100", maxConcurrency: "1" });
    assert.deepStrictEqual(only(stack, "aws:sfn/stateMachine:StateMachine", "fanout").inputs.tags, {
      [STACK_QUOTA_TAG]: "100",
    });
  });

  it("with trackingDomain: tracking links on that domain, over HTTPS only", async () => {
    const stack = await renderWith({ trackingDomain: "track.mail.example.com" });
    assert.deepStrictEqual(only(stack, "aws:sesv2/configurationSet:ConfigurationSet").inputs.trackingOptions, {
      customRedirectDomain: "track.mail.example.com",
      httpsPolicy: "REQUIRE",
    });
  });

  it("stops with one line naming the key on bad config", async () => {
    await assert.rejects(renderWith({ maxRetryAttempts: "500" }), (e: unknown) => {
      assert.ok(e instanceof pulumi.RunError);
      assert.strictEqual(e.message, 'sendtime:maxRetryAttempts = "500" is not valid: a whole number from 0 to 185');
      return true;
    });
  });
});
