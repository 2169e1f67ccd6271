/**
 * import-pinpoint --put-sms-opt-outs on the wire: PutOptedOutNumber (AWS JSON 1.0) to a local stand-in for End User
 * Messaging SMS reached through AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2 (the SDK's service id "Pinpoint SMS Voice V2"):
 * the requests asserted, a dry run that sends none, throttling retried, and a hang bounded by --timeout-seconds.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../../scripts/import-pinpoint";
import { Answer, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { ROOT, runMain } from "../helpers/cli";

const FIXTURE = path.join(ROOT, "tests", "fixtures", "pinpoint", "sms-export");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pinpoint-sms-wire-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(outputs, JSON.stringify({ smsOptOutListName: "sendtime-dev-sms-opt-outs", region: "us-east-1" }));

let runs = 0;
async function run(handler: (r: SeenRequest) => Answer, more: string[] = []) {
  const endpoint = await startEndpoint(handler);
  try {
    const args = ["--endpoints", FIXTURE, "--out", path.join(tmp, `out-${++runs}`), "--put-sms-opt-outs"];
    const r = await withEnv({ AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2: endpoint.url }, () =>
      runMain(main, [...args, "--outputs", outputs, ...more]),
    );
    return { ...r, requests: endpoint.requests };
  } finally {
    await endpoint.close();
  }
}

const OK: Answer = { json: { OptOutListArn: "arn:aws:sms-voice:us-east-1:123456789012:opt-out-list/x" } };
const bodies = (requests: SeenRequest[]) => requests.map((q) => [q.target, JSON.parse(q.body)]);

describe("import-pinpoint --put-sms-opt-outs (End User Messaging SMS on the wire)", () => {
  it("puts each opted-out number of the export, once, into the stack's opt-out list", async () => {
    const r = await run(() => OK);
    assert.strictEqual(r.code, 0, r.stderr);
    const target = "PinpointSMSVoiceV2.PutOptedOutNumber";
    assert.deepStrictEqual(bodies(r.requests), [
      [target, { OptOutListName: "sendtime-dev-sms-opt-outs", OptedOutNumber: "+12065550104" }],
      [target, { OptOutListName: "sendtime-dev-sms-opt-outs", OptedOutNumber: "+12065550112" }],
    ]);
    assert.match(r.stdout, /SMS opt-outs: put 2 numbers into the opt-out list sendtime-dev-sms-opt-outs/);
  });

  it("--dry-run sends nothing and says what it would put", async () => {
    const r = await run(() => OK, ["--dry-run"]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.requests.length, 0);
    assert.match(
      r.stdout,
      /SMS opt-outs \(dry run\): would put 2 numbers into the opt-out list sendtime-dev-sms-opt-outs/,
    );
  });

  it("--sms-opt-out-list names another list (an ARN of a shared one)", async () => {
    const arn = "arn:aws:sms-voice:us-east-1:123456789012:opt-out-list/shared";
    const r = await run(() => OK, ["--sms-opt-out-list", arn]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.requests.map((q) => JSON.parse(q.body).OptOutListName),
      [arn, arn],
    );
  });

  it("a throttled call is retried by the SDK and the number still put", async () => {
    let calls = 0;
    const r = await run(() =>
      ++calls === 1 ? { status: 400, json: { __type: "ThrottlingException", message: "Rate exceeded" } } : OK,
    );
    assert.strictEqual(r.code, 0, r.stderr);
    // The first number twice (throttled, then put), the second once.
    assert.deepStrictEqual(
      r.requests.map((q) => JSON.parse(q.body).OptedOutNumber),
      ["+12065550104", "+12065550104", "+12065550112"],
    );
  });

  it("an error other than throttling stops with one line naming the call", async () => {
    const r = await run(() => ({
      status: 400,
      json: { __type: "ResourceNotFoundException", message: "opt-out list not found" },
    }));
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /PutOptedOutNumber \+12065550104 into sendtime-dev-sms-opt-outs: ResourceNotFoundException: opt-out list not found/,
    );
    assert.strictEqual(r.requests.length, 1);
  });

  it("a hang is bounded by --timeout-seconds", async () => {
    const started = Date.now();
    const r = await run(() => "hang", ["--timeout-seconds", "1.5"]);
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /no result within the command's time limit of 1\.5 s \(--timeout-seconds\)/);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  });

  it("a stack without SMS (no smsOptOutListName) is refused in one line", async () => {
    const none = path.join(tmp, "no-sms.json");
    fs.writeFileSync(none, JSON.stringify({ region: "us-east-1" }));
    const endpoint = await startEndpoint(() => OK);
    try {
      const r = await withEnv({ AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2: endpoint.url }, () =>
        runMain(main, [
          "--endpoints",
          FIXTURE,
          "--out",
          path.join(tmp, "out-none"),
          "--put-sms-opt-outs",
          "--outputs",
          none,
        ]),
      );
      assert.strictEqual(r.code, 2);
      assert.match(r.stderr, /missing stack output smsOptOutListName/);
      assert.strictEqual(endpoint.requests.length, 0);
    } finally {
      await endpoint.close();
    }
  });
});
