import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import {
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  ListMapRunsCommand,
  SFNClient,
  StartExecutionCommand,
} from "@aws-sdk/client-sfn";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";
import { parse as parseCsv } from "csv-parse/sync";
import { clock } from "../../scripts/lib/aws/call";
import { uploadLimits } from "../../scripts/lib/aws/plan-upload";
import { fanOutDefinition, PlanRow } from "../../infra/state-machines/fanout-definition";
import { isValidSchedulerName } from "../../infra/core/plan/naming";
import { formatPlanRow, parsePlanRow } from "../../infra/core/plan/plan-row";
import { parseBulkPlanRow } from "../../infra/core/plan/bulk-plan-row";
import { verifyUnsubscribeToken } from "../../infra/core/consent/unsubscribe";
import { scheduler } from "../../infra/core/plan/quotas";
import { main } from "../../scripts/launch-campaign";
import { timingFromFlags } from "../../scripts/lib/cli/campaign-flags";
import { InputError, UsageError } from "../../infra/core/errors";
import { IANA_ZONE_NAMES } from "../../infra/core/zones/iana-zones";
import { zonedInstant } from "../../infra/core/timing/send-time";
import { sizeRecipientList } from "../../scripts/lib/planning/size-window";
import { runStateMachine, StatesError } from "../helpers/asl-interpreter";
import { withEnv } from "../helpers/aws-endpoint";
import { runMain, withFlags } from "../helpers/cli";
import { PREFLIGHT_OUTPUTS, preflightOutputsFile, sesHasEveryTemplate } from "../helpers/ses";

const ZONES = "tests/fixtures/zones.csv";
const CAMPAIGN = "tests/fixtures/campaign.csv";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-launch-"));
let runs = 0;

/** Runs the launcher in-process; returns exit code, stdout, stderr, and the files it wrote. */
async function launch(args: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  let stdout = "",
    stderr = "";
  const code = await main([...args, "--out", out], { out: (t) => (stdout += t), err: (t) => (stderr += t) });
  const read = (f: string) =>
    fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : undefined;
  const planText = read("plan.jsonl");
  return {
    code,
    stdout,
    stderr,
    out,
    plan: planText
      ? planText
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as PlanRow)
      : [],
    planText,
    rejects: read("rejects.csv"),
    summary: JSON.parse(read("summary.json") ?? "null"),
  };
}
const base = (file: string, ...more: string[]) =>
  withFlags(
    [
      "--campaign",
      "spring",
      "--recipients",
      file,
      "--template",
      "spring-sale",
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--now",
      "2026-11-29T12:00:00Z",
      // Templates are not what these tests are about (tests/scripts/lib/templates/templates.test.ts).
      "--templates",
      "none",
    ],
    more,
  );
const dryRun = (file: string, ...more: string[]) => launch([...base(file, ...more), "--dry-run"]);

/** The instant `send_at` + `timezone` denote, and whether it is unambiguous. */
function denoted(row: PlanRow) {
  const [d, t] = row.send_at.split("T");
  const [year, month, day] = d.split("-").map(Number);
  const [hour, minute, second] = t.split(":").map(Number);
  const r = zonedInstant(row.timezone, { year, month, day, hour, minute });
  return { utc: new Date(r.utcMs + second * 1000).toISOString(), fold: r.fold };
}

