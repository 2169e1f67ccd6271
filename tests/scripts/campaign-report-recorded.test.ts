/**
 * campaign-report --recorded DIR: the report from a recorded launch, offline. `sendtime demo` writes one (its launch
 * record and sample metrics) beside its report; campaign-report reads it with no AWS call and prints the same text,
 * page and JSON. A bad DIR is one line naming the file and what it must hold, exit 2.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { S3Client } from "@aws-sdk/client-s3";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { mockClient } from "aws-sdk-client-mock";
import { main as demo } from "../../scripts/demo";
import { main as report } from "../../scripts/campaign-report";
import { runMain } from "../helpers/cli";

describe("campaign-report --recorded DIR (a recorded launch, offline)", function () {
  this.timeout(60_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-recorded-"));
  const dir = path.join(tmp, "demo");
  const mocks = [mockClient(S3Client), mockClient(CloudWatchClient), mockClient(DynamoDBClient)];
  const read = (...names: string[]) => fs.readFileSync(path.join(...names), "utf8");
  const recorded = (...more: string[]) => runMain(report, ["--campaign", "demo", "--recorded", dir, ...more]);

  before(async () => {
    const run = await runMain(demo, ["--out", dir]);
    assert.strictEqual(run.code, 0, run.stderr);
  });
  afterEach(() => mocks.forEach((m) => assert.strictEqual(m.calls().length, 0, "an AWS call was made")));
  after(() => mocks.forEach((m) => m.restore()));

  it("the demo leaves the recorded launch: the launch record and the metrics, as JSON files", () => {
    const record = JSON.parse(read(dir, "launch-record.json"));
    assert.strictEqual(record.campaignId, "demo");
    assert.deepStrictEqual(
      JSON.parse(read(dir, "plan", "summary.json")).planSha256.slice(0, 16),
      record.launch.id,
      "launched under the plan's hash",
    );
    const metrics = JSON.parse(read(dir, "metrics.json"));
    assert.ok(metrics.metrics.length > 0);
    // The sends counted in the metrics are the plan's lines (every one sent in the sample).
    const sends = metrics.metrics
      .filter((m: { metric: string }) => m.metric === "Send")
      .flatMap((m: { points: [string, number][] }) => m.points.map((p) => p[1]))
      .reduce((a: number, b: number) => a + b, 0);
    assert.strictEqual(sends, read(dir, "plan", "plan.jsonl").trim().split("\n").length);
  });

  it("prints the demo's report text, and with --json its JSON, and with --html its page, with no AWS call", async () => {
    const text = await recorded();
    assert.strictEqual(text.code, 0, text.stderr);
    assert.strictEqual(text.stdout, read(dir, "report.txt"));
    const json = await recorded("--json");
    assert.strictEqual(json.code, 0, json.stderr);
    assert.deepStrictEqual(JSON.parse(json.stdout), JSON.parse(read(dir, "report.json")));
    const page = path.join(tmp, "page.html");
    const html = await recorded("--html", page);
    assert.strictEqual(html.code, 0, html.stderr);
    assert.strictEqual(read(page), read(dir, "report.html"));
  });

  it("--to earlier than the metrics' end reports the range it gives", async () => {
    const r = await recorded("--json", "--to", JSON.parse(read(dir, "launch-record.json")).firstSend);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(JSON.parse(r.stdout).range.to, JSON.parse(read(dir, "launch-record.json")).firstSend);
  });

  it("a bad DIR: one line naming the folder or file and what it must hold, exit 2", async () => {
    const bad = path.join(tmp, "bad");
    const cases: [() => void, RegExp][] = [
      [() => {}, /^error: --recorded .*bad: no such folder \(expected the folder `sendtime demo` writes/],
      [() => fs.mkdirSync(bad), /^error: .*bad\/launch-record\.json: no such file \(expected a launch record/],
      [
        () => fs.writeFileSync(path.join(bad, "launch-record.json"), "{ not json"),
        /^error: .*bad\/launch-record\.json: not JSON \(.*\); expected a launch record/,
      ],
      [
        () => fs.writeFileSync(path.join(bad, "launch-record.json"), '{"campaignId": "demo"}'),
        /^error: .*bad\/launch-record\.json: expected a launch record as the launcher stores it/,
      ],
      [
        () => fs.copyFileSync(path.join(dir, "launch-record.json"), path.join(bad, "launch-record.json")),
        /^error: .*bad\/metrics\.json: no such file \(expected the SES metrics/,
      ],
      [
        () => fs.writeFileSync(path.join(bad, "metrics.json"), '{"to": "2026-12-05T00:00:00Z", "metrics": [{}]}'),
        /^error: .*bad\/metrics\.json: expected the SES metrics \(a JSON object: "to"/,
      ],
    ];
    for (const [setUp, line] of cases) {
      setUp();
      const r = await runMain(report, ["--campaign", "demo", "--recorded", bad]);
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(r.stderr, line);
      assert.strictEqual(r.stderr.split("\n").length, 2, r.stderr);
      assert.strictEqual(r.stdout, "");
    }
  });

  it("refuses a stack flag beside it, and another campaign's launch", async () => {
    const stack = await recorded("--stack", "dev");
    assert.strictEqual(stack.code, 2);
    assert.match(stack.stderr, /^error: --stack with --recorded: a recorded launch reads no stack/);
    const other = await runMain(report, ["--campaign", "spring", "--recorded", dir]);
    assert.strictEqual(other.code, 2);
    assert.match(other.stderr, /its launch is of campaign demo, not spring/);
  });
});
