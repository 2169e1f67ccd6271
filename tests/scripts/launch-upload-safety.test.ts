/**
 * Launching twice under one name, against a local S3 (real wire format, conditional writes) and a local Step
 * Functions endpoint that answers StartExecution as AWS does for a Standard state machine: the same name with the
 * identical input while that execution runs is answered with its ARN (idempotent); the same name otherwise is
 * ExecutionAlreadyExists.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../../scripts/launch-campaign";
import { uploadLimits, cleanupLimits } from "../../scripts/lib/aws/plan-upload";
import { failure } from "../../scripts/lib/cli/run";
import { Endpoint, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { withFlags } from "../helpers/cli";
import { LocalS3, startLocalS3 } from "../helpers/s3-server";
import { preflightOutputsFile, sesHasEveryTemplate } from "../helpers/ses";

const BUCKET = "recipients-ce6a540";
const STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-resubmit-"));
/** Plan B: the same list with one address changed, so the same send times and the same StartExecution input. */
const LIST_B = path.join(tmp, "campaign-b.csv");
fs.writeFileSync(
  LIST_B,
  fs.readFileSync("tests/fixtures/campaign.csv", "utf8").replace("ann@example.com", "ann.b@example.com"),
);
let runs = 0;

/** Step Functions' StartExecution for a Standard state machine, by execution name. */
function stepFunctions() {
  const executions = new Map<string, { input: string; arn: string; status: "RUNNING" | "SUCCEEDED" }>();
  const handler = (r: SeenRequest) => {
    if (r.target !== "AWSStepFunctions.StartExecution")
      return { status: 400, json: { __type: "UnknownOperationException" } };
    const { name, input } = JSON.parse(r.body);
    const known = executions.get(name);
    if (known && !(known.status === "RUNNING" && known.input === input))
      return {
        status: 400,
        json: { __type: "ExecutionAlreadyExists", message: `Execution Already Exists: '${known.arn}'` },
      };
    const arn = known?.arn ?? `arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:${name}`;
    executions.set(name, { input, arn, status: "RUNNING" });
    return { json: { executionArn: arn, startDate: 1.8e9 } };
  };
  return { executions, handler };
}

