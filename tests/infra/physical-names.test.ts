/**
 * The stack's physical names under Pulumi's longest stack name: every name the stack sets itself fits AWS's limit of
 * its kind of resource, and a stack name those names cannot carry stops the program with one line naming it.
 */
import * as assert from "assert";
import { renderStack } from "../../scripts/lib/offline/mock-stack";
import { devConfig, all } from "./../helpers/stack";

// AWS's limits, read from each service's API reference.
const NAMED: [type: string, input: string, max: number][] = [
  ["aws:lambda/function:Function", "name", 64],
  ["aws:sfn/stateMachine:StateMachine", "name", 80],
  ["aws:sesv2/configurationSet:ConfigurationSet", "configurationSetName", 64],
];

describe("physical names", function () {
  this.timeout(60_000);

  it("a 100-character stack name: every name the stack sets fits its limit, and the roles name the same sender", async () => {
    const stack = "team-" + "x".repeat(95);
    const rendered = await renderStack({ stack, config: devConfig() });
    let seen = 0;
    for (const [type, input, max] of NAMED)
      for (const r of all(rendered, type)) {
        const name = r.inputs[input] as string;
        assert.ok(name.length <= max, `${type} ${r.name}: ${name} (${name.length} > ${max})`);
        assert.match(name, /^sendtime-[a-z-]*team-x+-[0-9a-f]{8}$|^sendtime-[a-z-]*team-x+$/, name);
        seen++;
      }
    assert.ok(seen >= 5, `only ${seen} named resources`);
    const sender = all(rendered, "aws:sfn/stateMachine:StateMachine").find((r) => r.name === "bulk-sender")!;
    const send = all(rendered, "aws:iam/rolePolicy:RolePolicy").find((r) => r.name === "scheduler-target-send")!;
    assert.ok(String(send.inputs.policy).includes(`:stateMachine:${sender.inputs.name}"`), send.inputs.policy);
  });

  it("a stack name with a period: one line naming the stack and what is allowed", async () => {
    await assert.rejects(renderStack({ stack: "dev.eu", config: devConfig() }), (e: Error) => {
      assert.match(
        e.message,
        /^(Sendtime "sendtime": )?stack name "dev\.eu" must be 1–100 characters of A-Z a-z 0-9 - _ /,
      );
      assert.doesNotMatch(e.message, /\n\s+at /);
      return true;
    });
  });
});
