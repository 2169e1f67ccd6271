import * as assert from "assert";
import {
  campaignGroupName,
  campaignGroupsArn,
  campaignIdProblem,
  campaignSchedulesArn,
  isCampaignScopedArn,
  isValidSchedulerName,
  NAME_MAX_LENGTH,
  physicalName,
  scheduleName,
  senderName,
} from "../../../../infra/core/plan/naming";

const scope = { partition: "aws", region: "eu-west-1", accountId: "123456789012" };

describe("naming", () => {
  it("the policy's matcher accepts exactly the campaign ARNs the stack grants", () => {
    assert.ok(isCampaignScopedArn(campaignSchedulesArn(scope)));
    assert.ok(isCampaignScopedArn(campaignGroupsArn(scope)));
    assert.ok(isCampaignScopedArn(campaignSchedulesArn({ ...scope, partition: "aws-cn", region: "cn-north-1" })));
    for (const bad of [
      "*",
      "arn:aws:scheduler:eu-west-1:123456789012:schedule/*/*",
      "arn:aws:scheduler:eu-west-1:123456789012:schedule/default/x",
      "arn:aws:scheduler:eu-west-1:123456789012:schedule-group/camp*",
      "arn:aws:scheduler:*:123456789012:schedule/campaign-*/*",
      "arn:aws:scheduler:eu-west-1:*:schedule-group/campaign-*",
    ])
      assert.ok(!isCampaignScopedArn(bad), bad);
  });

  it("campaign ids must make a valid group name", () => {
    assert.strictEqual(campaignGroupName("spring"), "campaign-spring");
    assert.strictEqual(campaignIdProblem("a".repeat(55)), undefined);
    assert.match(campaignIdProblem("a".repeat(56))!, /1–55 characters/);
    assert.match(campaignIdProblem("spring sale")!, /must be 1–55 characters of 0-9 a-z A-Z - _ \./);
  });

  it("schedule names are the id when it fits, else a hash; always valid", () => {
    assert.strictEqual(scheduleName("a1", 2), "a1-2");
    assert.strictEqual(scheduleName("x".repeat(62), 1), "x".repeat(62) + "-1");
    assert.match(scheduleName("x".repeat(63), 1), /^h\.[0-9a-f]{32}-1$/);
    for (const id of ["é", "a b", "a/b", "", "x".repeat(500)])
      assert.ok(isValidSchedulerName(scheduleName(id, 12)), id);
  });

  describe("physicalName", () => {
    // AWS's limits, read from each service's API reference (not from NAME_MAX_LENGTH).
    const LIMITS: [keyof typeof NAME_MAX_LENGTH, number][] = [
      ["lambdaFunction", 64],
      ["iamRole", 64],
      ["sqsQueue", 80],
      ["stateMachine", 80],
      ["scheduleGroup", 64],
      ["dynamoDbTable", 255],
      ["s3Bucket", 63],
      ["cloudWatchAlarm", 255],
      ["snsTopic", 256],
      ["eventBridgeRule", 64],
      ["sesConfigurationSet", 64],
    ];
    // Pulumi's longest stack name: 100 characters.
    const LONG = "team-" + "x".repeat(95);

    it("knows AWS's limit of each kind of resource", () => {
      assert.deepStrictEqual(Object.entries(NAME_MAX_LENGTH).sort(), LIMITS.map(([k, v]) => [k, v]).sort());
    });

    it("is sendtime-<part>-<stack> when it fits: the names deployed stacks already have", () => {
      assert.strictEqual(physicalName("dev", "fanout", 80), "sendtime-fanout-dev");
      assert.strictEqual(physicalName("prod", "", 64), "sendtime-prod");
      assert.strictEqual(senderName("prod"), "sendtime-sender-prod");
      const exact = "s".repeat(64 - "sendtime-journeys-".length);
      assert.strictEqual(physicalName(exact, "journeys", 64), `sendtime-journeys-${exact}`);
    });

    it("a stack name too long for the limit is cut and hashed: within every limit, stable, unique", () => {
      // Expected by hand: the prefix, the stack's first 64 - 22 - 9 = 33 characters, and the first 8 hex characters
      // of the SHA-256 of the whole name (printf '%s' "sendtime-ses-opt-outs-$LONG" | sha256sum).
      assert.strictEqual(physicalName(LONG, "ses-opt-outs", 64), `sendtime-ses-opt-outs-${LONG.slice(0, 33)}-5845a1ef`);
      for (const [kind, max] of LIMITS)
        for (const part of ["", "sender", "ses-opt-outs", "unsubscribe"]) {
          const name = physicalName(LONG, part, max);
          assert.ok(name.length <= max, `${kind} ${name}`);
          assert.match(name, /^[A-Za-z0-9_-]+$/);
          assert.strictEqual(physicalName(LONG, part, max), name);
          assert.notStrictEqual(physicalName(LONG.slice(0, -1) + "y", part, max), name, `${kind} ${part}`);
        }
    });

    it("a stack name AWS would refuse in a name is an error naming the stack and what is allowed", () => {
      for (const stack of ["dev.eu", "dev eu", "", "x".repeat(101)])
        assert.throws(
          () => physicalName(stack, "fanout", 80),
          (e: Error) => e.message.startsWith(`stack name "${stack}" must be 1–100 characters of A-Z a-z 0-9 - _`),
        );
    });
  });
});
