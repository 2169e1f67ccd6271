/**
 * `sendtime <command> [flags]` (scripts/sendtime.ts, package.json bin): every operator script is a command, answering
 * as its own script does; --version, help, and the nearest name for a misspelt command.
 */
import { strict as assert } from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { COMMANDS, main } from "../../scripts/sendtime";
import { main as sizeWindow } from "../../scripts/size-window";
import { ROOT, runMain } from "../helpers/cli";

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

describe("sendtime <command>", function () {
  this.timeout(60_000);

  it("has every operator script as a command (not the generators, the bench or itself), each an npm script too", () => {
    const scripts = fs
      .readdirSync(path.join(ROOT, "scripts"))
      .filter((f) => f.endsWith(".ts") && !/^(gen-|bench|sendtime)/.test(f))
      .map((f) => f.replace(/\.ts$/, ""));
    assert.deepStrictEqual(Object.keys(COMMANDS).sort(), scripts.sort());
    for (const c of Object.keys(COMMANDS))
      assert.strictEqual(pkg.scripts[c], `ts-node --transpile-only scripts/${c}.ts`);
  });

  it("answers as the script itself does", async () => {
    const args = ["--schedules", "250000", "--tps", "500", "--json"];
    const direct = await runMain(sizeWindow, args);
    const through = await runMain(main, ["size-window", ...args]);
    assert.strictEqual(direct.code, 0, direct.stderr);
    assert.deepStrictEqual(through, direct);
  });

  it("--version is package.json's; help lists the commands; nothing given is a usage error", async () => {
    assert.deepStrictEqual(await runMain(main, ["--version"]), {
      code: 0,
      stdout: `sendtime ${pkg.version}\n`,
      stderr: "",
    });
    const help = await runMain(main, ["help"]);
    assert.strictEqual(help.code, 0);
    for (const c of Object.keys(COMMANDS)) assert.match(help.stdout, new RegExp(`^  ${c} +\\S`, "m"));
    const none = await runMain(main, []);
    assert.strictEqual(none.code, 2);
    assert.match(none.stderr, /^Usage: sendtime <command> \[flags\]/);
  });

  it("a misspelt command gets the nearest one, exit 2; one far from all gets none", async () => {
    const r = await runMain(main, ["lanch-campaign", "--dry-run"]);
    assert.deepStrictEqual(r, {
      code: 2,
      stdout: "",
      stderr:
        'error: unknown command "lanch-campaign" (did you mean "launch-campaign"?): sendtime help lists the commands\n',
    });
    assert.match((await runMain(main, ["frobnicate"])).stderr, /^error: unknown command "frobnicate": sendtime help/);
  });

  it("runs as package.json's bin, a process: sendtime --version and a command's flags", () => {
    assert.strictEqual(pkg.bin.sendtime, "bin/sendtime.js");
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(ROOT, pkg.bin.sendtime), ...args], { cwd: ROOT, encoding: "utf8" });
    const v = run("--version");
    assert.deepStrictEqual([v.status, v.stdout], [0, `sendtime ${pkg.version}\n`]);
    const bad = run("size-window", "--schedule", "10");
    assert.strictEqual(bad.status, 2);
    assert.strictEqual(bad.stderr, "error: unknown flag --schedule (did you mean --schedules?) (see --help)\n");
  });
});
