import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ROOT } from "../helpers/cli";

type Counts = { passed: number; failed: number; pending: number } | null;
const { summary } = require(path.join(ROOT, "tools", "test.js")) as { summary: (output: string) => Counts };

/** Two small suites, in plain JavaScript (no config, no ts-node): 4 pass, 3 fail, 2 are pending, by construction. */
function suites(dir: string): string[] {
  const a = `describe("a", () => {
  it("1 passing (1s)", () => {});
  it("two", () => {});
  it.skip("three", () => {});
  it("fails with a summary in its message", () => { throw new Error("\\n\\n  99 passing (1s)\\n  0 failing\\n"); });
});`;
  const b = `describe("b", () => {
  it("one", () => {});
  it("two", () => {});
  it("fails", () => { throw new Error("no"); });
  it("fails too", async () => { throw new Error("  5 failing"); });
  it.skip("pending", () => {});
});`;
  fs.writeFileSync(path.join(dir, "a.test.js"), a);
  fs.writeFileSync(path.join(dir, "b.test.js"), b);
  return ["a.test.js", "b.test.js"];
}

describe("npm test's summary line (tools/test.js), read from mocha's own output", function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "npm-test-"))));

  for (const mode of [[], ["--parallel", "--jobs", "2"]])
    it(`counts what mocha ran ${mode.length ? "in parallel" : "serially"}, whatever the titles and messages say`, () => {
      const files = suites(dir);
      const r = spawnSync(process.execPath, [require.resolve("mocha/bin/mocha.js"), ...mode, ...files], {
        cwd: dir,
        encoding: "utf8",
      });
      assert.strictEqual(r.status, 3, r.stderr);
      assert.deepStrictEqual(summary(r.stdout), { passed: 4, failed: 3, pending: 2 });
    });

  it("gives 0 for a count mocha leaves out, and null when mocha printed no summary", () => {
    assert.deepStrictEqual(summary("\n  a\n    ✔ b\n\n\n  1 passing (3ms)\n\n"), { passed: 1, failed: 0, pending: 0 });
    assert.strictEqual(summary("Error: Cannot find module 'x'\n"), null);
  });
});
