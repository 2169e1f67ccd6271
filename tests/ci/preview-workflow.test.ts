import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
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
  id?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

/** The stacks job's listing step run by bash in `dir`: its exit code, stderr and the `stacks` output it wrote. */
function listStacks(script: string, dir: string): { status: number | null; stdout: string; stacks?: unknown } {
  const output = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gh-output-")), "out");
  fs.writeFileSync(output, "");
  const r = spawnSync("bash", ["-e", "-c", script], {
    cwd: dir,
    env: { ...process.env, GITHUB_OUTPUT: output },
    encoding: "utf8",
  });
  const line = fs.readFileSync(output, "utf8").match(/^stacks=(.*)$/m);
  return { status: r.status, stdout: r.stdout, stacks: line ? JSON.parse(line[1]) : undefined };
}

describe(".github/workflows/preview.yml (validated with @actions/workflow-parser)", function () {
  this.timeout(20_000);
  const workflow = parse(TEXT) as {
    on: Record<string, unknown>;
    jobs: Record<
      string,
      { needs?: string; outputs?: Record<string, string>; strategy: { matrix: { stack: unknown } }; steps: Step[] }
    >;
  };
  const job = workflow.jobs.preview;
  const list = workflow.jobs.stacks.steps.find((s) => s.id === "list")!;
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

  it("previews the stacks the first job lists: one per Pulumi.<stack>.yaml, not a list kept by hand", () => {
    assert.strictEqual(job.needs, "stacks");
    assert.strictEqual(job.strategy.matrix.stack, "${{ fromJSON(needs.stacks.outputs.stacks) }}");
    assert.strictEqual(workflow.jobs.stacks.outputs!.stacks, "${{ steps.list.outputs.stacks }}");
    assert.ok(fs.existsSync(path.join(ROOT, "policy", "PulumiPolicy.yaml")));
    // Pulumi.example.yaml is a reference config (previewed offline by the tests), not a deployed stack.
    const stackFiles = fs
      .readdirSync(ROOT)
      .filter((f) => /^Pulumi\.[^.]+\.yaml$/.test(f) && f !== "Pulumi.example.yaml")
      .map((f) => f.split(".")[1]);
    assert.ok(stackFiles.length >= 2);
    const listed = listStacks(list.run!, ROOT);
    assert.strictEqual(listed.status, 0);
    assert.deepStrictEqual(listed.stacks, stackFiles.sort());
    for (const stack of stackFiles)
      assert.ok(fs.existsSync(path.join(ROOT, "policy", "config", `${stack}.json`)), `policy/config/${stack}.json`);
  });

  it("a new stack file is listed without editing the workflow; one without its policy config fails the job, named", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stacks-"));
    fs.mkdirSync(path.join(dir, "policy", "config"), { recursive: true });
    for (const f of ["Pulumi.yaml", "Pulumi.example.yaml", "Pulumi.dev.yaml", "Pulumi.staging-eu.yaml"])
      fs.writeFileSync(path.join(dir, f), "config: {}\n");
    for (const f of ["dev.json", "staging-eu.json"]) fs.writeFileSync(path.join(dir, "policy", "config", f), "{}");
    assert.deepStrictEqual(listStacks(list.run!, dir).stacks, ["dev", "staging-eu"]);
    fs.writeFileSync(path.join(dir, "Pulumi.qa.yaml"), "config: {}\n");
    const missing = listStacks(list.run!, dir);
    assert.strictEqual(missing.status, 1);
    assert.match(missing.stdout, /Pulumi\.qa\.yaml has no policy config: add policy\/config\/qa\.json/);
    assert.strictEqual(missing.stacks, undefined);
  });
});
