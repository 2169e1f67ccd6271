import * as assert from "assert";
import * as path from "path";
import { scheduler } from "../../infra/core/plan/quotas";
import { ServedPolicyPack, readPolicyConfig, POLICY_DIR } from "../../scripts/lib/offline/policy-runner";
import { listStacks, readStackConfig } from "../../scripts/lib/offline/mock-stack";
import { only, renderShipped, renderWith } from "../helpers/stack";
import { main } from "../../scripts/preview";
import { UsageError } from "../../infra/core/errors";

const DEV = path.join(POLICY_DIR, "config", "dev.json");
const QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy";

describe("the policy pack served as the CLI serves it (gRPC)", function () {
  this.timeout(60_000);
  let pack: ServedPolicyPack;
  before(async () => {
    // The pack starts in its own process (type-checking the policies) while this one renders the stacks.
    const starting = ServedPolicyPack.start();
    starting.catch(() => {});
    await renderWith();
    await renderShipped("prod");
    pack = await starting;
  });
  after(() => pack?.close());

  it("offers every policy, with its level", () => {
    const levels = Object.fromEntries(pack.policies.map((p) => [p.name, p.enforcementLevel]));
    assert.deepStrictEqual(levels, {
      "scheduler-actions-scoped-to-campaigns": "mandatory",
      "passrole-only-to-scheduler": "mandatory",
      "public-function-role-minimal": "mandatory",
      "ses-opt-out-recorder-role-minimal": "mandatory",
      "queue-policy-stack-only": "mandatory",
      "guardrail-alarms-wired-to-pause": "mandatory",
      "passrole-only-target-roles": "mandatory",
      "scheduler-role-trust": "mandatory",
      "role-trust-not-public": "mandatory",
      "ses-send-scoped": "mandatory",
      "attached-policies-readable": "mandatory",
      "fanout-concurrency-below-quota": "mandatory",
      "fanout-schedule-safety": "mandatory",
      "fanout-batched-children": "advisory",
      "fanout-logs-exclude-execution-data": "advisory",
      "recipient-bucket-private": "mandatory",
      "recipient-bucket-retention": "advisory",
      "enrolment-target-failure-handling": "mandatory",
      "send-gate-table-scoped": "mandatory",
      "send-gate-table-protected": "mandatory",
      "ledger-writes-keyed": "mandatory",
      "sms-send-scoped": "mandatory",
      "sms-configuration-set-events": "mandatory",
    });
  });

  it("the shipped stack with the dev config has no violations", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    assert.deepStrictEqual(await pack.analyze(await renderWith()), []);
  });

  it("the prod stack (with the frequency cap's table) has no violations under the prod config", async () => {
    await pack.configure(readPolicyConfig(path.join(POLICY_DIR, "config", "prod.json")), "prod.json");
    const stack = await renderShipped("prod");
    assert.ok(stack.resources.some((r) => r.type === "aws:dynamodb/table:Table" && r.name === "bulk-sender-sends"));
    assert.deepStrictEqual(await pack.analyze(stack), []);
  });

  it("the same stack with maxConcurrency raised above the limit fails, on the state machine", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const violations = await pack.analyze(await renderWith({ maxConcurrency: "20" }));
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel, v.urn]),
      [
        [
          "fanout-concurrency-below-quota",
          "mandatory",
          "urn:pulumi:dev::sendtime::sendtime:index:FanOut$aws:sfn/stateMachine:StateMachine::fanout",
        ],
      ],
    );
    assert.match(violations[0].message, /500 CreateSchedule calls at once .* at most 19/);
  });

  it("the same stack with a lower quota in the policy config fails: the quotas disagree, and too many calls", async () => {
    await pack.configure({ "fanout-concurrency-below-quota": { createScheduleTps: 4000 } }, "low.json");
    const violations = await pack.analyze(await renderWith());
    assert.deepStrictEqual(
      violations.map((v) => v.policyName),
      ["fanout-concurrency-below-quota", "fanout-concurrency-below-quota"],
    );
    assert.match(violations[0].message, /built for createScheduleTps 5,000 .* checks against 4,000/);
    assert.match(violations[1].message, /above 380 \(createScheduleTps 4,000 × headroom 0.95 × 100 ms a call\)/);
  });

  it("a stack whose createScheduleTps disagrees with the policy config fails, even when its concurrency fits", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const violations = await pack.analyze(await renderWith({ createScheduleTps: "100" }));
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel]),
      [["fanout-concurrency-below-quota", "mandatory"]],
    );
    assert.match(violations[0].message, /was built for createScheduleTps 100 .* checks against 5,000/);
  });

  it("applies the CLI's levels: a policy set to advisory reports as advisory, disabled reports nothing", async () => {
    await pack.configure(
      { "fanout-concurrency-below-quota": { enforcementLevel: "advisory", createScheduleTps: 4000 } },
      "x.json",
    );
    assert.deepStrictEqual(
      (await pack.analyze(await renderWith())).map((v) => v.enforcementLevel),
      ["advisory", "advisory"],
    );
    await pack.configure({ all: "disabled" }, "x.json");
    assert.deepStrictEqual(await pack.analyze(await renderWith({ maxConcurrency: "500" })), []);
  });

  it("each example stack passes its own policy config and fails the other's", async () => {
    const prodStack = await renderShipped("prod");
    const devStack = await renderWith();
    await pack.configure(readPolicyConfig(path.join(POLICY_DIR, "config", "prod.json")), "prod.json");
    assert.deepStrictEqual(await pack.analyze(prodStack), []);
    assert.deepStrictEqual(
      (await pack.analyze(devStack)).map((v) => v.message.replace(/:.*/, "")),
      ['StateMachine "fanout" was built for createScheduleTps 5,000 (tag sendtime'],
    );
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    assert.deepStrictEqual(await pack.analyze(devStack), []);
    assert.deepStrictEqual(
      (await pack.analyze(prodStack)).map((v) => v.policyName),
      ["fanout-concurrency-below-quota", "fanout-concurrency-below-quota"],
    );
  });

  it("an AWS managed policy attached to the fan-out's role (AmazonEventBridgeFullAccess: scheduler:* on *) fails, on the attachment", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const stack = await renderWith();
    const role = only(stack, "aws:iam/role:Role", "fanout-role");
    const props = { role: role.outputs.name, policyArn: "arn:aws:iam::aws:policy/AmazonEventBridgeFullAccess" };
    const urn = role.urn.replace(
      "aws:iam/role:Role::fanout-role",
      "aws:iam/rolePolicyAttachment:RolePolicyAttachment::fanout-extra",
    );
    stack.resources.push({
      ...role,
      type: "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
      name: "fanout-extra",
      urn,
      id: "fanout-extra-1",
      inputs: props,
      outputs: { ...props, id: "fanout-extra-1" },
    });
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel, v.urn]),
      [["scheduler-actions-scoped-to-campaigns", "mandatory", urn]],
    );
    assert.match(
      violations[0].message,
      /attaches arn:aws:iam::aws:policy\/AmazonEventBridgeFullAccess \(AWS managed\), whose statement "EventBridgeActions" allows 12 Scheduler actions on "\*".*detach it/,
    );
  });

  it("an unknown managed policy attached exclusively (RolePolicyAttachmentsExclusive) fails: the pack cannot read it", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const stack = await renderWith();
    const role = only(stack, "aws:iam/role:Role", "scheduler-target-role");
    const type = "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive";
    const props = { roleName: role.outputs.name, policyArns: ["arn:aws:iam::123456789012:policy/ops-wide"] };
    const urn = role.urn.replace("aws:iam/role:Role::scheduler-target-role", `${type}::target-exclusive`);
    stack.resources.push({ ...role, type, name: "target-exclusive", urn, id: "x", inputs: props, outputs: props });
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel]),
      [["attached-policies-readable", "mandatory"]],
    );
    assert.match(
      violations[0].message,
      /attaches arn:aws:iam::123456789012:policy\/ops-wide to "scheduler-target-role-1589d4b", and the policy pack cannot read/,
    );
  });

  it("the fan-out's Distributed Map run twice in a Parallel fails, on the state machine", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const stack = await renderWith();
    const machine = only(stack, "aws:sfn/stateMachine:StateMachine", "fanout");
    const def = JSON.parse(machine.inputs.definition);
    const { Next, End, ...map } = def.States.FanOut;
    const branch = () => ({ StartAt: "FanOut", States: { FanOut: { ...map, End: true } } });
    def.States.FanOut = { Type: "Parallel", Branches: [branch(), branch()], ...(Next ? { Next } : { End }) };
    machine.inputs.definition = machine.outputs.definition = JSON.stringify(def);
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel, v.urn]),
      [["fanout-concurrency-below-quota", "mandatory", machine.urn]],
    );
    assert.match(
      violations[0].message,
      /Parallel "FanOut" creates schedules in 2 branches at once .* 950 CreateSchedule calls at once \(limit 475\)/,
    );
  });

  it("issue 31: a grant on the public function's role in an inline policy (sqs:SendMessage to the send DLQ) fails, on the role", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const stack = await renderWith();
    const role = only(stack, "aws:iam/role:Role", "unsubscribe-role");
    const dlq = only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn;
    const statement = { Effect: "Allow", Action: "sqs:SendMessage", Resource: dlq };
    const inlinePolicies = [
      { name: "extra", policy: JSON.stringify({ Version: "2012-10-17", Statement: [statement] }) },
    ];
    role.inputs.inlinePolicies = role.outputs.inlinePolicies = inlinePolicies;
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel, v.urn]),
      [
        ["public-function-role-minimal", "mandatory", role.urn],
        // The widened role also sends to the queue, which the queue's policy denies it: a writer locked out.
        ["queue-policy-stack-only", "mandatory", only(stack, QUEUE_POLICY, "scheduler-target-dlq-policy").urn],
      ],
    );
    assert.strictEqual(
      violations[0].message.slice(0, violations[0].message.indexOf(": the public function may only")),
      `Role "unsubscribe-role" inline policy "extra" statement 1 (role of the public function "sendtime-unsubscribe-dev") allows sqs:SendMessage on "${dlq}"`,
    );
  });

  it('issue 31: a trust of {"AWS": "*"} fails on any role, and on the public function\'s as its allow-list too', async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const stack = await renderWith();
    const open = JSON.stringify({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Principal: { AWS: "*" }, Action: "sts:AssumeRole" }],
    });
    const fanout = only(stack, "aws:iam/role:Role", "fanout-role");
    const unsubscribe = only(stack, "aws:iam/role:Role", "unsubscribe-role");
    for (const r of [fanout, unsubscribe]) r.inputs.assumeRolePolicy = r.outputs.assumeRolePolicy = open;
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(violations.map((v) => [v.policyName, v.enforcementLevel, v.urn]).sort(), [
      ["public-function-role-minimal", "mandatory", unsubscribe.urn],
      ["role-trust-not-public", "mandatory", fanout.urn],
      ["role-trust-not-public", "mandatory", unsubscribe.urn],
    ]);
    assert.deepStrictEqual(
      violations
        .filter((v) => v.policyName === "role-trust-not-public")
        .map((v) => v.message)
        .sort(),
      ["fanout-role", "unsubscribe-role"].map(
        (name) =>
          `Role "${name}" trust statement 1 lets {"AWS":"*"} (anyone) assume it without a condition that names who: name the principal (a service with aws:SourceAccount, or a role ARN)`,
      ),
    );
  });

  it("issue 31: the send dead-letter queue without its policy fails, on the queue", async () => {
    await pack.configure(readPolicyConfig(DEV), "dev.json");
    const stack = await renderWith();
    stack.resources = stack.resources.filter((r) => r.name !== "scheduler-target-dlq-policy");
    const queue = only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq");
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel, v.urn]),
      [["queue-policy-stack-only", "mandatory", queue.urn]],
    );
    assert.match(violations[0].message, /^Queue "scheduler-target-dlq" has no queue policy/);
  });

  it("rejects config the CLI would reject, naming the file and key", async () => {
    await assert.rejects(
      pack.configure({ "fanout-concurrency-below-quota": { headroom: 2 } }, "bad.json"),
      (e: unknown) => {
        assert.ok(e instanceof UsageError);
        assert.strictEqual(e.message, "bad.json: fanout-concurrency-below-quota.headroom = 2: must be at most 1");
        return true;
      },
    );
    await assert.rejects(
      pack.configure({ "no-such-policy": "advisory" }, "bad.json"),
      /bad\.json: no policy "no-such-policy" in the pack/,
    );
    await assert.rejects(
      pack.configure({ all: "loud" }, "bad.json"),
      /bad\.json: all = "loud": enforcement level must be one of advisory, mandatory, disabled, remediate/,
    );
  });

  it("npm run preview exits 1 on a mandatory violation, listing it under policy.violations", async () => {
    let stdout = "";
    const code = await main(
      ["--json", "--policy-config", "tests/fixtures/policy-low-quota.json"],
      {
        out: (t) => (stdout += t),
        err: () => {},
      },
      async () => ({
        // this describe's pack, left running for the other tests (main closes the pack it is given)
        configure: (config, source) => pack.configure(config, source),
        analyze: (stack) => pack.analyze(stack),
        close: () => {},
      }),
    );
    assert.strictEqual(code, 1);
    const out = JSON.parse(stdout);
    assert.deepStrictEqual(
      out.policy.violations.map((v: any) => [v.policyName, v.enforcementLevel]),
      [
        ["fanout-concurrency-below-quota", "mandatory"],
        ["fanout-concurrency-below-quota", "mandatory"],
      ],
    );
    assert.ok(out.policy.violations.every((v: any) => v.urn.endsWith("::fanout")));
  });
});

describe("stack and policy config agree", () => {
  it("each stack's createScheduleTps is the quota its policy config checks against", () => {
    for (const stack of listStacks()) {
      const file = path.join(POLICY_DIR, "config", `${stack}.json`);
      const policyTps = (readPolicyConfig(file)["fanout-concurrency-below-quota"] as { createScheduleTps: number })
        .createScheduleTps;
      // A stack that leaves the quota out (the minimal dev stack) deploys with the default.
      const stackTps = Number(readStackConfig(stack)["sendtime:createScheduleTps"] ?? scheduler.createScheduleTps);
      assert.strictEqual(stackTps, policyTps, stack);
    }
  });
});
