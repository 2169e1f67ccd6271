import * as assert from "assert";
import { main, policyConfigFileFor } from "../../scripts/preview";
import { runScript } from "../helpers/cli";
import { InputError, UsageError } from "../../infra/core/errors";

/** Runs the preview in this process and captures what it prints. */
async function preview(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("npm run preview", function () {
  this.timeout(60_000);

  it("--json prints the contract: resources with resolved inputs, outputs, policy", async () => {
    const r = await preview(["--json"]);
    assert.strictEqual(r.code, 0, r.out);
    const out = JSON.parse(r.out);
    assert.deepStrictEqual(
      Object.keys(out)
        .filter((k) => k !== "stack")
        .sort(),
      ["outputs", "policy", "resources"],
    );
    const sm = out.resources.find((x: any) => x.type === "aws:sfn/stateMachine:StateMachine" && x.name === "fanout");
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
    assert.deepStrictEqual(out.policy.violations, []);
    assert.strictEqual(out.policy.config, "policy/config/dev.json");
  });

  it("prints resources under their components, then the outputs (--no-policy skips the pack)", async () => {
    const r = await preview(["--no-policy"]);
    assert.strictEqual(r.code, 0);
    assert.match(r.out, /^Stack dev: \d+ resources \(offline preview, mocked account 123456789012\)\n/);
    assert.match(
      r.out,
      /\nFanOut fanout\n(  .*\n)*  aws:sfn\/stateMachine:StateMachine  fanout  \(name=sendtime-fanout-dev, type=STANDARD/,
    );
    assert.match(
      r.out,
      /\nOutputs:\n(  .*\n)*  stateMachineArn: arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev\n/,
    );
    assert.match(r.out, /\nPolicies: skipped \(--no-policy\)\n$/);
  });

  it("names the missing stack file (an input error)", async () => {
    await assert.rejects(preview(["--stack", "nope"]), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.strictEqual(e.message, "Pulumi.nope.yaml: no such stack config file (stacks: dev, example, prod)");
      return true;
    });
  });

  it("a stack without policy/config/<stack>.json is a usage error, not a run on the pack's defaults", () => {
    assert.throws(
      () => policyConfigFileFor("staging", undefined),
      (e: unknown) =>
        e instanceof UsageError &&
        e.message ===
          "policy/config/staging.json: no policy config for stack staging: copy policy/config/dev.json and set its createScheduleTps to the stack's, or pass --policy-config FILE (or --no-policy)",
    );
    assert.strictEqual(policyConfigFileFor("staging", "x.json"), "x.json");
    assert.match(policyConfigFileFor("prod", undefined), /policy\/config\/prod\.json$/);
  });

  it("as a process: one line on stderr and exit 2 for a bad flag", () => {
    const r = runScript("scripts/preview.ts", ["--stak", "dev"]);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /^error: unknown flag --stak \(did you mean --stack\?\) \(see --help\)\n$/);
  });
});

describe("npm run preview -- --write-outputs FILE", function () {
  this.timeout(60_000);
  const fs = require("fs") as typeof import("fs");
  const os = require("os") as typeof import("os");
  const path = require("path") as typeof import("path");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-preview-outputs-"));

  it("writes the outputs as `pulumi stack output --json` does: the --json outputs, flat, two-space indented; the scripts read it", async () => {
    const file = path.join(dir, "outputs.json");
    const json = await preview(["--json", "--no-policy", "--write-outputs", file]);
    assert.strictEqual(json.code, 0, json.err);
    const text = fs.readFileSync(file, "utf8");
    const expected = JSON.parse(json.out).outputs;
    assert.deepStrictEqual(JSON.parse(text), expected);
    assert.strictEqual(text, JSON.stringify(expected, null, 2) + "\n");
    assert.strictEqual(
      JSON.parse(text).stateMachineArn,
      "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev",
    );
    const { readStackOutputs } = await import("../../scripts/lib/aws/stack-outputs");
    const read = readStackOutputs({ outputsFile: file });
    assert.strictEqual(read.bucketName, expected.bucketName);
    assert.strictEqual(read.region, "us-east-1");
    assert.ok(!fs.readdirSync(dir).some((f) => f.endsWith(".tmp")));
  });

  it('a secret output (or one holding a secret) is "[secret]", as the Pulumi CLI prints it without --show-secrets', async () => {
    const { stackOutputJson } = await import("../../scripts/lib/offline/mock-stack");
    assert.strictEqual(
      stackOutputJson({ bucketName: "b", password: "hunter2", nested: { a: 1 }, gone: undefined }, [
        "password",
        "nested",
      ]),
      '{\n  "bucketName": "b",\n  "password": "[secret]",\n  "nested": "[secret]"\n}\n',
    );
  });

  it("a FILE that cannot be written: one line, exit 2, nothing left behind", async () => {
    const file = path.join(dir, "no-such-dir", "outputs.json");
    await assert.rejects(preview(["--no-policy", "--write-outputs", file]), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match((e as Error).message, /^--write-outputs .*no-such-dir\/outputs\.json: cannot write \(ENOENT\)$/);
      return true;
    });
  });
});

describe("npm run preview, from another folder", function () {
  this.timeout(60_000);
  const fs = require("fs") as typeof import("fs");
  const os = require("os") as typeof import("os");
  const path = require("path") as typeof import("path");

  it("renders the same stack: the program runs in the project's folder, as Pulumi runs it (templates/ is read there)", async () => {
    const { ROOT_DIR } = await import("../../scripts/lib/offline/mock-stack");
    const templates = fs
      .readdirSync(path.join(ROOT_DIR, "templates"), { withFileTypes: true })
      // A text's template (sms.txt alone) is not an SES template.
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(ROOT_DIR, "templates", e.name, "subject.txt"))).length;
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-preview-cwd-"));
    const cwd = process.cwd();
    process.chdir(elsewhere);
    let r;
    try {
      r = await preview(["--json", "--no-policy"]);
      assert.strictEqual(process.cwd(), fs.realpathSync(elsewhere), "the caller's folder is given back");
    } finally {
      process.chdir(cwd);
    }
    assert.strictEqual(r.code, 0, r.err);
    const resources = JSON.parse(r.out).resources as { type: string }[];
    assert.strictEqual(resources.filter((x) => x.type === "aws:ses/template:Template").length, templates);
    assert.strictEqual(templates, 13);
  });
});