describe("launch-campaign: planning (dry run)", () => {
  it("plans every valid row with send_at + timezone denoting exactly its instant, as size-window computes it", async () => {
    const r = await dryRun(ZONES, "--step", "+3d:followup");
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.plan.length, 20);
    for (const row of r.plan) {
      assert.ok(isValidSchedulerName(row.schedule_name), row.schedule_name);
      assert.match(row.send_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00$/);
      assert.ok(row.timezone === "UTC" || IANA_ZONE_NAMES.includes(row.timezone), row.timezone);
      assert.ok(row.timezone.length <= scheduler.timezoneMaxLength);
      assert.deepStrictEqual(denoted(row), { utc: row.utc, fold: "exact" });
      assert.ok(Object.values(row.template_data).every((v) => typeof v === "string"));
    }
    const sized = await sizeRecipientList({
      file: ZONES,
      ...timingFromFlags({ date: "2026-12-01", hour: "9", step: ["+3d"] }),
      recipients: { encoding: "utf8", allowDuplicateEmails: false, strictZones: false },
      marginMinutes: 5,
      rate: { tps: 1000, source: "" },
      createTps: 5000,
      now: 0,
    });
    assert.ok(sized.fits);
    const fromPlan = new Map<string, number>();
    for (const row of r.plan) fromPlan.set(row.utc, (fromPlan.get(row.utc) ?? 0) + 1);
    assert.deepStrictEqual(
      [...fromPlan].sort(),
      sized.report.instants!.map((i) => [i.utc, i.count]),
    );
  });

  it("writes every plan line exactly as the plan-row format's own serializer would", async () => {
    const r = await dryRun(CAMPAIGN, "--step", "+3d:followup");
    const lines = r.planText!.split(/(?<=\n)/);
    assert.strictEqual(lines.length, 8);
    for (const line of lines) assert.strictEqual(formatPlanRow(parsePlanRow(line)), line);
  });

  it("plans the send-time rules per row: zones, links, re-cased and unknown zones", async () => {
    const r = await dryRun(ZONES, "--default-timezone", "Europe/Paris");
    const by = Object.fromEntries(r.plan.map((p) => [p.recipient_id, p]));
    assert.deepStrictEqual(
      [by["kat-1"].send_at, by["kat-1"].timezone, by["kat-1"].utc],
      ["2026-12-01T09:00:00", "Asia/Kathmandu", "2026-12-01T03:15:00.000Z"],
    );
    assert.deepStrictEqual([by["kir-1"].timezone, by["kir-1"].utc], ["Pacific/Kiritimati", "2026-11-30T19:00:00.000Z"]);
    assert.deepStrictEqual(
      [by["lhi-1"].timezone, by["lhi-1"].utc],
      ["Australia/Lord_Howe", "2026-11-30T22:00:00.000Z"],
    );
    assert.strictEqual(by["use-1"].timezone, "US/Eastern");
    assert.strictEqual(by["chi-1"].timezone, "America/Chicago");
    assert.deepStrictEqual([by["unk-1"].timezone, by["emp-1"].timezone], ["Europe/Paris", "Europe/Paris"]);
    // By hand: 8 rows name an IANA zone (chi-1 re-cased), unk-1 and emp-1 take the default.
    assert.deepStrictEqual(r.summary.zones, {
      defaultTimezone: "Europe/Paris",
      defaulted: 2,
      canonicalised: 1,
      mapped: 0,
      bySource: { given: 8, mapped: 0, latlon: 0, postal: 0, phone: 0, country: 0, default: 2 },
      unknown: [{ value: "Mars/Olympus_Mons", rows: 1, readAs: null }],
    });
  });

  it("writes a DST-gap or fall-back send in UTC, so it denotes one instant", async () => {
    const gap = await launch(
      base(
        ZONES,
        "--date",
        "2026-03-29",
        "--hour",
        "2",
        "--minute",
        "30",
        "--now",
        "2026-03-01T00:00:00Z",
        "--dry-run",
      ),
    );
    const paris = gap.plan.find((p) => p.recipient_id === "par-1")!;
    assert.deepStrictEqual(
      [paris.send_at, paris.timezone, paris.utc],
      ["2026-03-29T01:30:00", "UTC", "2026-03-29T01:30:00.000Z"],
    );
  });

  it("rejects bad rows into rejects.csv with line, id and reason; the summary adds up", async () => {
    const r = await dryRun(CAMPAIGN);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(
      r.rejects,
      [
        "line,id,reason",
        "5,a1,duplicate id (first on line 2); a recipient is sent once",
        "6,,missing id",
        '7,a3,"invalid email address ""not-an-email"""',
        "10,a6,2 fields where the header has 5",
        "",
      ].join("\n"),
    );
    assert.deepStrictEqual(r.summary.rejected, {
      total: 4,
      byReason: { "duplicate-id": 1, "missing-id": 1, "invalid-email": 1, "wrong-field-count": 1 },
    });
    assert.strictEqual(r.summary.rows, r.summary.recipientsPlanned + r.summary.rejected.total);
    assert.deepStrictEqual(
      r.plan.map((p) => p.recipient_id),
      ["a1", "a2", "a 4/ü", "a5"],
    );
    assert.ok(!r.plan.some((p) => p.email === "dup@example.com"), "a duplicate id is never sent twice");
    assert.match(r.stdout, /^Campaign spring: 8 rows → 4 recipients planned, 4 schedules; 4 rejected/);
  });

  it("names odd ids stably, validly and uniquely", async () => {
    const ids = [
      "a 4/ü",
      "x".repeat(70),
      "h.0123456789abcdef0123456789abcdef",
      "ok_id.1",
      "ok_id.1-2",
      "ok_id",
      "😀",
      "a-1",
    ];
    const file = path.join(tmp, "odd.csv");
    fs.writeFileSync(file, "id,email\n" + ids.map((id, i) => `"${id}",u${i}@example.com`).join("\n") + "\n");
    const first = await dryRun(file, "--step", "+1d:second");
    const again = await dryRun(file, "--step", "+1d:second");
    const names = first.plan.map((p) => p.schedule_name);
    assert.deepStrictEqual(
      names,
      again.plan.map((p) => p.schedule_name),
      "stable across runs",
    );
    assert.strictEqual(new Set(names).size, names.length, "unique");
    for (const n of names) assert.ok(isValidSchedulerName(n), n);
    assert.deepStrictEqual(names.slice(6, 12), [
      "ok_id.1-1",
      "ok_id.1-2",
      "ok_id.1-2-1",
      "ok_id.1-2-2",
      "ok_id-1",
      "ok_id-2",
    ]);
    assert.match(names[0], /^h\.[0-9a-f]{32}-1$/);
    assert.notStrictEqual(names[4], "h.0123456789abcdef0123456789abcdef-1", "an id shaped like a hash is hashed too");
  });

  it("carries quotes, newlines, backslashes and unicode exactly into the SES TemplateData Scheduler will send", async () => {
    const r = await dryRun(CAMPAIGN);
    const requests: any[] = [];
    runStateMachine(
      fanOutDefinition({
        partition: "aws",
        targetRoleArn: "arn:aws:iam::123456789012:role/t",
        deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:d",
        resultsBucket: "b",
        fromAddress: "news@example.com",
        configurationSetName: "cs",
        maxConcurrency: 60,
        batchSize: 80,
        innerConcurrency: 40,
        toleratedFailurePercentage: 0,
        maxEventAgeSeconds: 7200,
        maxRetryAttempts: 5,
        senderArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev",
      }),
      {
        campaign_id: "spring",
        plan_bucket: "b",
        plan_key: "plans/spring/x.jsonl",
        window_minutes: 1,
        campaign_tag: "spring",
      },
      {
        getObject: () => r.planText!,
        sdk: (_s, action, params) => {
          if (action === "createSchedule") requests.push(params);
          if (action !== "createSchedule" && action !== "createScheduleGroup")
            throw new StatesError("States.Runtime", action);
          return {};
        },
      },
    );
    const data = requests.map((q) =>
      JSON.parse(
        JSON.parse(q.Target.Input).bulk.BulkEmailEntries[0].ReplacementEmailContent.ReplacementTemplate
          .ReplacementTemplateData,
      ),
    );
    assert.deepStrictEqual(data, [
      { first_name: "Ann", note: 'He said "hi", then left', step: "1" },
      { first_name: "Bob", note: "line one\nline two", step: "1" },
      { first_name: "Odd", note: "odd id → defaulted zone", step: "1" },
      { first_name: "Eve", note: "back\\slash and 😀", step: "1" },
    ]);
  });

  describe("missed send times (now 2026-12-01T10:00Z; New York and Chicago are still ahead)", () => {
    const at10 = (...more: string[]) =>
      launch([
        ...base(ZONES).map((a) => (a === "2026-11-29T12:00:00Z" ? "2026-12-01T10:00:00Z" : a)),
        "--dry-run",
        ...more,
      ]);
    it("skip (default): past sends are rejected as passed, the rest planned", async () => {
      const r = await at10();
      assert.deepStrictEqual(r.plan.map((p) => p.recipient_id).sort(), ["chi-1", "nyc-1", "use-1"]);
      assert.strictEqual(r.summary.rejected.byReason["send-time-passed"], 7);
      assert.strictEqual(r.summary.missed.skipped, 7);
      assert.match(r.rejects!, /^3,kat-1,every send time is before 2026-12-01T10:05:0\d\.000Z/m);
    });
    it("send-now: late by less than the grace sends at the cutoff (in UTC); later than that is skipped", async () => {
      const r = await at10("--missed", "send-now", "--grace-minutes", "120");
      const utc = r.plan.filter((p) => ["unk-1", "emp-1"].includes(p.recipient_id));
      assert.strictEqual(utc.length, 2, "09:00 UTC is 65 minutes late: within the grace");
      for (const p of utc) assert.deepStrictEqual([p.timezone, p.send_at], ["UTC", "2026-12-01T10:06:00"]);
      assert.ok(!r.plan.some((p) => p.recipient_id === "par-1"), "08:00 UTC (Paris) is 125 minutes late: skipped");
      assert.strictEqual(r.summary.missed.sentNow, 2);
    });
    it("next-day: the same local time the next day", async () => {
      const r = await at10("--missed", "next-day");
      assert.strictEqual(r.plan.length, 10);
      const kat = r.plan.find((p) => p.recipient_id === "kat-1")!;
      assert.deepStrictEqual(
        [kat.send_at, kat.timezone, kat.utc],
        ["2026-12-02T09:00:00", "Asia/Kathmandu", "2026-12-02T03:15:00.000Z"],
      );
      assert.strictEqual(
        r.plan.find((p) => p.recipient_id === "nyc-1")!.send_at,
        "2026-12-01T09:00:00",
        "not missed: unchanged",
      );
      assert.strictEqual(r.summary.missed.movedToNextDay, 7);
    });
  });

  it("rejects a recipient whose personalization cannot fit one batch, keeping the others", async () => {
    const file = path.join(tmp, "big.csv");
    fs.writeFileSync(file, `id,email,note\nsmall,s@example.com,hi\nbig,b@example.com,${"é".repeat(140_000)}\n`);
    const r = await dryRun(file);
    assert.deepStrictEqual(
      r.plan.map((p) => p.recipient_id),
      ["small"],
    );
    assert.match(
      r.rejects!,
      /^3,big,personalization too large: a plan row must fit a 261120-byte batch and TemplateData 262144 characters$/m,
    );
  });

  it("drip steps: one schedule per recipient per step, each with its template", async () => {
    const r = await dryRun(ZONES, "--step", "+36h:last-call", "--step", "+3d:followup");
    const nyc = r.plan.filter((p) => p.recipient_id === "nyc-1");
    assert.deepStrictEqual(
      nyc.map((p) => [p.schedule_name, p.template, p.send_at, p.template_data.step]),
      [
        ["nyc-1-1", "spring-sale", "2026-12-01T09:00:00", "1"],
        ["nyc-1-2", "last-call", "2026-12-02T21:00:00", "2"],
        ["nyc-1-3", "followup", "2026-12-04T09:00:00", "3"],
      ],
    );
    assert.strictEqual(r.summary.schedules, 30);
  });

  it("in order: a step given after a step it would come before is not planned, and counted (out-of-order)", async () => {
    // Step 3 (+36h: Dec 2 21:00) comes before step 2 (+3d: Dec 4 09:00): step 3 would follow the mail after it.
    const r = await dryRun(ZONES, "--step", "+3d:followup", "--step", "+36h:last-call");
    const nyc = r.plan.filter((p) => p.recipient_id === "nyc-1");
    assert.deepStrictEqual(
      nyc.map((p) => [p.schedule_name, p.send_at]),
      [
        ["nyc-1-1", "2026-12-01T09:00:00"],
        ["nyc-1-2", "2026-12-04T09:00:00"],
      ],
    );
    assert.strictEqual(r.summary.schedules, 20);
    assert.deepStrictEqual(r.summary.collisions, [{ step: 3, with: 2, recipients: 10, reason: "out-of-order" }]);
  });

  it("bad input stops with one line and no plan files", async () => {
    const noEmail = path.join(tmp, "no-email.csv");
    fs.writeFileSync(noEmail, "id,name\n1,x\n");
    await assert.rejects(
      dryRun(noEmail),
      (e: unknown) => e instanceof InputError && /no-email\.csv:1: the header needs columns "email"/.test(e.message),
    );
    await assert.rejects(
      launch([...base(ZONES).map((a) => (a === "spring" ? "bad id!" : a)), "--dry-run"]),
      /--campaign: campaign id "bad id!" must be 1–55 characters/,
    );
    await assert.rejects(
      launch([...base(ZONES), "--dry-run", "--missed", "later"]),
      /--missed later: one of skip, send-now, next-day/,
    );
    await assert.rejects(
      launch(base(ZONES)),
      /missing stack outputs: bucketName \(--bucket\), stateMachineArn \(--state-machine-arn\)/,
    );
  });
});

