import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  CloudWatchClient,
  GetMetricDataCommand,
  GetMetricDataCommandInput,
  ListMetricsCommand,
} from "@aws-sdk/client-cloudwatch";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { mockClient } from "aws-sdk-client-mock";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { Readable } from "stream";
import { main as report } from "../../scripts/campaign-report";
import type { LaunchRecord } from "../../scripts/lib/planning/launch-record";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-report-"));
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(outputs, JSON.stringify({ bucketName: "recipients-ce6a540", region: "us-east-1" }));

const RECORD: LaunchRecord = {
  campaignId: "spring",
  planSha256: "ae32aac75343b824",
  firstSend: "2026-12-01T14:00:00.000Z",
  lastSend: "2026-12-04T14:00:00.000Z",
  launch: { id: "ae32aac75343b824", planKey: "plans/spring/ae32aac75343b824.jsonl", at: "2026-11-30T12:00:00.000Z" },
  scheduled: [
    { step: 1, variant: "A", schedules: 60 },
    { step: 1, variant: "B", schedules: 40 },
    { step: 2, variant: "A", schedules: 60 },
    { step: 2, variant: "B", schedules: 40 },
  ],
  holdoutRecipients: 11,
};

const h = (hour: number) => new Date(Date.UTC(2026, 11, 1, hour));
/** What CloudWatch holds: step/variant/metric → hourly points. Step 2 has not been sent yet. */
const DATA: Record<string, [Date, number][]> = {
  "1/A/Send": [
    [h(14), 40],
    [h(15), 20],
  ],
  "1/A/Delivery": [
    [h(14), 39],
    [h(15), 19],
  ],
  "1/A/Bounce": [[h(14), 2]],
  "1/A/Complaint": [[h(16), 1]],
  "1/A/Open": [
    [h(14), 20],
    [h(15), 10],
  ],
  "1/A/Click": [[h(15), 9]],
  "1/A/Subscription": [[h(17), 1]],
  "1/B/Send": [[h(14), 40]],
  "1/B/Delivery": [[h(14), 40]],
  "1/B/Open": [[h(15), 25]],
  "1/B/Click": [[h(15), 12]],
};

/** The part of an SDK stream body the report uses. */
const body = (text: string) => ({ transformToString: async () => text }) as any;

function mockS3(records: LaunchRecord[]) {
  const s3 = mockClient(S3Client);
  const keys = records.map((r) => `launches/spring/${r.launch.id}.json`);
  // two pages, to follow the continuation token
  s3.on(ListObjectsV2Command).callsFake((input) =>
    input.ContinuationToken
      ? { IsTruncated: false, Contents: keys.slice(1).map((Key) => ({ Key })) }
      : {
          IsTruncated: keys.length > 1,
          NextContinuationToken: keys.length > 1 ? "t2" : undefined,
          Contents: keys.slice(0, 1).map((Key) => ({ Key })),
        },
  );
  s3.on(GetObjectCommand).callsFake((input) => {
    const record = records.find((r) => r.launch.planKey === input.Key);
    if (!record) return { Body: body(JSON.stringify(records[keys.indexOf(input.Key!)])) };
    const plan = planOf(record);
    return { Body: Readable.from([plan]), ContentLength: Buffer.byteLength(plan) };
  });
  return s3;
}

/** A plan for a record: step 1 at its first send, later steps at its last (the parts the report reads: step, variant, utc). */
function planOf(r: LaunchRecord): string {
  return r.scheduled
    .flatMap((c) =>
      Array.from({ length: c.schedules }, () =>
        JSON.stringify({ step: c.step, variant: c.variant, utc: c.step === 1 ? r.firstSend : r.lastSend }),
      ),
    )
    .join("\n");
}

/** Answers GetMetricData from DATA in two pages: first points first, the rest after NextToken. */
function mockCloudWatch(data: Record<string, [Date, number][]>) {
  const cw = mockClient(CloudWatchClient);
  const requests: GetMetricDataCommandInput[] = [];
  cw.on(ListMetricsCommand).resolves({
    Metrics: Object.keys(data).map((k) => {
      const [step, variant, MetricName] = k.split("/");
      return {
        Namespace: "AWS/SES",
        MetricName,
        Dimensions: [
          { Name: "campaign", Value: "spring" },
          { Name: "step", Value: step },
          { Name: "variant", Value: variant },
        ],
      };
    }),
  });
  cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
    requests.push(input);
    const page = input.NextToken === "page-2" ? 1 : 0;
    const results = input.MetricDataQueries!.flatMap((q) => {
      const dims = Object.fromEntries(q.MetricStat!.Metric!.Dimensions!.map((d) => [d.Name, d.Value]));
      const points = (data[`${dims.step}/${dims.variant}/${q.MetricStat!.Metric!.MetricName}`] ?? []).slice(
        page,
        page ? undefined : 1,
      );
      return points.length
        ? [
            {
              Id: q.Id,
              Timestamps: points.map((p) => p[0]),
              Values: points.map((p) => p[1]),
              StatusCode: "Complete" as const,
            },
          ]
        : [];
    });
    return { MetricDataResults: results, NextToken: page ? undefined : "page-2" };
  });
  return { cw, requests };
}

