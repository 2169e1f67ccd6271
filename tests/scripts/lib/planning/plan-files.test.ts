/** The plan's files when the plan also streams to a sink (the S3 upload): a failing sink is an error, never a crash. */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { lineText, PlanFiles } from "../../../../scripts/lib/planning/plan-files";
import { OutputLock } from "../../../../scripts/lib/planning/output-folder";

describe("plan files with a plan sink", () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-planfiles-"))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("a sink that fails while the local file waits for the disk: the write rejects with the sink's error, and nothing is left unhandled", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    const lock = OutputLock.acquire(path.join(tmp, "out"));
    const files = new PlanFiles(lock, { planSink: { write: () => Promise.reject(new Error("S3: AccessDenied")) } });
    try {
      // 1 MiB of lines: the local stream needs a drain, during which the sink's promise has already rejected.
      const line = JSON.stringify({ schedule_name: "x".repeat(200) }) + "\n";
      let failure: unknown;
      try {
        for (let i = 0; i < 8_000 && failure === undefined; i++) await files.writePlan(line);
      } catch (e) {
        failure = e;
      }
      await new Promise((r) => setImmediate(r));
      assert.strictEqual(unhandled.length, 0, `unhandled rejection: ${unhandled.map(String).join("; ")}`);
      assert.match(String(failure), /S3: AccessDenied/);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      files.abort();
      lock.release();
    }
  });
});

describe("plan files: what is written is what was given, across the writers' flushes", () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-plan-files-"))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("plan lines (non-ASCII, one longer than a buffer) and a reject with a 2 MB id arrive whole, in order, with the plan's sha256", async () => {
    const lock = OutputLock.acquire(dir);
    const files = new PlanFiles(lock);
    const expected: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      // Multi-byte characters (2, 3 and 4 bytes of UTF-8) so that lines cross buffer boundaries mid-character.
      const line = `{"n":${i},"name":"Chloé ${"日本".repeat(i % 50)} 🎉","pad":"${"x".repeat(i % 300)}"}\n`;
      expected.push(line);
      await files.writePlan(line);
      if (i === 10_000) {
        const long = `{"long":"${"é".repeat(600_000)}"}\n`; // 1.2 MB of UTF-8, more than a writer's buffer
        expected.push(long);
        await files.writePlan(long);
      }
    }
    const longId = "i".repeat(2_000_000);
    await files.reject({ line: 7, id: longId, reason: "missing-id", text: "why" });
    const sha = await files.close();
    files.commit({});
    lock.release();
    const plan = fs.readFileSync(path.join(dir, "plan.jsonl"));
    assert.strictEqual(plan.toString("utf8"), expected.join(""));
    assert.strictEqual(sha, createHash("sha256").update(plan).digest("hex"));
    assert.strictEqual(fs.readFileSync(path.join(dir, "rejects.csv"), "utf8"), `line,id,reason\n7,${longId},why\n`);
  });
});

describe("line numbers in the files", () => {
  it("are the decimal numbers, across every 3-digit group boundary (checked against Number.prototype.toString)", () => {
    const ns = [
      0, 1, 9, 10, 99, 100, 999, 1000, 1001, 1010, 1100, 9999, 10_000, 100_007, 999_999, 1_000_000, 1_000_001,
      1_234_567_890,
    ];
    for (let n = 0; n < 20_000; n += 7) ns.push(n);
    for (const n of ns) assert.strictEqual(lineText(n), n.toString(10), `line ${n}`);
  });
});