describe("launch-campaign: launching (aws-sdk-client-mock)", () => {
  sesHasEveryTemplate();
  // Installed for this block only (the wire tests need the real clients); polls wait 10 ms instead of seconds.
  let s3: AwsClientStub<S3Client>;
  let sfn: AwsClientStub<SFNClient>;
  const realSleep = clock.sleep;
  before(() => {
    s3 = mockClient(S3Client);
    sfn = mockClient(SFNClient);
    clock.sleep = (ms, signal) => realSleep(Math.min(ms, 10), signal);
  });
  /** S3's answer to HeadObject for what it stored: the SHA-256 of the bytes PutObject carried, computed here. */
  const headFromPut = () =>
    s3.on(HeadObjectCommand).callsFake(() => {
      const body = s3.commandCalls(PutObjectCommand)[0].args[0].input.Body as Uint8Array;
      return { ChecksumSHA256: createHash("sha256").update(body).digest("base64"), ChecksumType: "FULL_OBJECT" };
    });
  const outputsFile = path.join(tmp, "outputs.json");
  const STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev";
  fs.writeFileSync(
    outputsFile,
    JSON.stringify({
      bucketName: "recipients-ce6a540",
      stateMachineArn: STATE_MACHINE,
      region: "us-east-1",
      createScheduleTps: 5000,
      ...PREFLIGHT_OUTPUTS,
    }),
  );
  beforeEach(() => {
    s3.reset();
    sfn.reset();
  });
  after(() => {
    s3.restore();
    sfn.restore();
    clock.sleep = realSleep;
  });

  it("refuses a campaign id that is one of the stack's journeys (they would share the group), before any upload", async () => {
    const withJourney = path.join(tmp, "outputs-journey.json");
    fs.writeFileSync(
      withJourney,
      JSON.stringify({ ...JSON.parse(fs.readFileSync(outputsFile, "utf8")), journeyDefinitions: [{ name: "spring" }] }),
    );
    await assert.rejects(
      launch([...base(ZONES), "--outputs", withJourney]),
      (e: unknown) =>
        e instanceof UsageError &&
        /^--campaign spring: this stack has a journey of that name/.test((e as Error).message),
    );
    assert.strictEqual(s3.commandCalls(PutObjectCommand).length + sfn.commandCalls(StartExecutionCommand).length, 0);
  });

  it("uploads plan.jsonl under plans/<campaign>/<launch id>.jsonl and starts the fan-out with the contract input", async () => {
    s3.on(PutObjectCommand).resolves({ ETag: '"e"' });
    headFromPut();
    sfn
      .on(StartExecutionCommand)
      .resolves({ executionArn: `${STATE_MACHINE.replace("stateMachine", "execution")}:x`, startDate: new Date() });
    const r = await launch([...base(ZONES), "--outputs", outputsFile]);
    assert.strictEqual(r.code, 0, r.stderr);
    const launchId = r.summary.planSha256.slice(0, 16);
    const put = s3.commandCalls(PutObjectCommand)[0].args[0].input;
    assert.strictEqual(put.Bucket, "recipients-ce6a540");
    assert.strictEqual(put.Key, `plans/spring/${launchId}.jsonl`);
    assert.strictEqual(Buffer.from(put.Body as Uint8Array).toString("utf8"), r.planText);
    const start = sfn.commandCalls(StartExecutionCommand)[0].args[0].input;
    assert.strictEqual(start.stateMachineArn, STATE_MACHINE);
    assert.strictEqual(start.name, `spring-${launchId}`);
    assert.deepStrictEqual(JSON.parse(start.input!), {
      campaign_id: "spring",
      plan_bucket: "recipients-ce6a540",
      plan_key: `plans/spring/${launchId}.jsonl`,
      window_minutes: 1,
      // by hand: the last send, 2026-12-01T15:00Z, + its 1-minute window + 24 h of Scheduler retries
      cleanup_at: "2026-12-02T15:01:00",
      campaign_tag: "spring",
    });
    assert.strictEqual(r.summary.lastSend, "2026-12-01T15:00:00.000Z");
    assert.match(
      r.stdout,
      /Launched: s3:\/\/recipients-ce6a540\/plans\/spring\/[0-9a-f]{16}\.jsonl → execution spring-[0-9a-f]{16}/,
    );
  });

  it("--bulk: signs every entry's link with the stack's key (SSM), as the endpoint verifies it (Node's crypto)", async () => {
    s3.on(PutObjectCommand).resolves({ ETag: '"e"' });
    headFromPut();
    sfn
      .on(StartExecutionCommand)
      .resolves({ executionArn: `${STATE_MACHINE.replace("stateMachine", "execution")}:x`, startDate: new Date() });
    const ssm = mockClient(SSMClient);
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => 255 - i));
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: key.toString("base64url") } });
    const withKey = path.join(tmp, "outputs-bulk.json");
    fs.writeFileSync(
      withKey,
      JSON.stringify({
        ...JSON.parse(fs.readFileSync(outputsFile, "utf8")),
        unsubscribeUrl: "https://abc.lambda-url.us-east-1.on.aws/",
        unsubscribeKeyParameter: "/sendtime/dev/unsubscribe-key",
        contactListName: "sendtime-dev",
        unsubscribeTopic: "marketing",
      }),
    );
    try {
      const r = await launch([...base(ZONES), "--bulk", "--outputs", withKey]);
      assert.strictEqual(r.code, 0, r.stderr);
      const uploaded = Buffer.from(s3.commandCalls(PutObjectCommand)[0].args[0].input.Body as Uint8Array);
      const entries = uploaded
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .flatMap((l) => parseBulkPlanRow(l).entries);
      assert.strictEqual(entries.length, r.summary.bulk.entries);
      assert.ok(entries.length > 0);
      for (const e of entries) {
        const link = new URL(e.template_data.unsubscribe_url);
        assert.strictEqual(link.origin + link.pathname, "https://abc.lambda-url.us-east-1.on.aws/");
        assert.strictEqual(verifyUnsubscribeToken(key, link.searchParams.get("t")!), e.email.trim().toLowerCase());
      }
      assert.strictEqual(r.summary.bulk.unsubscribe.placeholder, false);
      assert.match(
        r.summary.bulk.unsubscribe.source,
        /signed with the key in SSM parameter \/sendtime\/dev\/unsubscribe-key/,
      );
    } finally {
      ssm.restore();
    }
  });

  it("a recurring campaign's group is kept until its last schedule ends: cleanup_at is after the latest EndDate", async () => {
    s3.on(PutObjectCommand).resolves({ ETag: '"e"' });
    headFromPut();
    sfn
      .on(StartExecutionCommand)
      .resolves({ executionArn: `${STATE_MACHINE.replace("stateMachine", "execution")}:x`, startDate: new Date() });
    const recurring = base(ZONES).map((a) => (a === "--date" ? "--every" : a === "2026-12-01" ? "daily" : a));
    const r = await launch([...recurring, "--until", "2026-12-31", "--outputs", outputsFile]);
    assert.strictEqual(r.code, 0, r.stderr);
    const input = JSON.parse(sfn.commandCalls(StartExecutionCommand)[0].args[0].input.input!);
    // By hand: the latest end is Chicago's (UTC-6): a minute before the first daily 09:00 after 2026-12-31, 2027-01-01
    // 08:59 CST = 14:59Z (the last send's window may run past midnight); + the 1-minute window + 24 h of retries.
    assert.strictEqual(r.summary.recurring.lastEndDate, "2027-01-01T14:59:00.000Z");
    assert.strictEqual(input.cleanup_at, "2027-01-02T15:00:00");
  });

  it("stores the launch record (summary, schedules per step and variant, holdout) under launches/ before starting", async () => {
    s3.on(PutObjectCommand).resolves({ ETag: '"e"' });
    headFromPut();
    sfn
      .on(StartExecutionCommand)
      .resolves({ executionArn: `${STATE_MACHINE.replace("stateMachine", "execution")}:x`, startDate: new Date() });
    const r = await launch([...base(ZONES), "--outputs", outputsFile]);
    assert.strictEqual(r.code, 0, r.stderr);
    const launchId = r.summary.planSha256.slice(0, 16);
    const puts = s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    const put = puts.find((p) => p.Key === `launches/spring/${launchId}.json`)!;
    assert.ok(put, puts.map((p) => p.Key).join(", "));
    const record = JSON.parse(String(put.Body));
    const byStep = new Map<number, number>();
    for (const line of r.planText!.trim().split("\n"))
      byStep.set(JSON.parse(line).step, (byStep.get(JSON.parse(line).step) ?? 0) + 1);
    assert.deepStrictEqual(
      record.scheduled,
      [...byStep].map(([step, schedules]) => ({ step, variant: null, schedules })),
    );
    assert.strictEqual(record.holdoutRecipients, 0);
    assert.strictEqual(record.planSha256, r.summary.planSha256);
    assert.deepStrictEqual(record.launch, {
      id: launchId,
      planKey: `plans/spring/${launchId}.jsonl`,
      planKeys: [`plans/spring/${launchId}.jsonl`],
      at: record.launch.at,
    });
    assert.ok(!String(put.Body).includes("@example.com"), "no addresses in the record");
  });

  it("the launch record's schedules per step and variant are the plan's own lines, counted here", async () => {
    s3.on(PutObjectCommand).resolves({});
    headFromPut();
    sfn.on(StartExecutionCommand).resolves({ executionArn: "arn:aws:states:us-east-1:123456789012:execution:f:x" });
    const r = await launch([
      ...base(ZONES),
      "--outputs",
      outputsFile,
      "--step",
      "+3d:later",
      "--variant",
      "a:50",
      "--variant",
      "b:50",
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const counts = new Map<string, number>();
    for (const row of r.plan)
      counts.set(`${row.step} ${row.variant}`, (counts.get(`${row.step} ${row.variant}`) ?? 0) + 1);
    const expected = [...counts]
      .map(([k, schedules]) => ({ step: Number(k.split(" ")[0]), variant: k.split(" ")[1], schedules }))
      .sort((x, y) => x.step - y.step || x.variant.localeCompare(y.variant));
    assert.ok(new Set(expected.map((e) => e.variant)).size === 2, "both variants planned");
    const put = s3.commandCalls(PutObjectCommand).find((c) => c.args[0].input.Key!.startsWith("launches/"))!;
    assert.deepStrictEqual(JSON.parse(String(put.args[0].input.Body)).scheduled, expected);
    assert.deepStrictEqual(r.summary.scheduled, expected);
  });

  it("the launch record's holdout count is holdout.csv's records (a quoted field may hold a newline)", async () => {
    s3.on(PutObjectCommand).resolves({});
    headFromPut();
    sfn.on(StartExecutionCommand).resolves({ executionArn: "arn:aws:states:us-east-1:123456789012:execution:f:x" });
    const r = await launch([...base(ZONES), "--outputs", outputsFile, "--holdout", "40"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const holdout = parseCsv(fs.readFileSync(path.join(r.out, "holdout.csv")), { from_line: 2 });
    assert.ok(holdout.length > 0);
    const put = s3.commandCalls(PutObjectCommand).find((c) => c.args[0].input.Key!.startsWith("launches/"))!;
    assert.strictEqual(JSON.parse(String(put.args[0].input.Body)).holdoutRecipients, holdout.length);
  });

  it("a failed launch-record upload stops before starting anything", async () => {
    s3.on(PutObjectCommand).callsFake((input) => {
      if (String(input.Key).startsWith("launches/"))
        throw Object.assign(new Error("Access Denied"), { name: "AccessDenied" });
      return {};
    });
    headFromPut();
    await assert.rejects(
      launch([...base(ZONES), "--outputs", outputsFile, "--launch-id", "rec-1"]),
      /upload of the launch record to s3:\/\/recipients-ce6a540\/launches\/spring\/rec-1\.json failed \(nothing started\): AccessDenied/,
    );
    assert.strictEqual(sfn.commandCalls(StartExecutionCommand).length, 0);
  });

  it("the same plan gets the same execution name; a second submit is refused with a clear message", async () => {
    s3.on(PutObjectCommand).resolves({});
    headFromPut();
    sfn
      .on(StartExecutionCommand)
      .rejects(Object.assign(new Error("Execution Already Exists: 'arn:...'"), { name: "ExecutionAlreadyExists" }));
    await assert.rejects(
      launch([...base(ZONES), "--outputs", outputsFile]),
      /campaign spring: this plan was already launched as execution "spring-[0-9a-f]{16}"; Step Functions refuses to run it twice/,
    );
  });

  it("an S3 failure names the upload and stops before starting anything", async () => {
    s3.on(PutObjectCommand).rejects(Object.assign(new Error("Access Denied"), { name: "AccessDenied" }));
    await assert.rejects(
      launch([...base(ZONES), "--outputs", outputsFile, "--launch-id", "retry-2"]),
      /upload of the plan to s3:\/\/recipients-ce6a540\/plans\/spring\/retry-2\.jsonl failed: AccessDenied: Access Denied/,
    );
    assert.strictEqual(sfn.commandCalls(StartExecutionCommand).length, 0);
  });

  it("--wait follows the Map Run to its end and says where failed batches were written", async () => {
    s3.on(PutObjectCommand).resolves({});
    headFromPut();
    const executionArn = "arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:spring-x";
    sfn.on(StartExecutionCommand).resolves({ executionArn, startDate: new Date() });
    sfn
      .on(DescribeExecutionCommand)
      .resolvesOnce({ status: "RUNNING", executionArn, stateMachineArn: STATE_MACHINE, startDate: new Date() })
      .resolves({
        status: "SUCCEEDED",
        executionArn,
        stateMachineArn: STATE_MACHINE,
        startDate: new Date(),
        output: JSON.stringify({
          fan_out: { ResultWriterDetails: { Bucket: "recipients-ce6a540", Key: "results/abc/manifest.json" } },
        }),
      });
    sfn.on(ListMapRunsCommand).resolves({
      mapRuns: [
        {
          mapRunArn: "arn:aws:states:us-east-1:123456789012:mapRun:sendtime-fanout-dev/FanOut:abc",
          executionArn,
          stateMachineArn: STATE_MACHINE,
          startDate: new Date(),
        },
      ],
    });
    sfn
      .on(DescribeMapRunCommand)
      .resolvesOnce({
        itemCounts: {
          total: 10,
          succeeded: 4,
          failed: 0,
          pending: 6,
          running: 0,
          timedOut: 0,
          aborted: 0,
          resultsWritten: 0,
        },
      } as any)
      .resolves({
        itemCounts: {
          total: 10,
          succeeded: 7,
          failed: 3,
          pending: 0,
          running: 0,
          timedOut: 0,
          aborted: 0,
          resultsWritten: 10,
        },
      } as any);
    const r = await launch([...base(ZONES), "--outputs", outputsFile, "--wait", "--poll-seconds", "2"]);
    assert.strictEqual(r.code, 1, "failed rows make the exit code 1");
    assert.match(r.stderr, /\[#{12}\.{18}\] 4\/10 rows, 0 failed/);
    assert.match(r.stdout, /Fan-out SUCCEEDED: 7 of 10 rows scheduled, 3 failed/);
    assert.match(
      r.stdout,
      /results \(failed batches, for redrive\): s3:\/\/recipients-ce6a540\/results\/abc\/manifest\.json/,
    );
  });

  it("S3 holding other bytes than the plan (its checksum differs): refused, the fan-out is not started", async () => {
    s3.on(PutObjectCommand).resolves({});
    s3.on(HeadObjectCommand).resolves({
      ChecksumSHA256: createHash("sha256").update("something else").digest("base64"),
      ChecksumType: "FULL_OBJECT",
    });
    await assert.rejects(
      launch([...base(ZONES), "--outputs", outputsFile]),
      /s3:\/\/recipients-ce6a540\/plans\/spring\/[0-9a-f]{16}\.jsonl does not hold the planned bytes: S3 reports ChecksumSHA256 .* \(FULL_OBJECT\), the plan written gives .*; fan-out not started/,
    );
    assert.strictEqual(sfn.commandCalls(StartExecutionCommand).length, 0);
    const put = s3.commandCalls(PutObjectCommand)[0].args[0].input;
    assert.strictEqual(
      put.ChecksumSHA256,
      createHash("sha256")
        .update(put.Body as Uint8Array)
        .digest("base64"),
      "the PUT carries the plan's SHA-256 for S3 to check",
    );
  });

  it("--wait on an execution that FAILED because failures exceeded the tolerance still says where the failed batches are", async () => {
    s3.on(PutObjectCommand).resolves({});
    headFromPut();
    const executionArn = "arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:spring-x";
    sfn.on(StartExecutionCommand).resolves({ executionArn, startDate: new Date() });
    sfn.on(DescribeExecutionCommand).resolves({
      status: "FAILED",
      executionArn,
      stateMachineArn: STATE_MACHINE,
      startDate: new Date(),
      error: "States.ExceedToleratedFailureThreshold",
      cause: "The specified tolerated failure threshold was exceeded",
    });
    sfn.on(ListMapRunsCommand).resolves({
      mapRuns: [
        {
          mapRunArn:
            "arn:aws:states:us-east-1:123456789012:mapRun:sendtime-fanout-dev/FanOut:4f1c2d3e-0000-4000-8000-123456789abc",
          executionArn,
          stateMachineArn: STATE_MACHINE,
          startDate: new Date(),
        },
      ],
    });
    sfn.on(DescribeMapRunCommand).resolves({
      itemCounts: {
        total: 10,
        succeeded: 2,
        failed: 8,
        pending: 0,
        running: 0,
        timedOut: 0,
        aborted: 0,
        resultsWritten: 10,
      },
    } as any);
    const r = await launch([...base(ZONES), "--outputs", outputsFile, "--wait"]);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stdout,
      /Fan-out FAILED: 2 of 10 rows scheduled, 8 failed \(States\.ExceedToleratedFailureThreshold: /,
    );
    assert.match(
      r.stdout,
      /results \(failed batches, for redrive\): s3:\/\/recipients-ce6a540\/results\/4f1c2d3e-0000-4000-8000-123456789abc\/manifest\.json/,
    );
  });

  it("--wait that outlasts --timeout-seconds stops following and says the fan-out goes on", async () => {
    s3.on(PutObjectCommand).resolves({});
    headFromPut();
    const executionArn = "arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:spring-x";
    sfn.on(StartExecutionCommand).resolves({ executionArn, startDate: new Date() });
    sfn
      .on(DescribeExecutionCommand)
      .resolves({ status: "RUNNING", executionArn, stateMachineArn: STATE_MACHINE, startDate: new Date() });
    sfn.on(ListMapRunsCommand).resolves({ mapRuns: [] });
    await assert.rejects(
      launch([...base(ZONES), "--outputs", outputsFile, "--wait", "--timeout-seconds", "0.5"]),
      /no result within the command's time limit of 0.5 s \(--timeout-seconds\); stopped following, the fan-out goes on \(execution arn:.*spring-x\)/,
    );
  });

  describe("the plan streams to S3 while it is written (multipart), completed only once it is launched", () => {
    const saved = { ...uploadLimits };
    afterEach(() => Object.assign(uploadLimits, saved));
    const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest();
    const multipartS3 = () => {
      s3.on(CreateMultipartUploadCommand).resolves({ UploadId: "u1" });
      s3.on(UploadPartCommand).callsFake((input: any) => ({ ETag: `"p${input.PartNumber}"` }));
      s3.on(CompleteMultipartUploadCommand).resolves({});
      s3.on(AbortMultipartUploadCommand).resolves({});
      s3.on(PutObjectCommand).resolves({});
    };
    const parts = () => s3.commandCalls(UploadPartCommand).map((c) => c.args[0].input);

    it("the schedule-quota refusal aborts the parts already sent: CompleteMultipartUpload is never sent, nothing starts", async () => {
      uploadLimits.partBytes = 512; // the 3,362-byte plan is 7 parts: 6 sent while planning
      multipartS3();
      const r = await launch([...base(ZONES), "--outputs", outputsFile, "--max-schedules", "5"]);
      assert.strictEqual(r.code, 1, r.stderr);
      assert.match(
        r.stdout,
        /Not launched: the plan has 10 schedules .* nothing was uploaded or started \(any parts sent while planning are discarded: AbortMultipartUpload\)\.$/m,
      );
      assert.strictEqual(parts().length, 6, "the full parts went out while the plan was written");
      const abort = s3.commandCalls(AbortMultipartUploadCommand).map((c) => c.args[0].input);
      assert.deepStrictEqual(abort, [{ Bucket: "recipients-ce6a540", Key: parts()[0].Key, UploadId: "u1" }]);
      assert.strictEqual(s3.commandCalls(CompleteMultipartUploadCommand).length, 0);
      assert.strictEqual(s3.commandCalls(PutObjectCommand).length, 0, "no launch record either");
      assert.strictEqual(sfn.commandCalls(StartExecutionCommand).length, 0);
    });

    it("a plan below one part that is refused sends nothing at all", async () => {
      multipartS3();
      const r = await launch([...base(ZONES), "--outputs", outputsFile, "--max-schedules", "5"]);
      assert.strictEqual(r.code, 1);
      assert.strictEqual(s3.calls().length, 0);
    });

    it("each part carries its own SHA-256; S3's composite checksum of them is checked before the start", async () => {
      uploadLimits.partBytes = 512;
      multipartS3();
      // What S3 reports: the SHA-256 of the parts' SHA-256 digests (computed here from the bytes sent), then "-7".
      s3.on(HeadObjectCommand).callsFake(() => ({
        ChecksumSHA256: `${sha256(Buffer.concat(parts().map((p) => sha256(p.Body as Uint8Array)))).toString("base64")}-${parts().length}`,
        ChecksumType: "COMPOSITE",
      }));
      sfn.on(StartExecutionCommand).resolves({ executionArn: "arn:aws:states:us-east-1:123456789012:execution:f:x" });
      const r = await launch([...base(ZONES), "--outputs", outputsFile, "--no-local-plan"]);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.strictEqual(r.planText, undefined, "--no-local-plan writes no plan.jsonl");
      assert.match(r.stdout, /files: plan\.jsonl not kept \(--no-local-plan\) \(sha256 [0-9a-f]{16}…\)/);
      assert.strictEqual(s3.commandCalls(CreateMultipartUploadCommand)[0].args[0].input.ChecksumAlgorithm, "SHA256");
      for (const p of parts()) assert.strictEqual(p.ChecksumSHA256, sha256(p.Body as Uint8Array).toString("base64"));
      const body = Buffer.concat(parts().map((p) => p.Body as Uint8Array));
      assert.strictEqual(sha256(body).toString("hex"), r.summary.planSha256, "the parts joined are the plan");
      assert.deepStrictEqual(
        parts().map((p) => p.PartNumber),
        [1, 2, 3, 4, 5, 6, 7],
      );
      const complete = s3.commandCalls(CompleteMultipartUploadCommand)[0].args[0].input;
      assert.deepStrictEqual(
        complete.MultipartUpload!.Parts!.map((p) => p.ChecksumSHA256),
        parts().map((p) => p.ChecksumSHA256),
      );
      // The upload began before the plan's hash was known: its key is unique to the upload, and is what starts.
      assert.match(complete.Key!, /^plans\/spring\/\d{8}T\d{6}-[0-9a-f]{8}\.jsonl$/);
      assert.strictEqual(
        JSON.parse(sfn.commandCalls(StartExecutionCommand)[0].args[0].input.input!).plan_key,
        complete.Key,
      );
    });

    it("S3 reporting another composite checksum: refused, nothing started, the completed object left in place (never deleted)", async () => {
      uploadLimits.partBytes = 512;
      multipartS3();
      s3.on(HeadObjectCommand).resolves({
        ChecksumSHA256: `${sha256(Buffer.from("x")).toString("base64")}-7`,
        ChecksumType: "COMPOSITE",
      });
      let stderr = "";
      const args = [
        ...base(ZONES),
        "--outputs",
        outputsFile,
        "--launch-id",
        "same-1",
        "--out",
        path.join(tmp, "checksum-left"),
      ];
      await assert.rejects(
        main(args, { out: () => {}, err: (t) => (stderr += t) }),
        /does not hold the planned bytes: S3 reports ChecksumSHA256 .*-7 \(COMPOSITE\)/,
      );
      assert.strictEqual(sfn.commandCalls(StartExecutionCommand).length, 0);
      // Its key may be one an earlier launch of the same plan is reading: a failed launch must not take it away.
      assert.strictEqual(s3.commandCalls(DeleteObjectCommand).length, 0);
      assert.match(
        stderr,
        /warning: s3:\/\/recipients-ce6a540\/plans\/spring\/same-1\.jsonl was completed before the launch stopped and is left in place/,
      );
    });

    it("a part that fails to upload aborts the multipart upload; nothing starts", async () => {
      uploadLimits.partBytes = 512;
      multipartS3();
      s3.on(UploadPartCommand).rejects(Object.assign(new Error("Access Denied"), { name: "AccessDenied" }));
      await assert.rejects(
        launch([...base(ZONES), "--outputs", outputsFile, "--launch-id", "l-3"]),
        /upload of the plan to s3:\/\/recipients-ce6a540\/plans\/spring\/l-3\.jsonl failed \(part \d\): AccessDenied/,
      );
      assert.deepStrictEqual(
        s3.commandCalls(AbortMultipartUploadCommand).map((c) => c.args[0].input.Key),
        ["plans/spring/l-3.jsonl"],
      );
      assert.strictEqual(s3.commandCalls(CompleteMultipartUploadCommand).length, 0);
      assert.strictEqual(sfn.commandCalls(StartExecutionCommand).length, 0);
    });

    it("S3 that stops answering mid-upload: the time limit ends the run, and the upload is still aborted", async () => {
      uploadLimits.partBytes = 512;
      multipartS3();
      s3.on(UploadPartCommand).callsFake(() => new Promise(() => {}));
      await assert.rejects(
        launch([...base(ZONES), "--outputs", outputsFile, "--timeout-seconds", "1"]),
        /upload of the plan to s3:\/\/recipients-ce6a540\/plans\/spring\/.*\.jsonl failed \(part \d\): no result within the command's time limit of 1 s/,
      );
      assert.strictEqual(
        s3.commandCalls(AbortMultipartUploadCommand).length,
        1,
        "aborted after the deadline, with its own limit",
      );
      assert.strictEqual(
        s3.commandCalls(CompleteMultipartUploadCommand).length + sfn.commandCalls(StartExecutionCommand).length,
        0,
      );
    });

    describe("a plan above the ItemReader object limit (forced down to 1,200 bytes)", () => {
      const bodies = new Map<string, Uint8Array>();
      const order: string[] = [];
      const splitS3 = (endAs: (name: string) => string) => {
        uploadLimits.objectBytes = 1_200;
        bodies.clear();
        order.length = 0;
        s3.on(PutObjectCommand).callsFake((input: any) => void bodies.set(input.Key, input.Body));
        s3.on(HeadObjectCommand).callsFake((input: any) => ({
          ChecksumSHA256: sha256(bodies.get(input.Key)!).toString("base64"),
        }));
        const arn = (name: string) => `arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:${name}`;
        sfn.on(StartExecutionCommand).callsFake((input: any) => {
          order.push(`start ${input.name}`);
          return { executionArn: arn(input.name) };
        });
        sfn.on(DescribeExecutionCommand).callsFake((input: any) => {
          const name = input.executionArn.split(":").pop();
          order.push(`end ${name}`);
          return { status: endAs(name), executionArn: input.executionArn };
        });
        sfn
          .on(ListMapRunsCommand)
          .callsFake((input: any) => ({ mapRuns: [{ mapRunArn: `${input.executionArn}/map` }] }));
        sfn.on(DescribeMapRunCommand).callsFake((input: any) => {
          const key = JSON.parse(
            sfn.commandCalls(StartExecutionCommand).find((c) => input.mapRunArn.includes(`:${c.args[0].input.name}/`))!
              .args[0].input.input!,
          ).plan_key;
          const rows = Buffer.from(bodies.get(key)!).toString().split("\n").length - 1;
          return {
            itemCounts: { total: rows, succeeded: rows, failed: 0, pending: 0, running: 0, timedOut: 0, aborted: 0 },
          } as any;
        });
      };

      it("splits it on line boundaries and runs one execution per part, each after the previous one ended", async () => {
        splitS3(() => "SUCCEEDED");
        const r = await launch([...base(ZONES), "--outputs", outputsFile, "--json"]);
        assert.strictEqual(r.code, 0, r.stderr);
        const launchId = r.summary.planSha256.slice(0, 16);
        const keys = [...bodies.keys()].filter((k) => k.startsWith("plans/"));
        assert.ok(keys.length >= 3, `${keys.length} parts`);
        const part = (i: number) => (i === 0 ? "" : `.part${i + 1}`);
        assert.deepStrictEqual(
          keys,
          keys.map((_, i) => `plans/spring/${launchId}${part(i)}.jsonl`),
        );
        const texts = keys.map((k) => Buffer.from(bodies.get(k)!).toString());
        assert.strictEqual(texts.join(""), r.planText, "the parts joined are the plan");
        for (const t of texts)
          assert.ok(Buffer.byteLength(t) <= 1_200 && t.endsWith("\n"), `${Buffer.byteLength(t)} bytes`);
        const name = `spring-${launchId}`;
        const names = keys.map((_, i) => (i === 0 ? name : `${name}-p${i + 1}`));
        assert.deepStrictEqual(
          order,
          names.flatMap((n) => [`start ${n}`, `end ${n}`]),
        );
        assert.deepStrictEqual(
          sfn.commandCalls(StartExecutionCommand).map((c) => JSON.parse(c.args[0].input.input!).plan_key),
          keys,
        );
        const record = JSON.parse(
          String(
            s3.commandCalls(PutObjectCommand).find((c) => c.args[0].input.Key!.startsWith("launches/"))!.args[0].input
              .Body,
          ),
        );
        assert.deepStrictEqual(record.launch.planKeys, keys);
        const report = JSON.parse(r.stdout);
        assert.deepStrictEqual(
          report.executions.map((e: { name: string }) => e.name),
          names,
        );
        assert.strictEqual(report.fanOut.status, "SUCCEEDED");
        assert.strictEqual(
          report.fanOut.parts.reduce((n: number, p: { items: { succeeded: number } }) => n + p.items.succeeded, 0),
          10,
        );
      });

      it("a part that does not succeed (cancelled, failed) stops the rest, naming them", async () => {
        splitS3(() => "ABORTED");
        const r = await launch([...base(ZONES), "--outputs", outputsFile]);
        assert.strictEqual(r.code, 1);
        assert.strictEqual(sfn.commandCalls(StartExecutionCommand).length, 1);
        assert.match(
          r.stdout,
          /Part 1 ended ABORTED: the remaining \d parts \(plans\/spring\/[0-9a-f]{16}\.part2\.jsonl, .*part3\.jsonl.*\) not started/,
        );
        assert.match(r.stdout, /Fan-out ABORTED: 3 of 3 rows scheduled, 0 failed/);
      });
    });
  });

  it("--poll-seconds below the floor that keeps polling within Step Functions' API rates is refused", async () => {
    await assert.rejects(
      launch([...base(ZONES), "--outputs", outputsFile, "--wait", "--poll-seconds", "1"]),
      /--poll-seconds 1: must be a whole number from 2 to 3600/,
    );
  });
});

describe("launch-campaign: the real AWS wire format, against a local endpoint (AWS_ENDPOINT_URL_S3, _SFN)", function () {
  sesHasEveryTemplate();
  this.timeout(30_000);
  it("PUTs the plan path-style and calls AWSStepFunctions.StartExecution with the contract input", async () => {
    const requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        if (req.headers["x-amz-target"] === "AWSStepFunctions.StartExecution") {
          res.setHeader("content-type", "application/x-amz-json-1.0");
          res.end(
            JSON.stringify({
              executionArn: "arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:spring-x",
              startDate: 1.8e9,
            }),
          );
        } else if (req.method === "HEAD") {
          // What S3 reports: the SHA-256 of the bytes it received.
          const put = requests.find((q) => q.method === "PUT")!;
          res.setHeader("x-amz-checksum-sha256", createHash("sha256").update(put.body).digest("base64"));
          res.setHeader("x-amz-checksum-type", "FULL_OBJECT");
          res.end();
        } else {
          res.setHeader("ETag", '"abc"');
          res.end();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const endpoint = `http://127.0.0.1:${(server.address() as any).port}`;
    const out = path.join(tmp, "wire");
    // In this process, real HTTP to the endpoint (plan-safety runs this command as a separate process).
    const r = await withEnv({ AWS_ENDPOINT_URL_S3: endpoint, AWS_ENDPOINT_URL_SFN: endpoint }, () =>
      runMain(main, [
        ...base(ZONES),
        "--out",
        out,
        "--bucket",
        "recipients-ce6a540",
        "--state-machine-arn",
        "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev",
        "--region",
        "us-east-1",
        "--outputs",
        preflightOutputsFile(tmp),
      ]),
    );
    server.close();
    assert.strictEqual(r.code, 0, r.stderr);
    const put = requests.find((q) => q.method === "PUT")!;
    assert.match(put.url, /^\/recipients-ce6a540\/plans\/spring\/[0-9a-f]{16}\.jsonl/);
    assert.strictEqual(put.body, fs.readFileSync(path.join(out, "plan.jsonl"), "utf8"));
    assert.strictEqual(put.headers["x-amz-checksum-sha256"], createHash("sha256").update(put.body).digest("base64"));
    assert.ok(
      requests.some((q) => q.method === "HEAD"),
      "the upload is checked before the start",
    );
    assert.match(
      String(put.headers.authorization),
      /^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/us-east-1\/s3\/aws4_request/,
    );
    const start = requests.find((q) => q.headers["x-amz-target"] === "AWSStepFunctions.StartExecution")!;
    const body = JSON.parse(start.body);
    assert.strictEqual(body.stateMachineArn, "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev");
    assert.match(body.name, /^spring-[0-9a-f]{16}$/);
    assert.deepStrictEqual(Object.keys(JSON.parse(body.input)), [
      "campaign_id",
      "plan_bucket",
      "plan_key",
      "window_minutes",
      "cleanup_at",
      "campaign_tag",
    ]);
  });
});
