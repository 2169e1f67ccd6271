import * as assert from "assert";
import {
  campaignGroupName,
  campaignGroupsArn,
  campaignIdProblem,
  campaignSchedulesArn,
  isCampaignScopedArn,
  isValidSchedulerName,
  scheduleName,
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
});
