import * as assert from "assert";
import { runScript } from "../helpers/cli";

describe("npm run preview", () => {
  it("--json prints the contract: resources with resolved inputs, outputs, policy", () => {
    const r = runScript("scripts/preview.ts", ["--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepStrictEqual(
      Object.keys(out)
        .filter((k) => k !== "stack")
        .sort(),
      ["outputs", "policy", "resources"],
    );
    const sm = out.resources.find((x: any) => x.type === "aws:sfn/stateMachine:StateMachine");
    assert.strictEqual(typeof sm.inputs.definition, "string");
    assert.strictEqual(JSON.parse(sm.inputs.definition).StartAt, "EnsureScheduleGroup");
    for (const k of [
      "bucketName",
      "stateMachineArn",
      "schedulerRoleArn",
      "deadLetterQueueUrl",
      "configurationSetName",
      "fromAddress",
      "scheduleGroupPrefix",
    ]) {
      assert.ok(out.outputs[k], k);
    }
    assert.ok(Array.isArray(out.policy.violations));
  });

  it("names the missing stack file and exits 2", () => {
    const r = runScript("scripts/preview.ts", ["--stack", "nope"]);
    assert.strictEqual(r.code, 2);
    assert.strictEqual(r.stderr.trim(), "error: Pulumi.nope.yaml: no such stack config file (stacks: dev, prod)");
  });
});
