/**
 * The library (`npm pack` of the repository: sendtime/infra, compiled) in a project started from the `pulumi new`
 * template (pulumi-template/), installed outside the repository: the template's program type-checks against the
 * .d.ts, and under Pulumi's mocks renders the same resources as the repository's own program with the same config.
 * `npm run test:packages` (not `npm test`: the build and the install take a minute or more).
 */
import * as assert from "assert";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { renderStack, readStackConfig } from "../../scripts/lib/offline/mock-stack";
import { emptyFolder, installTemplate, pack, tarballFiles } from "../helpers/packed";

/** The minimal dev stack's config, with the example stack's journey: its handler is bundled from the package. */
const CONFIG = {
  ...readStackConfig("dev"),
  "sendtime:journeys": readStackConfig("example")["sendtime:journeys"],
  "sendtime:templatesDir": "none",
};

interface Rendered {
  registered?: { type: string; name: string; custom: boolean }[];
  outputs?: Record<string, unknown>;
  error?: string;
}

describe("the library packed, in a project made from the pulumi new template", function () {
  this.timeout(600_000);
  let tarball: string;
  let project: string;

  /** The project's own TypeScript compiler on a tsconfig of the project: its exit code and output. */
  const tsc = (tsconfig: string) =>
    spawnSync(process.execPath, [path.join(project, "node_modules", "typescript", "bin", "tsc"), "-p", tsconfig], {
      cwd: project,
      encoding: "utf8",
    });
  /** The compiled program under mocks, in the project (nothing of the repository on its module path). */
  const render = (config: Record<string, string>): Rendered => {
    const out = execFileSync(process.execPath, ["render-under-mocks.js", "bin/index.js"], {
      cwd: project,
      encoding: "utf8",
      env: { ...process.env, CONFIG: JSON.stringify(config), NODE_PATH: "" },
    });
    return JSON.parse(out.trim().split("\n").pop()!);
  };

  before(() => {
    tarball = pack(".", emptyFolder("sendtime-tarball"));
    project = installTemplate(tarball, emptyFolder("sendtime-project"));
    fs.copyFileSync(path.join(__dirname, "render-under-mocks.js"), path.join(project, "render-under-mocks.js"));
  });

  it("ships the compiled library and its declarations, not the repository's sources", () => {
    const files = tarballFiles(tarball);
    assert.ok(files.includes("dist/infra/sendtime.js") && files.includes("dist/infra/sendtime.d.ts"));
    assert.ok(files.includes("dist/infra/handlers/journeys.js"), "the handlers, which the component bundles");
    assert.deepStrictEqual(
      files.filter((f) => !f.startsWith("dist/infra/")),
      ["LICENSE", "README.md", "bin/sendtime.js", "package.json"],
    );
    assert.deepStrictEqual(
      files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")),
      [],
    );
  });

  it("resolves sendtime/infra through package.json exports, and nothing deeper", () => {
    const resolve = (id: string) =>
      spawnSync(process.execPath, ["-p", `require.resolve(${JSON.stringify(id)})`], { cwd: project, encoding: "utf8" });
    assert.strictEqual(
      resolve("sendtime/infra").stdout.trim(),
      path.join(fs.realpathSync(project), "node_modules", "sendtime", "dist", "infra", "sendtime.js"),
    );
    assert.match(resolve("sendtime/dist/infra/config").stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it("the template's program type-checks with its tsconfig (node resolution) and with nodenext (exports)", () => {
    const node = tsc("tsconfig.json");
    assert.strictEqual(node.status, 0, node.stdout);
    const nodenext = {
      extends: "./tsconfig.json",
      compilerOptions: { module: "nodenext", moduleResolution: "nodenext", noEmit: true },
    };
    fs.writeFileSync(path.join(project, "tsconfig.nodenext.json"), JSON.stringify(nodenext));
    const next = tsc("tsconfig.nodenext.json");
    assert.strictEqual(next.status, 0, next.stdout);
  });

  it("a misspelt argument is a type error naming it", () => {
    const wrong = `import { Sendtime } from "sendtime/infra";\nnew Sendtime("s", { senderIdentity: "example.com", fromAddress: "news@example.com", maxConcurency: 5 });\n`;
    fs.writeFileSync(path.join(project, "wrong.ts"), wrong);
    const config = { extends: "./tsconfig.json", compilerOptions: { noEmit: true }, files: ["wrong.ts"] };
    fs.writeFileSync(path.join(project, "tsconfig.wrong.json"), JSON.stringify(config));
    const result = tsc("tsconfig.wrong.json");
    assert.strictEqual(result.status, 2);
    assert.match(result.stdout, /'maxConcurency' does not exist in type 'SendtimeArgs'/);
  });

  it("under Pulumi's mocks renders the resources the repository's program renders from the same config", async () => {
    const installed = render(CONFIG);
    assert.strictEqual(installed.error, undefined);
    const repository = await renderStack({ stack: "dev", config: CONFIG });
    const names = (list: { type: string; name: string }[]) => list.map((r) => `${r.type}::${r.name}`).sort();
    assert.deepStrictEqual(names(installed.registered!), names(repository.resources));
    assert.ok(
      installed.registered!.some((r) => r.type === "aws:lambda/function:Function" && r.name === "journeys-function"),
    );
    assert.deepStrictEqual(Object.keys(installed.outputs!).sort(), Object.keys(repository.outputs).sort());
    // Values that do not come from the mocks' made-up ids and ARNs: the same as the repository's.
    for (const key of ["fromAddress", "scheduleGroupPrefix", "createScheduleTps", "maxSchedules", "journeyDefinitions"])
      assert.deepStrictEqual(installed.outputs![key], repository.outputs[key], key);
    assert.strictEqual(installed.outputs!.fromAddress, "news@mail.example.com");
  });

  it("a misspelt config key stops the program with the key named, as in the repository", () => {
    const { error } = render({ ...CONFIG, "sendtime:maxConcurency": "5" });
    assert.strictEqual(
      error,
      "sendtime:maxConcurency is not a sendtime setting: did you mean sendtime:maxConcurrency?",
    );
  });
});