async function run(args: string[]) {
  let stdout = "",
    stderr = "";
  const code = await report(["--campaign", "spring", "--outputs", outputs, "--to", "2026-12-01T18:00Z", ...args], {
    out: (t) => (stdout += t),
    err: (t) => (stderr += t),
  });
  return { code, stdout, stderr };
}

describe("campaign-report (aws-sdk-client-mock)", () => {
  let s3: ReturnType<typeof mockS3>;
  let cw: ReturnType<typeof mockCloudWatch>;
  afterEach(() => {
    s3?.restore();
    cw?.cw.restore();
  });

  it("shows the bounce and complaint rates per send against the stack's guardrails, and a guardrail's pause with its time (text and page)", async () => {
    s3 = mockS3([RECORD]);
    cw = mockCloudWatch(DATA);
    const ddb = mockClient(DynamoDBClient);
    const reason =
      "guardrail: bounce rate at or above 2% over 1h (at least 50 sends) (alarm sendtime-dev-guardrail-campaign-bounce-spring)";
    ddb.on(GetItemCommand).resolves({
      Item: {
        pk: { S: "campaign#spring" },
        state: { S: "paused" },
        reason: { S: reason },
        updated_at: { S: "2026-12-01T15:04:00.000Z" },
        // As setCampaignState and the guardrail's pause append them: an operator's pause and resume, then the guardrail's.
        history: {
          L: [
            {
              M: { state: { S: "paused" }, at: { S: "2026-12-01T14:00:00.000Z" }, reason: { S: "checking the list" } },
            },
            { M: { state: { S: "live" }, at: { S: "2026-12-01T14:10:00.000Z" } } },
            { M: { state: { S: "paused" }, at: { S: "2026-12-01T15:04:00.000Z" }, reason: { S: reason } } },
          ],
        },
      },
    });
    const guarded = path.join(tmp, "guarded.json");
    fs.writeFileSync(
      guarded,
      JSON.stringify({
        bucketName: "recipients-ce6a540",
        region: "us-east-1",
        ledgerTableName: "sendtime-ledger",
        guardrailSettings: { bounceRate: 0.02, complaintRate: 0.0008, minSends: 50, window: "1h", windowSeconds: 3600 },
      }),
    );
    const page = path.join(tmp, "guarded.html");
    let stdout = "";
    try {
      const args = ["--campaign", "spring", "--outputs", guarded, "--to", "2026-12-01T18:00Z", "--html", page];
      assert.strictEqual(await report(args, { out: (t) => (stdout += t), err() {} }), 0);
      assert.deepStrictEqual(ddb.commandCalls(GetItemCommand)[0].args[0].input, {
        TableName: "sendtime-ledger",
        Key: { pk: { S: "campaign#spring" } },
        ConsistentRead: true,
      });
    } finally {
      ddb.restore();
    }
    // By hand from DATA: 100 sends (60 + 40), 2 bounces (2%), 1 complaint (1%): both at or above, over 50 sends.
    const lines = [
      "guardrails (per send, over the report's range; the alarms look at the last 1h, from 50 sends): bounces 2% (threshold 2%: reached), complaints 1% (threshold 0.08%: reached)",
      `state: paused by a guardrail since 2026-12-01T15:04:00.000Z (reason: ${reason})`,
      "paused at 2026-12-01T14:00:00.000Z (reason: checking the list)",
      "resumed at 2026-12-01T14:10:00.000Z",
      `paused at 2026-12-01T15:04:00.000Z (reason: ${reason})`,
    ];
    for (const l of lines) assert.ok(stdout.includes(`  ${l}\n`), `text lacks ${l}:\n${stdout}`);
    const html = fs.readFileSync(page, "utf8");
    assert.ok(html.includes("<h2>Guardrails</h2>"));
    for (const l of lines)
      assert.ok(html.includes(l.replace(/'/g, "&#39;").replace(/&(?!#)/g, "&amp;")), `page lacks ${l}`);
  });

  it("counts the funnel per step and variant across GetMetricData pages, with rates and the holdout", async () => {
    s3 = mockS3([RECORD]);
    cw = mockCloudWatch(DATA);
    const r = await run(["--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const rep = JSON.parse(r.stdout);
    const row = (step: string, variant: string) => rep.rows.find((x: any) => x.step === step && x.variant === variant);
    // sums by hand from DATA: A sent 40 + 20, delivered 39 + 19, opens 20 + 10
    assert.deepStrictEqual(
      (({ scheduled, sent, delivered, bounced, complained, rejected, opened, clicked, unsubscribed }) => ({
        scheduled,
        sent,
        delivered,
        bounced,
        complained,
        rejected,
        opened,
        clicked,
        unsubscribed,
      }))(row("1", "A")),
      {
        scheduled: 60,
        sent: 60,
        delivered: 58,
        bounced: 2,
        complained: 1,
        rejected: 0,
        opened: 30,
        clicked: 9,
        unsubscribed: 1,
      },
    );
    assert.strictEqual(row("1", "A").rates.opened, 30 / 58);
    assert.strictEqual(row("1", "A").rates.bounced, 2 / 60);
    assert.strictEqual(row("1", "B").rates.clicked, 12 / 40);
    // step 2 is scheduled, not sent: zeros, and no rate that divides by zero
    assert.strictEqual(row("2", "B").scheduled, 40);
    assert.strictEqual(row("2", "B").sent, 0);
    assert.strictEqual(row("2", "B").rates.delivered, null);
    // not due yet either: sent is a rate of the sends due, so none
    assert.strictEqual(row("2", "B").due, 0);
    assert.strictEqual(row("2", "B").rates.sent, null);
    assert.deepStrictEqual(
      rep.variants.map((v: any) => [v.variant, v.scheduled, v.sent]),
      [
        ["A", 120, 60],
        ["B", 80, 40],
      ],
    );
    assert.strictEqual(rep.total.sent, 100);
    assert.strictEqual(rep.holdoutRecipients, 11);
    assert.strictEqual(rep.noSendsYet, false);
    assert.deepStrictEqual(
      rep.sendCurve.map((p: any) => [p.hour.slice(11, 13), p.byVariant.A, p.byVariant.B]),
      [
        ["14", 40, 40],
        ["15", 20, 0],
        ["16", 0, 0],
        ["17", 0, 0],
      ],
    );
    // every request was bounded to the range, hourly sums, all three dimensions
    const q = cw.requests[0];
    assert.deepStrictEqual([q.StartTime, q.EndTime], [h(14), h(18)]);
    assert.ok(cw.requests.length >= 2, "followed NextToken");
    const stat = q.MetricDataQueries![0].MetricStat!;
    assert.deepStrictEqual([stat.Period, stat.Stat, stat.Metric!.Namespace], [3600, "Sum", "AWS/SES"]);
    assert.deepStrictEqual(
      stat.Metric!.Dimensions!.map((d) => d.Name),
      ["campaign", "step", "variant"],
    );
  });

  it("prints a table a person can read", async () => {
    s3 = mockS3([RECORD]);
    cw = mockCloudWatch(DATA);
    const r = await run([]);
    assert.strictEqual(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert.match(lines[0], /^Campaign spring: 1 launch, 200 schedules, holdout 11 recipients \(not sent\)$/);
    const a1 = lines.find((l) => /^\s+1\s+A\s/.test(l))!;
    assert.deepStrictEqual(a1.trim().split(/\s+/), [
      "1",
      "A",
      "60",
      "60",
      "60",
      "100.0%",
      "58",
      "96.7%",
      "2",
      "3.3%",
      "1",
      "1.7%",
      "0",
      "0.0%",
      "30",
      "51.7%",
      "9",
      "15.5%",
      "1",
      "1.7%",
    ]);
    assert.ok(
      lines.some((l) => /^\s+all\s+all\s+200\s+100\s+100 100\.0%/.test(l)),
      r.stdout,
    );
  });

  it("splits more than 500 queries over several requests (GetMetricData's limit)", async () => {
    const many = {
      ...RECORD,
      scheduled: Array.from({ length: 60 }, (_, i) => ({ step: i + 1, variant: null, schedules: 1 })),
    };
    s3 = mockS3([many]);
    cw = mockCloudWatch({});
    const r = await run(["--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const firstPages = cw.requests.filter((q) => !q.NextToken);
    assert.deepStrictEqual(
      firstPages.map((q) => q.MetricDataQueries!.length),
      [500, 100],
    );
    assert.strictEqual(JSON.parse(r.stdout).rows[0].variant, "no-variant");
  });

  it("a campaign with no sends yet: scheduled counts, zeros, exit 0", async () => {
    s3 = mockS3([RECORD]);
    cw = mockCloudWatch({});
    const r = await run([]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /no sends yet/);
    assert.match(r.stdout, /^\s+2\s+B\s+40\s+0\s+0 -\s+0 -\s/m);
  });

  it("the same plan launched twice counts once; two plans add up", async () => {
    const rerun = { ...RECORD, launch: { ...RECORD.launch, id: "rerun-1", at: "2026-11-30T13:00:00.000Z" } };
    const other = { ...RECORD, planSha256: "ffff", launch: { ...RECORD.launch, id: "second" }, holdoutRecipients: 2 };
    s3 = mockS3([RECORD, rerun, other]);
    cw = mockCloudWatch({});
    const rep = JSON.parse((await run(["--json"])).stdout);
    assert.strictEqual(rep.total.scheduled, 400);
    assert.strictEqual(rep.holdoutRecipients, 13);
    assert.deepStrictEqual(rep.launches.map((l: any) => l.id).sort(), ["rerun-1", "second"]);
  });

  it("nothing known of the campaign: one line, exit 1", async () => {
    s3 = mockS3([]);
    cw = mockCloudWatch({});
    const r = await run([]);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /^campaign spring: no launch record in s3:\/\/recipients-ce6a540\/launches\/spring\/ and no SES metrics for tag spring/,
    );
  });

  // --timeout-seconds bounds the whole command (each call keeps its own 30 s bound inside it): the call that runs
  // into it is named with the command's limit.
  it("an AWS call that does not answer is cut off: one line naming it", async () => {
    s3 = mockS3([RECORD]);
    cw = mockCloudWatch(DATA);
    cw.cw.on(GetMetricDataCommand).callsFake(() => new Promise(() => {}));
    await assert.rejects(
      run(["--timeout-seconds", "0.3"]),
      /GetMetricData for campaign tag spring: no result within the command's time limit of 0.3 s \(--timeout-seconds\)$/,
    );
  });

  it("a token repeated forever is an error, not a loop", async () => {
    s3 = mockS3([RECORD]);
    cw = mockCloudWatch(DATA);
    cw.cw.on(GetMetricDataCommand).resolves({ MetricDataResults: [], NextToken: "again" });
    await assert.rejects(run([]), /repeated a page token/);
  });

  it("bad flags: exit 2 messages", async () => {
    await assert.rejects(
      run(["--from", "2026-12-01"]),
      /--from 2026-12-01: expected an ISO 8601 instant with Z or an offset/,
    );
    await assert.rejects(
      report(["--campaign", "a b", "--outputs", outputs], { out() {}, err() {} }),
      /--campaign: campaign id "a b"/,
    );
  });

  describe("--html", () => {
    const file = path.join(tmp, "report.html");
    let html: string;
    before(async () => {
      s3 = mockS3([RECORD]);
      cw = mockCloudWatch(DATA);
      const r = await run(["--html", file]);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stdout, /page: .*report\.html/);
      html = fs.readFileSync(file, "utf8");
    });

    it("is one self-contained page: no script, no stylesheet, image, font or link to fetch", () => {
      assert.match(html, /^<!DOCTYPE html>\n<html lang="en">/);
      assert.match(html, /<\/html>\n$/);
      for (const fetches of [
        /<script/i,
        /<link/i,
        /<img/i,
        /<iframe/i,
        /\bsrc=/i,
        /\bhref=/i,
        /url\(/i,
        /@import/i,
        /https?:\/\/(?!www\.w3\.org\/2000\/svg")/,
      ])
        assert.doesNotMatch(html, fetches);
    });

    it("draws the send curve, one line per variant, scaled to the busiest hour", () => {
      const curve = /<svg class="send-curve"[^>]*>([\s\S]*?)<\/svg>/.exec(html)![1];
      const lines = [...curve.matchAll(/<polyline class="series" data-variant="(\w+)"[^>]* points="([^"]+)"/g)];
      assert.deepStrictEqual(
        lines.map((m) => m[1]),
        ["A", "B"],
      );
      const ys = (i: number) => lines[i][2].split(" ").map((p) => Number(p.split(",")[1]));
      // 4 hours; 40 is the top gridline (y 12), 0 the axis (y 300 - 56 = 244), 20 half-way
      assert.deepStrictEqual(ys(0), [12, 128, 244, 244]);
      assert.deepStrictEqual(ys(1), [12, 244, 244, 244]);
    });

    it("has a funnel per variant with counts and rates, and the step table", () => {
      const funnels = [...html.matchAll(/<svg class="funnel" data-variant="(\w+)"[\s\S]*?<\/svg>/g)];
      assert.deepStrictEqual(
        funnels.map((m) => m[1]),
        ["A", "B"],
      );
      assert.match(funnels[0][0], /data-stage="delivered">.*58 \(96\.7%\)/);
      assert.match(funnels[1][0], /data-stage="clicked">.*12 \(30\.0%\)/);
      // heading, 4 step rows, 2 variant rows, the total
      const table = /<table class="funnel-table">[\s\S]*?<\/table>/.exec(html)![0];
      assert.strictEqual((table.match(/<tr[ >]/g) ?? []).length, 1 + 4 + 2 + 1);
    });
  });
});
