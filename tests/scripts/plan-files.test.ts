/** The plan's files when the plan also streams to a sink (the S3 upload): a failing sink is an error, never a crash. */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { OutputLock, PlanFiles } from "../../scripts/lib/core/plan-files";

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
