import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { ROOT } from "../helpers/cli";
import { loadWorkflowParser } from "../helpers/workflow-parser";

const FILE = path.join(ROOT, ".github", "workflows", "preview.yml");
const TEXT = fs.readFileSync(FILE, "utf8");

/**
 * The inputs of pulumi/actions (its action.yml) this workflow may use; a misspelled one (`policyPack`) would be
 * ignored by the runner with only a warning, and the preview would run without the pack.
 */
const PULUMI_ACTION_INPUTS = new Set([
  "command",
  "stack-name",
  "work-dir",
  "cloud-url",
  "comment-on-pr",
  "github-token",
  "secrets-provider",
  "policyPacks",
  "policyPackConfigs",
  "refresh",
  "upsert",
  "diff",
  "color",
]);

/** GitHub's own parser: the errors it reports for a workflow text (schema, expressions, keys). */
async function workflowErrors(content: string): Promise<string[]> {
  const { parseWorkflow, NoOperationTraceWriter } = await loadWorkflowParser();
  const result = parseWorkflow({ name: ".github/workflows/preview.yml", content }, new NoOperationTraceWriter());
  return result.context.errors.getErrors().map((e) => e.message);
}

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

describe(".github/workflows/preview.yml (validated with @actions/workflow-parser)", function () {
  this.timeout(20_000);
  const workflow = parse(TEXT) as {
    on: Record<string, unknown>;
    jobs: Record<string, { strategy: { matrix: { stack: string[] } }; steps: Step[] }>;
  };
  const job = Object.values(workflow.jobs)[0];
  const pulumi = job.steps.find((s) => s.uses?.startsWith("pulumi/actions@"))!;

  it("is a valid workflow for GitHub's parser", async () => {
    assert.deepStrictEqual(await workflowErrors(TEXT), []);
  });

  it("the parser catches a planted error (a misspelled key, a non-number timeout)", async () => {
    const misspelled = TEXT.replace("    runs-on: ubuntu-latest", "    runs_on: ubuntu-latest");
    assert.notStrictEqual(misspelled, TEXT);
    const errors = await workflowErrors(misspelled);
    assert.ok(
      errors.some((e) => /runs_on/.test(e)),
      errors.join("\n"),
    );
    const badTimeout = TEXT.replace("timeout-minutes: 30", "timeout-minutes: soon");
    assert.ok((await workflowErrors(badTimeout)).length > 0);
  });

  it("runs on pull requests: pulumi/actions previews every stack with the policy pack and that stack's policy config", () => {
    assert.ok("pull_request" in workflow.on);
    assert.ok(pulumi, "a step uses pulumi/actions");
    assert.strictEqual(pulumi.with!.command, "preview");
    assert.strictEqual(pulumi.with!["stack-name"], "${{ matrix.stack }}");
    assert.strictEqual(pulumi.with!.policyPacks, "policy");
    assert.strictEqual(pulumi.with!.policyPackConfigs, "policy/config/${{ matrix.stack }}.json");
    for (const k of Object.keys(pulumi.with!))
      assert.ok(PULUMI_ACTION_INPUTS.has(k), `pulumi/actions has no input "${k}"`);
  });

  it("builds the pack's bundle (package.json main) after npm ci and before the preview", () => {
    const main = JSON.parse(fs.readFileSync(path.join(ROOT, "policy", "package.json"), "utf8")).main;
    assert.strictEqual(main, "dist/index.js");
    const at = (run: string) => job.steps.findIndex((s) => s.run?.startsWith(run));
    assert.ok(at("npm ci") >= 0 && at("npm ci") < at("npm run build"), "npm ci, then npm run build");
    assert.ok(at("npm run build") < job.steps.indexOf(pulumi), "the build before pulumi/actions");
  });

  it("every stack it previews exists, with its policy config; the pack is the repository's", () => {
    assert.ok(fs.existsSync(path.join(ROOT, "policy", "PulumiPolicy.yaml")));
    const stacks = job.strategy.matrix.stack;
    // Pulumi.example.yaml is a reference config (previewed offline by the tests), not a deployed stack.
    const stackFiles = fs
      .readdirSync(ROOT)
      .filter((f) => /^Pulumi\.[^.]+\.yaml$/.test(f) && f !== "Pulumi.example.yaml");
    assert.deepStrictEqual(
      [...stacks].sort(),
      stackFiles.map((f) => f.split(".")[1]).sort(),
      "one preview per Pulumi.<stack>.yaml",
    );
    for (const stack of stacks)
      assert.ok(fs.existsSync(path.join(ROOT, "policy", "config", `${stack}.json`)), `policy/config/${stack}.json`);
  });
});
