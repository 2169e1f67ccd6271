import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { S3Client } from "@aws-sdk/client-s3";
import { SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";
import { main } from "../../scripts/launch-campaign";
import { uploadLimits } from "../../scripts/lib/aws/plan-upload";
import { withFlags } from "../helpers/cli";
import { LocalS3, startLocalS3 } from "../helpers/s3-server";
import { InputError } from "../../infra/core/errors";
import { PREFLIGHT_OUTPUTS, sesHasEveryTemplate } from "../helpers/ses";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-scale-"));
let runs = 0;

/** Runs the launcher in-process on the 8-row fixture (4 recipients planned × 2 steps = 8 schedules). */
async function launch(...more: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  let stdout = "",
    stderr = "";
  const code = await main(
    withFlags(
      [
        ...["--campaign", "spring", "--recipients", "tests/fixtures/campaign.csv", "--template", "spring-sale"],
        ...["--date", "2026-12-01", "--hour", "9", "--step", "+3d:spring-followup", "--now", "2026-11-30T12:00:00Z"],
        ...["--out", out],
      ],
      more,
    ),
    { out: (t) => (stdout += t), err: (t) => (stderr += t) },
  );
  return { code, stdout, stderr, out, planKept: fs.existsSync(path.join(out, "plan.jsonl")) };
}

function outputs(extra: object) {
  const file = path.join(tmp, `outputs-${++runs}.json`);
  const stateMachineArn = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev";
  fs.writeFileSync(
    file,
    JSON.stringify({
      bucketName: "recipients-ce6a540",
      stateMachineArn,
      region: "us-east-1",
      ...PREFLIGHT_OUTPUTS,
      ...extra,
    }),
  );
  return file;
}

describe("launch-campaign: the schedule quota is checked before anything is uploaded", () => {
  sesHasEveryTemplate();
  // Any AWS call fails the test: the refusal must come before the first one. Mocked for this block only (from
  // before(), not when the file loads): other files' tests call a real S3 on 127.0.0.1 in this process.
  let s3: AwsClientStub<S3Client>;
  let sfn: AwsClientStub<SFNClient>;
  before(() => {
    s3 = mockClient(S3Client);
    sfn = mockClient(SFNClient);
  });
  beforeEach(() => {
    s3.reset();
    sfn.reset();
    s3.onAnyCommand().rejects(new Error("no S3 call expected"));
    sfn.onAnyCommand().rejects(new Error("no Step Functions call expected"));
  });
  after(() => {
    s3.restore();
    sfn.restore();
  });

  it("refuses a plan above the stack output maxSchedules: exit 1, the count, the quota, what to do; nothing uploaded", async () => {
    const r = await launch("--outputs", outputs({ maxSchedules: 7 }));
    assert.strictEqual(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /Not launched: the plan has 8 schedules \(4 recipients, 2 steps\), above the schedule quota of 7 \(stack output maxSchedules\)/,
    );
    // 7 ÷ 2 steps = 3 recipients a campaign; 4 recipients → 2 campaigns.
    assert.match(r.stdout, /split the list into 2 campaigns of at most 3 recipients each/);
    assert.match(
      r.stdout,
      /raise the EventBridge Scheduler schedules quota of the Region \(Service Quotas\) and pass the new value with --max-schedules/,
    );
    assert.match(r.stdout, /nothing was uploaded or started/);
    assert.strictEqual(s3.calls().length, 0, "no S3 call");
    assert.strictEqual(sfn.calls().length, 0, "no Step Functions call");
    assert.ok(r.planKept, "the plan is kept for review");
  });

  it("--max-schedules wins over the stack output; a plan exactly at the quota is not refused by it", async () => {
    const refused = await launch("--outputs", outputs({ maxSchedules: 100 }), "--max-schedules", "7");
    assert.strictEqual(refused.code, 1);
    assert.match(refused.stdout, /above the schedule quota of 7 \(--max-schedules\)/);
    assert.strictEqual(s3.calls().length + sfn.calls().length, 0);

    const atQuota = await launch("--dry-run", "--max-schedules", "8", "--json");
    assert.strictEqual(atQuota.code, 0, atQuota.stdout);
    assert.deepStrictEqual(JSON.parse(atQuota.stdout).scheduleQuota, {
      maxSchedules: 8,
      source: "--max-schedules",
      fits: true,
    });
  });

  it("a dry run reports the same refusal and exits 1", async () => {
    const r = await launch("--dry-run", "--max-schedules", "5");
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stdout,
      /Not launched: the plan has 8 schedules \(4 recipients, 2 steps\), above the schedule quota of 5 \(--max-schedules\)/,
    );
    const json = await launch("--dry-run", "--max-schedules", "5", "--json");
    assert.strictEqual(json.code, 1);
    assert.deepStrictEqual(JSON.parse(json.stdout).scheduleQuota, {
      maxSchedules: 5,
      source: "--max-schedules",
      fits: false,
    });
  });

  it("without a flag or stack output the quota is Scheduler's default, 10,000,000, and says so", async () => {
    const r = await launch("--dry-run", "--json");
    assert.strictEqual(r.code, 0);
    const q = JSON.parse(r.stdout).scheduleQuota;
    assert.strictEqual(q.maxSchedules, 10_000_000);
    assert.match(q.source, /EventBridge Scheduler's default quota/);
  });

  it("a bad --max-schedules is a usage error naming the flag", async () => {
    await assert.rejects(
      launch("--dry-run", "--max-schedules", "lots"),
      /--max-schedules lots: must be a whole number from 1/,
    );
  });
});

describe("launch-campaign --recipients s3://… (a local S3 endpoint, real wire format)", function () {
  sesHasEveryTemplate();
  this.timeout(30_000);
  let server: LocalS3;
  const saved: Record<string, string | undefined> = {};
  before(async () => {
    server = await startLocalS3();
    const env = {
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
      AWS_REGION: "us-east-1",
      AWS_ENDPOINT_URL_S3: server.endpoint,
    };
    for (const [k, v] of Object.entries(env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    await server.close();
  });

  it("plans the same recipients as from the local file, reading the object once (one GET, nothing else)", async () => {
    server.objects.set("lists/dec/campaign.csv", fs.readFileSync("tests/fixtures/campaign.csv"));
    server.requests.length = 0;
    const local = await launch("--dry-run");
    const fromS3 = await launch("--dry-run", "--recipients", "s3://lists/dec/campaign.csv");
    assert.strictEqual(fromS3.code, 0, fromS3.stderr);
    assert.deepStrictEqual(
      server.requests.map((r) => `${r.method} ${r.path}`),
      ["GET lists/dec/campaign.csv"],
    );
    const read = (r: { out: string }, f: string) => fs.readFileSync(path.join(r.out, f), "utf8");
    assert.strictEqual(read(fromS3, "plan.jsonl"), read(local, "plan.jsonl"));
    assert.strictEqual(read(fromS3, "rejects.csv"), read(local, "rejects.csv"));
  });

  it("bounds the fan-out ETA by the object's size (no second read): 412 bytes ÷ 11-byte shortest row = 37 rows", async () => {
    server.objects.set("lists/dec/campaign.csv", fs.readFileSync("tests/fixtures/campaign.csv"));
    const r = await launch("--dry-run", "--json", "--create-tps", "1", "--recipients", "s3://lists/dec/campaign.csv");
    // 5 columns: id (1) + address a@b.c (5) + 4 commas + line break = 11 bytes; 412 ÷ 11 → 37 rows × 2 steps at 1/s
    // = 74 s, + 5 minutes of margin after now (12:00:00).
    assert.strictEqual(JSON.parse(r.stdout).missed.cutoff, "2026-11-30T12:06:14.000Z");
  });

  it("a missing object is one line naming it (exit 2), before anything is planned", async () => {
    await assert.rejects(
      launch("--dry-run", "--recipients", "s3://lists/nope.csv"),
      (e: unknown) =>
        e instanceof InputError && /^s3:\/\/lists\/nope\.csv: no such object \(NoSuchKey\)/.test(e.message),
    );
  });

  it("list in S3, plan to S3 (--no-local-plan): one GET, the plan's parts streamed and checked, no local copy of either", async () => {
    server.objects.set("lists/dec/campaign.csv", fs.readFileSync("tests/fixtures/campaign.csv"));
    server.requests.length = 0;
    const local = await launch("--dry-run");
    const planText = fs.readFileSync(path.join(local.out, "plan.jsonl"));
    const saved = { ...uploadLimits };
    uploadLimits.partBytes = 1_024; // the 3 KB plan: multipart, parts sent while it is written
    const sfn = mockClient(SFNClient);
    sfn.on(StartExecutionCommand).resolves({ executionArn: "arn:aws:states:us-east-1:123456789012:execution:f:x" });
    try {
      const r = await launch(
        "--outputs",
        outputs({}),
        "--recipients",
        "s3://lists/dec/campaign.csv",
        "--no-local-plan",
        "--launch-id",
        "s3-1",
      );
      assert.strictEqual(r.code, 0, r.stderr);
      assert.ok(!r.planKept, "no plan.jsonl on disk");
      const key = "recipients-ce6a540/plans/spring/s3-1.jsonl";
      assert.deepStrictEqual(server.objects.get(key), planText, "S3 holds the plan byte for byte");
      const calls = server.requests.map(
        (q) => `${q.method} ${q.path}${q.query.has("partNumber") ? ` part ${q.query.get("partNumber")}` : ""}`,
      );
      const parts = Math.ceil(planText.length / 1_024);
      assert.deepStrictEqual(calls, [
        "GET lists/dec/campaign.csv",
        `POST ${key}`,
        ...Array.from({ length: parts }, (_, i) => `PUT ${key} part ${i + 1}`),
        `POST ${key}`,
        `HEAD ${key}`,
        "PUT recipients-ce6a540/launches/spring/s3-1.json",
      ]);
      assert.strictEqual(
        JSON.parse(sfn.commandCalls(StartExecutionCommand)[0].args[0].input.input!).plan_key,
        "plans/spring/s3-1.jsonl",
      );
    } finally {
      sfn.restore();
      Object.assign(uploadLimits, saved);
    }
  });

  it("a malformed row in the object is reported with the S3 URL and line, like a local file", async () => {
    server.objects.set("lists/bad.csv", Buffer.from('id,email\nu1,a@example.com\nu2,"b@example.com\n'));
    await assert.rejects(
      launch("--dry-run", "--recipients", "s3://lists/bad.csv"),
      /s3:\/\/lists\/bad\.csv:3: malformed CSV: the file ends inside a quoted field/,
    );
  });
});
