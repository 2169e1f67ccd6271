import * as assert from "assert";
import * as pulumi from "@pulumi/pulumi";
import type { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { passRoleOnlyToScheduler, schedulerActionsScopedToCampaigns } from "../../policy/iam";
import { parseStackConfig } from "../../infra/config";
import { parseJourneyConfig } from "../../infra/core/journeys/journeys-definition";
import { isIanaZone } from "../../infra/core/journeys/subscriber-zone";
import { all, only, renderWith } from "../helpers/stack";
import { assertHasResourceViolation, assertNoResourceViolations, resourceArgs } from "../policy/util";
import { JourneyDefinitionError } from "../../infra/core/journeys/journeys-definition";
import { BUNDLE_TARGET } from "../../infra/handler-bundle";

const ACCOUNT = "123456789012";
const statements = (policyJson: string) => JSON.parse(policyJson).Statement as any[];
const ONBOARDING = {
  name: "onboarding",
  trigger: { source: "com.example.app", detailType: "UserSignedUp" },
  steps: [{ after: "+0h", template: "onboarding-welcome" }],
};

/** The journeys' own resources of a type (the SES opt-out recorder has a rule, target and queue of its own). */
const journeys = (s: RenderedStack, type: string) => all(s, type).filter((r) => r.name.startsWith("journeys-"));

describe("journeys in the stack under Pulumi mocks (dev config: the onboarding journey)", () => {
  let stack: RenderedStack;
  before(async () => {
    stack = await renderWith();
  });

  it("one rule for the trigger and one for the exit, on the configured bus, each targeting the function", () => {
    const rules = journeys(stack, "aws:cloudwatch/eventRule:EventRule");
    assert.deepStrictEqual(
      rules.map((r) => [r.name, r.inputs.eventBusName, JSON.parse(r.inputs.eventPattern)]),
      [
        ["journeys-onboarding-trigger", "default", { source: ["com.example.app"], "detail-type": ["UserSignedUp"] }],
        ["journeys-onboarding-exit", "default", { source: ["com.example.app"], "detail-type": ["UserUpgraded"] }],
      ],
    );
    const fn = only(stack, "aws:lambda/function:Function", "journeys-function");
    for (const [kind, rule] of [
      ["trigger", rules[0]],
      ["exit", rules[1]],
    ] as const) {
      const t = only(stack, "aws:cloudwatch/eventTarget:EventTarget", `journeys-onboarding-${kind}-target`).inputs;
      assert.strictEqual(t.rule, rule.outputs.name);
      // Set, not left to auto-naming from the resource's (longer) name: a target id is at most 64 characters.
      assert.strictEqual(t.targetId, `sendtime-${kind}`);
      assert.strictEqual(t.arn, fn.outputs.arn);
      assert.strictEqual(
        t.inputTransformer.inputTemplate,
        `{"journey":"onboarding","kind":"${kind}","event":<aws.events.event.json>}`,
      );
      const permission = only(stack, "aws:lambda/permission:Permission", `journeys-onboarding-${kind}-invoke`).inputs;
      assert.deepStrictEqual(
        [permission.principal, permission.sourceArn, permission.function],
        ["events.amazonaws.com", rule.outputs.arn, fn.outputs.name],
      );
    }
  });

  it("the function: a current Node.js runtime, the bundled handler, configured with the journeys and the fan-out's SES target", () => {
    const fn = only(stack, "aws:lambda/function:Function", "journeys-function").inputs;
    assert.strictEqual(fn.runtime, "nodejs24.x");
    // esbuild's name for the same Node: the bundle is built for the runtime it is deployed on.
    assert.strictEqual(BUNDLE_TARGET, fn.runtime.replace(/^nodejs(\d+)\.x$/, "node$1"));
    assert.strictEqual(fn.handler, "index.handler");
    const env = fn.environment.variables;
    assert.strictEqual(JSON.parse(env.SENDTIME_JOURNEYS)[0].name, "onboarding");
    const enrolment = JSON.parse(env.SENDTIME_ENROLMENT);
    assert.strictEqual(enrolment.target.targetRoleArn, stack.outputs.schedulerRoleArn);
    assert.strictEqual(enrolment.target.fromAddress, stack.outputs.fromAddress);
    assert.strictEqual(enrolment.target.configurationSetName, stack.outputs.configurationSetName);
    assert.deepStrictEqual(enrolment.target.listManagement, {
      contactListName: "sendtime-dev",
      topicName: "campaigns",
    });
    assert.strictEqual(
      enrolment.target.deadLetterQueueArn,
      only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn,
    );
    assert.deepStrictEqual(stack.outputs.journeyEnrolment, enrolment);
    assert.strictEqual(
      fn.loggingConfig.logGroup,
      only(stack, "aws:cloudwatch/logGroup:LogGroup", "journeys-logs").inputs.name,
    );
    assert.strictEqual(
      only(stack, "aws:scheduler/scheduleGroup:ScheduleGroup", "journeys-group-onboarding").inputs.name,
      "campaign-onboarding",
    );
  });

  it("its role may claim enrolments in the ledger, create and delete schedules in its journeys' groups only, pass only the target role to Scheduler, log, and dead-letter", () => {
    const trust = statements(only(stack, "aws:iam/role:Role", "journeys-role").inputs.assumeRolePolicy);
    assert.deepStrictEqual(
      trust.map((s) => [s.Principal, s.Condition]),
      [[{ Service: "lambda.amazonaws.com" }, { StringEquals: { "aws:SourceAccount": ACCOUNT } }]],
    );
    const s = statements(only(stack, "aws:iam/rolePolicy:RolePolicy", "journeys-permissions").inputs.policy);
    const bySid = Object.fromEntries(s.map((x) => [x.Sid, x]));
    assert.deepStrictEqual(bySid.EnrolAndExit.Action, ["scheduler:CreateSchedule", "scheduler:DeleteSchedule"]);
    assert.deepStrictEqual(bySid.EnrolAndExit.Resource, [
      `arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule/campaign-onboarding/*`,
    ]);
    assert.strictEqual(bySid.PassTargetRoleToScheduler.Resource, stack.outputs.schedulerRoleArn);
    assert.deepStrictEqual(bySid.PassTargetRoleToScheduler.Condition, {
      StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" },
    });
    assert.strictEqual(bySid.KeepFailedEvents.Resource, only(stack, "aws:sqs/queue:Queue", "journeys-dlq").outputs.arn);
    const ledger = only(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger");
    assert.deepStrictEqual(bySid.ClaimEnrolments, {
      Sid: "ClaimEnrolments",
      Effect: "Allow",
      Action: ["dynamodb:PutItem", "dynamodb:DeleteItem"],
      Resource: ledger.outputs.arn,
      Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["enr#onboarding#*#*"] } },
    });
    assert.deepStrictEqual(
      s.map((x) => x.Sid),
      ["EnrolAndExit", "PassTargetRoleToScheduler", "Logs", "KeepFailedEvents", "ClaimEnrolments"],
    );
    // The function claims in that table: its name is in the environment and the stack outputs (for enrol).
    const env = only(stack, "aws:lambda/function:Function", "journeys-function").inputs.environment.variables;
    assert.strictEqual(env.SENDTIME_LEDGER_TABLE, ledger.outputs.name);
    assert.strictEqual(stack.outputs.ledgerTableName, ledger.outputs.name);
    // On demand, keyed and expiring as the ledger's contract says.
    assert.deepStrictEqual(
      [ledger.inputs.billingMode, ledger.inputs.hashKey, ledger.inputs.attributes, ledger.inputs.ttl],
      ["PAY_PER_REQUEST", "pk", [{ name: "pk", type: "S" }], { attributeName: "expires_at", enabled: true }],
    );
  });

  it("with a customer KMS key the ledger is encrypted with it, and the journeys role may use the key", async () => {
    const key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const keyed = await renderWith({ kmsKeyArn: key });
    assert.deepStrictEqual(only(keyed, "aws:dynamodb/table:Table", "bulk-sender-ledger").inputs.serverSideEncryption, {
      enabled: true,
      kmsKeyArn: key,
    });
    const s = statements(only(keyed, "aws:iam/rolePolicy:RolePolicy", "journeys-permissions").inputs.policy);
    assert.deepStrictEqual(
      s.filter((x) => x.Resource === key).map((x) => [x.Sid, x.Action]),
      [["LedgerEncryption", ["kms:GenerateDataKey", "kms:Decrypt"]]],
    );
  });

  it("failed events are retried and then kept: rule targets with a retry policy and DLQ, the function with an on-failure destination", () => {
    const dlq = only(stack, "aws:sqs/queue:Queue", "journeys-dlq").outputs;
    for (const t of journeys(stack, "aws:cloudwatch/eventTarget:EventTarget")) {
      assert.deepStrictEqual(t.inputs.deadLetterConfig, { arn: dlq.arn });
      assert.ok(t.inputs.retryPolicy.maximumRetryAttempts > 0 && t.inputs.retryPolicy.maximumEventAgeInSeconds >= 3600);
    }
    const invoke = only(
      stack,
      "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig",
      "journeys-failures",
    ).inputs;
    assert.strictEqual(
      invoke.functionName,
      only(stack, "aws:lambda/function:Function", "journeys-function").outputs.name,
    );
    assert.strictEqual(invoke.maximumRetryAttempts, 2);
    assert.deepStrictEqual(invoke.destinationConfig, { onFailure: { destination: dlq.arn } });
    // EventBridge may write to the queue for these rules only.
    const [allow] = statements(only(stack, "aws:sqs/queuePolicy:QueuePolicy", "journeys-dlq-policy").inputs.policy);
    assert.deepStrictEqual(allow.Principal, { Service: "events.amazonaws.com" });
    assert.deepStrictEqual(
      allow.Condition.ArnEquals["aws:SourceArn"],
      journeys(stack, "aws:cloudwatch/eventRule:EventRule").map((r) => r.outputs.arn),
    );
  });

  it("an alarm fires when a journey event lands in the dead-letter queue", () => {
    const alarm = only(stack, "aws:cloudwatch/metricAlarm:MetricAlarm", "alarms-journeys-dlq-not-empty").inputs;
    assert.deepStrictEqual(
      [alarm.namespace, alarm.metricName, alarm.dimensions, alarm.threshold, alarm.comparisonOperator],
      [
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
        { QueueName: only(stack, "aws:sqs/queue:Queue", "journeys-dlq").outputs.name },
        0,
        "GreaterThanThreshold",
      ],
    );
    assert.deepStrictEqual(alarm.alarmActions, [only(stack, "aws:sns/topic:Topic").outputs.arn]);
  });

  it("the handler's role is covered by the scoping policies: it passes them, and a wildcard in it is caught", async () => {
    const policy = only(stack, "aws:iam/rolePolicy:RolePolicy", "journeys-permissions").inputs.policy;
    const args = (doc: string) =>
      resourceArgs("aws:iam/rolePolicy:RolePolicy", { role: "journeys-role", policy: doc }, {}, "journeys-permissions");
    await assertNoResourceViolations(schedulerActionsScopedToCampaigns, args(policy));
    await assertNoResourceViolations(passRoleOnlyToScheduler, args(policy));
    const widened = (sid: string, resource: string) =>
      JSON.stringify({
        Version: "2012-10-17",
        Statement: statements(policy).map((s) => (s.Sid === sid ? { ...s, Resource: resource } : s)),
      });
    await assertHasResourceViolation(schedulerActionsScopedToCampaigns, args(widened("EnrolAndExit", "*")), {
      message:
        'RolePolicy "journeys-permissions" statement "EnrolAndExit" allows scheduler:CreateSchedule, scheduler:DeleteSchedule on "*"',
    });
    await assertHasResourceViolation(passRoleOnlyToScheduler, args(widened("PassTargetRoleToScheduler", "*")), {
      message: 'statement "PassTargetRoleToScheduler" allows iam:PassRole on "*"',
    });
  });

  it("without journeys there is no function, rule or journey output", async () => {
    const bare = await renderWith({ journeys: undefined });
    assert.deepStrictEqual(
      all(bare, "aws:lambda/function:Function")
        .map((f) => f.name)
        .sort(),
      ["ses-opt-outs-function", "unsubscribe-function"],
    );
    assert.strictEqual(journeys(bare, "aws:cloudwatch/eventRule:EventRule").length, 0);
    assert.strictEqual(bare.outputs.journeyEnrolment, undefined);
    assert.ok(!all(bare, "aws:cloudwatch/metricAlarm:MetricAlarm").some((a) => a.name.includes("journeys")));
  });

  // 21:00-08:00 leaves 13 hours (780 minutes) free a day: a flexible window of 800 minutes touches quiet time wherever
  // it starts, so no step could ever be sent (the handler threw at the first event).
  it("a journey whose quiet time leaves no free stretch as long as the stack's window stops the program, naming both", () =>
    assert.rejects(
      renderWith({
        journeys: JSON.stringify([{ ...ONBOARDING, quietHours: "21:00-08:00" }]),
        defaultWindowMinutes: "800",
      }),
      (e: Error) => {
        assert.ok(e instanceof pulumi.RunError, String(e));
        assert.strictEqual(
          e.message,
          'sendtime:journeys: journey "onboarding": its quiet time (21:00-08:00 local) leaves at most 780 free minutes in a row, shorter than sendtime:defaultWindowMinutes 800: every send\'s window would touch quiet time; shorten the window or the quiet time',
        );
        return true;
      },
    ));

  it("a window as long as the free stretch is fine", async () => {
    const ok = await renderWith({
      journeys: JSON.stringify([{ ...ONBOARDING, quietHours: "21:00-08:00" }]),
      defaultWindowMinutes: "780",
    });
    assert.ok(ok.outputs.journeyEnrolment);
  });

  it("eventBusName puts the rules and targets on that bus", async () => {
    const custom = await renderWith({ eventBusName: "app-events", journeys: JSON.stringify([ONBOARDING]) });
    assert.deepStrictEqual(
      journeys(custom, "aws:cloudwatch/eventRule:EventRule").map((r) => r.inputs.eventBusName),
      ["app-events"],
    );
    assert.deepStrictEqual(
      journeys(custom, "aws:cloudwatch/eventTarget:EventTarget").map((t) => t.inputs.eventBusName),
      ["app-events"],
    );
    // SES publishes only to the default bus: the opt-out recorder's rule stays there.
    assert.strictEqual(
      only(custom, "aws:cloudwatch/eventRule:EventRule", "ses-opt-outs-rule").inputs.eventBusName,
      "default",
    );
  });

  describe("a bad journey stops the program with one line naming the journey and the field", () => {
    const cases: [string, unknown, string][] = [
      [
        "a step offset",
        [{ ...ONBOARDING, steps: [{ after: "+3x", template: "t" }] }],
        'sendtime:journeys: journey "onboarding": steps[0].after "+3x" is not valid: +Nh or +Nd, N from 0 to 999 (e.g. +0h, +3d)',
      ],
      [
        "an `at` on an hours step",
        [{ ...ONBOARDING, steps: [{ after: "+2h", at: "09:00", template: "t" }] }],
        'sendtime:journeys: journey "onboarding": steps[0].at goes with a +Nd step only (+2h is a number of hours after the trigger)',
      ],
      [
        "a bad time",
        [{ ...ONBOARDING, steps: [{ after: "+1d", at: "9am", template: "t" }] }],
        'sendtime:journeys: journey "onboarding": steps[0].at "9am" is not valid: local time HH:MM (00:00–23:59)',
      ],
      [
        "a name the group cannot take",
        [{ ...ONBOARDING, name: "on boarding" }],
        'sendtime:journeys: journey "on boarding": name "on boarding" must be 1–39 characters of 0-9 a-z A-Z - _ .',
      ],
      [
        // Pulumi names the rule "journeys-<name>-trigger-<7 hex>": EventBridge takes 64 characters.
        "a name too long for the rule named after it",
        [{ ...ONBOARDING, name: "n".repeat(40) }],
        `sendtime:journeys: journey "${"n".repeat(40)}": name is 40 characters: at most 39 (the EventBridge rule journeys-<name>-trigger, with Pulumi's 8-character suffix, must fit in 64)`,
      ],
      [
        "a missing trigger",
        [{ name: "x", steps: ONBOARDING.steps }],
        'sendtime:journeys: journey "x": trigger must be {source, detailType}, got nothing',
      ],
      [
        "a typo'd field",
        [{ ...ONBOARDING, stpes: [] }],
        'sendtime:journeys: journey "onboarding": stpes is not a journey field',
      ],
      [
        "a duplicate name",
        [ONBOARDING, ONBOARDING],
        'sendtime:journeys: journey "onboarding": name "onboarding" is used by another journey',
      ],
      [
        "quiet hours that are not HH:MM-HH:MM",
        [{ ...ONBOARDING, quietHours: "9pm-8am" }],
        'sendtime:journeys: journey "onboarding": quietHours "9pm-8am" is not valid: HH:MM-HH:MM in the subscriber\'s zone (e.g. 21:00-08:00)',
      ],
      [
        "quiet hours of no length",
        [{ ...ONBOARDING, quietHours: "21:00-21:00" }],
        'sendtime:journeys: journey "onboarding": quietHours 21:00-21:00 starts and ends at the same minute',
      ],
      [
        "an unknown quiet day",
        [{ ...ONBOARDING, quietDays: "SAT,FUNDAY" }],
        'sendtime:journeys: journey "onboarding": quietDays "SAT,FUNDAY" is not valid: day names SUN,MON,TUE,WED,THU,FRI,SAT',
      ],
      [
        "every day quiet",
        [{ ...ONBOARDING, quietDays: ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"] }],
        'sendtime:journeys: journey "onboarding": quietDays makes every day quiet: nothing would ever be sent',
      ],
      [
        "an unknown default zone",
        [{ ...ONBOARDING, defaultTimezone: "Mars/Olympus" }],
        'sendtime:journeys: journey "onboarding": defaultTimezone "Mars/Olympus" is not an IANA time zone name',
      ],
      ["not a list", { name: "x" }, "sendtime:journeys: expected a list of journeys, got an object"],
    ];
    // The program reads the config with parseJourneyConfig; one case goes through the whole program.
    it("through the program: pulumi.RunError, one line", () =>
      assert.rejects(renderWith({ journeys: JSON.stringify(cases[0][1]) }), (e: Error) => {
        assert.ok(e instanceof pulumi.RunError, String(e));
        assert.strictEqual(e.message, cases[0][2]);
        return true;
      }));
    for (const [label, journeys, message] of cases) {
      it(label, () =>
        assert.throws(
          () => parseJourneyConfig((key) => (key === "journeys" ? JSON.stringify(journeys) : undefined), isIanaZone),
          (e: Error) => {
            assert.ok(e instanceof JourneyDefinitionError, String(e));
            assert.ok(e.message.startsWith(message), `${e.message}\n  should start with\n${message}`);
            assert.ok(!e.message.includes("\n"));
            return true;
          },
        ),
      );
    }
    it("JSON that does not parse", () =>
      assert.throws(
        () => parseJourneyConfig((key) => (key === "journeys" ? "[{name: onboarding}]" : undefined), isIanaZone),
        /^Error: sendtime:journeys is not valid JSON \(/,
      ));
    it("the journey keys are known settings: a misspelt one names them", () => {
      const config: Record<string, string> = {
        senderIdentity: "mail.example.com",
        fromAddress: "news@mail.example.com",
        journeys: "[]",
      };
      assert.doesNotThrow(() => parseStackConfig((k) => config[k], ["sendtime:journeys", "sendtime:eventBusName"]));
      assert.throws(
        () => parseStackConfig((k) => config[k], ["sendtime:journey"]),
        /^Error: sendtime:journey is not a sendtime setting: did you mean sendtime:journeys\?$/,
      );
    });
    it("a bad event bus name", () =>
      assert.throws(
        () => parseJourneyConfig((key) => (key === "eventBusName" ? "my bus" : undefined), isIanaZone),
        /sendtime:eventBusName = "my bus" is not valid: an event bus name/,
      ));
    it("quiet time is accepted and normalised (days upper case, from a list or a comma string)", () => {
      const read = (quiet: object) =>
        parseJourneyConfig(
          (key) => (key === "journeys" ? JSON.stringify([{ ...ONBOARDING, ...quiet }]) : undefined),
          isIanaZone,
        );
      assert.deepStrictEqual(read({ quietHours: "21:00-08:00", quietDays: "sat, Sun" }).journeys[0].quietDays, [
        "SAT",
        "SUN",
      ]);
      assert.strictEqual(read({ quietHours: "21:00-08:00" }).journeys[0].quietHours, "21:00-08:00");
    });
    it("journeys too large for the function's environment", () => {
      const many = Array.from({ length: 40 }, (_, i) => ({ ...ONBOARDING, name: `journey-${i}` }));
      assert.throws(
        () => parseJourneyConfig((key) => (key === "journeys" ? JSON.stringify(many) : undefined), isIanaZone),
        /sendtime:journeys is \d+ bytes as JSON, over 3000/,
      );
      // Lambda counts bytes: a CJK character is 3 bytes of UTF-8.
      const wide = Array.from({ length: 4 }, (_, i) => ({
        ...ONBOARDING,
        name: `journey-${i}`,
        trigger: { source: "源".repeat(256), detailType: `${"登".repeat(127)}${i}` },
      }));
      assert.ok(JSON.stringify(wide).length < 3000);
      assert.throws(
        () => parseJourneyConfig((key) => (key === "journeys" ? JSON.stringify(wide) : undefined), isIanaZone),
        /sendtime:journeys is \d+ bytes as JSON, over 3000/,
      );
    });
  });
});