describe("launch-campaign: a second launch under the same name never replaces what the first one stored", function () {
  sesHasEveryTemplate();
  this.timeout(20_000);
  let s3: LocalS3;
  let sfnEndpoint: Endpoint;
  let sfn: ReturnType<typeof stepFunctions>;
  let hangStart = false;
  let loseStartAnswer = false;
  const savedLimits = { ...uploadLimits };
  const savedCleanup = { ...cleanupLimits };
  before(async () => {
    s3 = await startLocalS3();
    sfnEndpoint = await startEndpoint((r) => {
      if (hangStart) return "hang";
      const answer = sfn.handler(r);
      if (!loseStartAnswer || r.target !== "AWSStepFunctions.StartExecution") return answer;
      // The execution started (and, a small plan, ended at once), but its answer is lost: the SDK retries.
      loseStartAnswer = false;
      for (const e of sfn.executions.values()) e.status = "SUCCEEDED";
      return { status: 500, json: { __type: "InternalServerError", message: "lost" } };
    });
  });
  beforeEach(() => {
    sfn = stepFunctions();
    hangStart = false;
    loseStartAnswer = false;
    sfnEndpoint.requests.length = 0;
    s3.objects.clear();
    s3.checksums.clear();
    s3.openUploads.clear();
    s3.failures.clear();
    s3.hangs.clear();
    s3.requests.length = 0;
  });
  afterEach(() => {
    Object.assign(uploadLimits, savedLimits);
    if (cleanupLimits) Object.assign(cleanupLimits, savedCleanup);
  });
  after(async () => {
    await s3.close();
    await sfnEndpoint.close();
  });

  /** One in-process run; a thrown error becomes its exit code and the one line runMain prints. */
  async function launch(...more: string[]) {
    const out = path.join(tmp, `run-${++runs}`);
    let stdout = "",
      stderr = "";
    const args = withFlags(
      [
        ...[
          "--campaign",
          "spring",
          "--recipients",
          "tests/fixtures/campaign.csv",
          "--template",
          "spring-sale",
          "--hour",
          "9",
        ],
        ...["--date", "2026-12-01", "--step", "+3d:spring-followup", "--now", "2026-11-30T12:00:00Z", "--out", out],
        ...["--bucket", BUCKET, "--state-machine-arn", STATE_MACHINE, "--region", "us-east-1"],
        ...["--outputs", preflightOutputsFile(tmp)],
      ],
      more,
    );
    const started = Date.now();
    const code = await withEnv({ AWS_ENDPOINT_URL_S3: s3.endpoint, AWS_ENDPOINT_URL_SFN: sfnEndpoint.url }, () =>
      main(args, { out: (t) => (stdout += t), err: (t) => (stderr += t) }).catch((e) => {
        const f = failure(e);
        stderr += f.line;
        return f.code;
      }),
    );
    const plan = fs.existsSync(path.join(out, "plan.jsonl"))
      ? fs.readFileSync(path.join(out, "plan.jsonl"))
      : undefined;
    return { code, stdout, stderr, plan, seconds: (Date.now() - started) / 1000 };
  }
  const object = (key: string) => s3.objects.get(`${BUCKET}/${key}`);
  const record = (launchId: string) => JSON.parse(object(`launches/spring/${launchId}.json`)!.toString());
  const starts = () => sfnEndpoint.requests.filter((r) => r.target === "AWSStepFunctions.StartExecution").length;
  const plansStored = () => [...s3.objects.keys()].filter((k) => k.startsWith(`${BUCKET}/plans/`));

  for (const multipart of [false, true])
    it(`another plan under a used --launch-id is refused; L1's plan object and record keep plan A (${multipart ? "multipart" : "one PUT"})`, async () => {
      if (multipart) uploadLimits.partBytes = 512;
      const a = await launch("--launch-id", "L1");
      assert.strictEqual(a.code, 0, a.stderr);
      const startsBefore = starts();
      // As AWS answers a running execution's name with identical input: success and the old ARN, were it started.
      const b = await launch("--recipients", LIST_B, "--launch-id", "L1");
      assert.notDeepStrictEqual(b.plan, a.plan, "plan B differs from plan A");
      assert.strictEqual(b.code, 1, b.stdout + b.stderr);
      assert.match(
        b.stderr,
        /^error: launch id L1 already holds another plan \(s3:\/\/recipients-ce6a540\/plans\/spring\/L1\.jsonl\); use another --launch-id\n$/m,
      );
      assert.doesNotMatch(b.stdout, /Launched/);
      assert.deepStrictEqual(
        object("plans/spring/L1.jsonl"),
        a.plan,
        "the object L1's execution reads is still plan A",
      );
      assert.strictEqual(
        record("L1").planSha256,
        JSON.parse(fs.readFileSync(path.join(tmp, `run-${runs - 1}`, "summary.json"), "utf8")).planSha256,
      );
      assert.strictEqual(starts(), startsBefore, "no StartExecution for plan B");
      assert.strictEqual(s3.openUploads.size, 0, "B's multipart upload is aborted");
    });

  it("another plan under a used --launch-id whose plan object has expired: the launch record refuses it, and is kept", async () => {
    const a = await launch("--launch-id", "L4");
    assert.strictEqual(a.code, 0, a.stderr);
    const recordA = object("launches/spring/L4.json");
    s3.objects.delete(`${BUCKET}/plans/spring/L4.jsonl`); // the bucket's lifecycle rule expired it
    const b = await launch("--recipients", LIST_B, "--launch-id", "L4");
    assert.strictEqual(b.code, 1);
    assert.match(
      b.stderr,
      /^error: launch id L4 already holds another plan \(s3:\/\/recipients-ce6a540\/launches\/spring\/L4\.json\); use another --launch-id$/m,
    );
    assert.match(
      b.stderr,
      /^warning: s3:\/\/recipients-ce6a540\/plans\/spring\/L4\.jsonl was written by this run and is left in place/m,
    );
    assert.deepStrictEqual(object("launches/spring/L4.json"), recordA);
    assert.strictEqual(starts(), 1);
  });

  it("S3 answering 409 ConditionalRequestConflict (a concurrent write of the key): one line, nothing started", async () => {
    s3.failures.set("PUT", { code: "ConditionalRequestConflict", status: 409 });
    const r = await launch("--launch-id", "L5");
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /^error: s3:\/\/recipients-ce6a540\/plans\/spring\/L5\.jsonl: another upload to this key was completing at the same moment \(409 ConditionalRequestConflict\); nothing started/m,
    );
    assert.strictEqual(starts(), 0);
  });

  it("the same plan under the same --launch-id: nothing rewritten; a running execution answers idempotently, a finished one refuses", async () => {
    const first = await launch("--launch-id", "L2");
    assert.strictEqual(first.code, 0, first.stderr);
    const recordBefore = object("launches/spring/L2.json");
    const again = await launch("--launch-id", "L2", "--now", "2026-11-30T12:01:00Z");
    assert.strictEqual(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      /Launched: s3:\/\/recipients-ce6a540\/plans\/spring\/L2\.jsonl → execution spring-L2\n  arn:.*:spring-L2$/m,
    );
    assert.deepStrictEqual(object("launches/spring/L2.json"), recordBefore, "the record keeps the first launch's time");
    const puts = s3.requests.filter((q) => q.method === "PUT" && /L2\.json/.test(q.path)).length;
    assert.strictEqual(puts, 4, "each run sent one conditional PUT for the plan and one for the record");
    sfn.executions.get("spring-L2")!.status = "SUCCEEDED";
    const late = await launch("--launch-id", "L2");
    assert.strictEqual(late.code, 1);
    assert.match(late.stderr, /this plan was already launched as execution "spring-L2"/);
    assert.deepStrictEqual(object("plans/spring/L2.jsonl"), first.plan);
  });

  it("a refused double submit of a multipart plan leaves no orphan object and does not rewrite the launch record", async () => {
    uploadLimits.partBytes = 512; // the plan is uploaded while written, under a key unique to the upload
    const first = await launch();
    assert.strictEqual(first.code, 0, first.stderr);
    const [firstKey] = plansStored();
    const launchId = /execution spring-([0-9a-f]{16})/.exec(first.stdout)![1];
    assert.deepStrictEqual(record(launchId).launch.planKeys, [firstKey.slice(BUCKET.length + 1)]);
    const second = await launch();
    assert.strictEqual(second.code, 1);
    assert.match(second.stderr, /this plan was already launched as execution "spring-[0-9a-f]{16}"/);
    assert.deepStrictEqual(
      record(launchId).launch.planKeys,
      [firstKey.slice(BUCKET.length + 1)],
      "the record still names the first upload",
    );
    const orphan = /deleted (s3:\/\/\S+) \(this run's own upload, read by no execution\)/.exec(second.stderr);
    assert.ok(orphan, second.stderr);
    assert.notStrictEqual(orphan[1], `s3://${firstKey}`);
    assert.deepStrictEqual(plansStored(), [firstKey], "only the launched plan stays");
    assert.strictEqual(s3.openUploads.size, 0);
  });

  it("ExecutionAlreadyExists after a retried StartExecution: this run's own first attempt may have started it, so its plan is kept", async () => {
    uploadLimits.partBytes = 512; // a key unique to this run's upload: the one a refused run would delete
    loseStartAnswer = true;
    const r = await launch();
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /exists, found by a retried StartExecution: this run's own first attempt may have started it/,
    );
    assert.strictEqual(sfnEndpoint.requests.filter((q) => q.target === "AWSStepFunctions.StartExecution").length, 2);
    const [key] = plansStored();
    assert.ok(key, "the plan the first attempt's execution read is still there");
    assert.doesNotMatch(r.stderr, /deleted s3:/);
  });

  it("S3 answering SlowDown to every PUT: the time-limit line names SlowDown, and the abort ends soon after the limit", async () => {
    uploadLimits.partBytes = 512;
    if (cleanupLimits) cleanupLimits.afterDeadlineMs = 500;
    s3.failures.set("PUT", { code: "SlowDown", status: 503 });
    s3.hangs.add("DELETE"); // the abort gets no answer either
    const r = await launch("--timeout-seconds", "1");
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /no result within the command's time limit of 1 s \(--timeout-seconds\); the last error from AWS: SlowDown/,
    );
    assert.ok(r.seconds < 1 + 0.5 + 1.5, `the run took ${r.seconds} s`);
    assert.match(r.stderr, /warning: aborting the multipart upload of .*: no answer within 0\.\d s/);
  });

  it("StartExecution hanging to the time limit: the line says the execution may have started, and how to check", async () => {
    hangStart = true;
    const r = await launch("--launch-id", "L3", "--timeout-seconds", "1");
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /StartExecution .* no result within the command's time limit of 1 s \(--timeout-seconds\); the execution spring-L3 may have started anyway: see campaign-status --campaign spring/,
    );
    assert.ok(object("plans/spring/L3.jsonl"), "the plan it may be reading is kept");
  });
});
