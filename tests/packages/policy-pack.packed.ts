/**
 * The published policy pack (`npm pack` of policy/, what `pulumi policy publish` uploads) installed as the Pulumi
 * CLI installs a pack it enforces, outside the repository, and served over the analyzer gRPC protocol: it gives the
 * example stacks the same verdicts as the repository's own pack. `npm run test:packages` (not `npm test`: the install
 * alone takes 10–15 s here).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { readPolicyConfig, ServedPolicyPack, POLICY_DIR, Violation } from "../../scripts/lib/offline/policy-runner";
import { RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { only, renderShipped, renderWith } from "../helpers/stack";
import { emptyFolder, installExtracted, pack, tarballFiles } from "../helpers/packed";
import { policies as REPOSITORY_POLICIES } from "../../policy/policies";

const config = (name: string) => readPolicyConfig(path.join(POLICY_DIR, "config", `${name}.json`));

describe("the policy pack packed, installed outside the repository and served", function () {
  this.timeout(300_000);
  let tarball: string;
  let dir: string;
  let installed: ServedPolicyPack;
  let repository: ServedPolicyPack;

  before(async () => {
    const repoPack = ServedPolicyPack.start();
    repoPack.catch(() => {});
    tarball = pack("policy", emptyFolder("sendtime-guard-tarball"));
    dir = installExtracted(tarball, emptyFolder("sendtime-guard-installed"));
    installed = await ServedPolicyPack.start({
      dir,
      program: ".",
      pulumiDir: path.join(dir, "node_modules", "@pulumi", "pulumi"),
    });
    repository = await repoPack;
  });
  after(() => {
    installed?.close();
    repository?.close();
  });

  it("ships the bundle, the configs and its lockfile: no TypeScript, nothing from infra/", () => {
    assert.deepStrictEqual(tarballFiles(tarball), [
      "PulumiPolicy.yaml",
      "config/dev.json",
      "config/example.json",
      "config/prod.json",
      "dist/index.js",
      "npm-shrinkwrap.json",
      "package.json",
    ]);
  });

  it("its bundle requires nothing but @pulumi/policy and Node's own modules", () => {
    const code = fs.readFileSync(path.join(dir, "dist", "index.js"), "utf8");
    const required = [...new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]))];
    assert.deepStrictEqual(
      required.filter((r) => !r.startsWith("node:") && !require("module").builtinModules.includes(r)),
      ["@pulumi/policy"],
    );
  });

  it("offers the same policies at the same levels, with the same config schemas", () => {
    assert.strictEqual(installed.policies.length, REPOSITORY_POLICIES.length);
    assert.deepStrictEqual(installed.policies, repository.policies);
  });

  /** Configures both packs alike and analyzes the stack with each: the installed pack's verdict, once equal. */
  async function sameVerdict(stack: RenderedStack, policyConfig: Record<string, unknown>): Promise<Violation[]> {
    await installed.configure(policyConfig, "config.json");
    await repository.configure(policyConfig, "config.json");
    const got = await installed.analyze(stack);
    assert.deepStrictEqual(got, await repository.analyze(stack));
    return got;
  }

  it("the example stack under its policy config: no violations, as in the repository", async () => {
    assert.deepStrictEqual(await sameVerdict(await renderShipped("example"), config("example")), []);
  });

  it("dev and prod under their own configs pass; each fails the other's the same way", async () => {
    const dev = await renderShipped("dev");
    const prod = await renderShipped("prod");
    assert.deepStrictEqual(await sameVerdict(dev, config("dev")), []);
    assert.deepStrictEqual(await sameVerdict(prod, config("prod")), []);
    const prodUnderDev = await sameVerdict(prod, config("dev"));
    assert.deepStrictEqual(
      prodUnderDev.map((v) => [v.policyName, v.enforcementLevel, v.policyPackName]),
      [
        ["fanout-concurrency-below-quota", "mandatory", "sendtime-guard"],
        ["fanout-concurrency-below-quota", "mandatory", "sendtime-guard"],
      ],
    );
  });

  it("maxConcurrency above the quota fails on the fan-out's state machine, message and URN as in the repository", async () => {
    const stack = await renderWith({ maxConcurrency: "20" });
    const violations = await sameVerdict(stack, config("dev"));
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.urn]),
      [["fanout-concurrency-below-quota", only(stack, "aws:sfn/stateMachine:StateMachine", "fanout").urn]],
    );
    assert.match(violations[0].message, /500 CreateSchedule calls at once .* at most 19/);
  });

  it("a widened public function role and an open trust fail alike (stack policies over AnalyzeStack)", async () => {
    const stack = await renderWith();
    const role = only(stack, "aws:iam/role:Role", "unsubscribe-role");
    const open = { Effect: "Allow", Principal: { AWS: "*" }, Action: "sts:AssumeRole" };
    role.inputs.assumeRolePolicy = role.outputs.assumeRolePolicy = JSON.stringify({
      Version: "2012-10-17",
      Statement: [open],
    });
    const violations = await sameVerdict(stack, config("dev"));
    assert.deepStrictEqual(violations.map((v) => v.policyName).sort(), [
      "public-function-role-minimal",
      "role-trust-not-public",
    ]);
  });

  it("applies the CLI's levels the same way (advisory, disabled)", async () => {
    const low = { "fanout-concurrency-below-quota": { enforcementLevel: "advisory", createScheduleTps: 4000 } };
    const stack = await renderWith();
    assert.deepStrictEqual(
      (await sameVerdict(stack, low)).map((v) => v.enforcementLevel),
      ["advisory", "advisory"],
    );
    assert.deepStrictEqual(await sameVerdict(stack, { all: "disabled" }), []);
  });
});
