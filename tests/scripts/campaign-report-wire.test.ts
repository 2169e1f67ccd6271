/**
 * campaign-report over the real wire formats, against one local endpoint (AWS_ENDPOINT_URL_S3 and
 * AWS_ENDPOINT_URL_CLOUDWATCH): S3 REST/XML for the launch record and the plan, CloudWatch AWS JSON 1.0 for
 * ListMetrics and GetMetricData, whose data points come a few per page behind NextToken as AWS pages them.
 * Expected rates, lifts and p-values are computed independently (python3, math.erfc; see each value's comment).
 */
import * as assert from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as report } from "../../scripts/campaign-report";
import type { LaunchRecord } from "../../scripts/lib/planning/launch-record";
import { Answer, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-report-wire-"));
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(outputs, JSON.stringify({ bucketName: "recipients-ce6a540", region: "us-east-1" }));
const BUCKET = "recipients-ce6a540";

const RECORD: LaunchRecord = {
  campaignId: "spring",
  planSha256: "ae32aac75343b824",
  recipientsPlanned: 2000,
  audience: {
    variants: [
      { name: "A", percent: 45, step1Template: "spring-a", recipients: 1000, schedules: 2000 },
      { name: "B", percent: 45, step1Template: "spring-b", recipients: 1000, schedules: 2000 },
    ],
    holdout: { percent: 10, recipients: 200 },
  },
  firstSend: "2026-12-01T14:00:00.000Z",
  lastSend: "2026-12-04T14:00:00.000Z",
  launch: { id: "ae32aac75343b824", planKey: "plans/spring/ae32aac75343b824.jsonl", at: "2026-11-30T12:00:00.000Z" },
  scheduled: [
    { step: 1, variant: "A", schedules: 1000 },
    { step: 1, variant: "B", schedules: 1000 },
    { step: 2, variant: "A", schedules: 1000 },
    { step: 2, variant: "B", schedules: 1000 },
  ],
  holdoutRecipients: 200,
};

/** The plan: step 1 at 14:00 on Dec 1 for all; step 2 on Dec 4, A 600 at 09:00 and 400 at 14:00, B 500 and 500. */
function planText(): string {
  const row = (id: string, step: number, variant: string, utc: string) =>
    JSON.stringify({
      schedule_name: `${id}-${step}`,
      send_at: "x",
      timezone: "UTC",
      email: `${id}@example.com`,
      template: "t",
      template_data: {},
      recipient_id: id,
      step,
      utc,
      variant,
      schedule_expression: "at(x)",
    });
  const lines: string[] = [];
  for (const [variant, early] of [
    ["A", 600],
    ["B", 500],
  ] as const)
    for (let i = 0; i < 1000; i++) {
      lines.push(row(`${variant}${i}`, 1, variant, "2026-12-01T14:00:00.000Z"));
      lines.push(
        row(`${variant}${i}`, 2, variant, i < early ? "2026-12-04T09:00:00.000Z" : "2026-12-04T14:00:00.000Z"),
      );
    }
  return lines.join("\n") + "\n";
}

/**
 * The same sends as a bulk plan (launch-campaign --bulk): the recipients of one step, variant and instant in lines of
 * at most 50 entries (plan-row.ts BulkPlanRow), in the list's order.
 */
function bulkPlanText(): string {
  const groups = new Map<string, { step: number; variant: string; utc: string; ids: string[] }>();
  for (const text of planText().trim().split("\n")) {
    const r = JSON.parse(text);
    const key = `${r.step}/${r.variant}/${r.utc}`;
    if (!groups.has(key)) groups.set(key, { step: r.step, variant: r.variant, utc: r.utc, ids: [] });
    groups.get(key)!.ids.push(r.recipient_id);
  }
  const lines: string[] = [];
  for (const g of groups.values())
    for (let i = 0; i < g.ids.length; i += 50)
      lines.push(
        JSON.stringify({
          schedule_name: `bulk.${g.step}.${g.utc.slice(0, 16).replace(/[-:]/g, "")}Z.${g.variant}.${i / 50}`,
          send_at: g.utc.slice(0, 19),
          timezone: "UTC",
          utc: g.utc,
          schedule_expression: `at(${g.utc.slice(0, 19)})`,
          step: g.step,
          template: "t",
          variant: g.variant,
          entries: g.ids
            .slice(i, i + 50)
            .map((id) => ({ recipient_id: id, email: `${id}@example.com`, template_data: {}, headers: [] })),
        }),
      );
  return lines.join("\n") + "\n";
}

const at = (day: number, hour: number) => Date.UTC(2026, 11, day, hour) / 1000;
/** CloudWatch's hourly sums: step/variant/metric → [epoch seconds, value][]. Step 2's early sends on Dec 4 at 09:00. */
const DATA: Record<string, [number, number][]> = {
  "1/A/Send": [[at(1, 14), 1000]],
  "1/A/Delivery": [
    [at(1, 14), 970],
    [at(1, 15), 10],
  ],
  "1/A/Open": [
    [at(1, 15), 300],
    [at(1, 16), 100],
  ],
  "1/A/Click": [[at(1, 16), 50]],
  "1/B/Send": [[at(1, 14), 1000]],
  "1/B/Delivery": [[at(1, 14), 990]],
  "1/B/Open": [[at(1, 15), 470]],
  "1/B/Click": [
    [at(1, 15), 60],
    [at(1, 17), 20],
  ],
  "2/A/Send": [[at(4, 9), 600]],
  "2/A/Delivery": [[at(4, 9), 590]],
  "2/A/Open": [[at(4, 10), 200]],
  "2/A/Click": [[at(4, 10), 30]],
  "2/B/Send": [[at(4, 9), 500]],
  "2/B/Delivery": [[at(4, 9), 495]],
  "2/B/Open": [[at(4, 10), 190]],
  "2/B/Click": [[at(4, 11), 40]],
};

const xml = (body: string): Answer => ({
  headers: { "content-type": "application/xml" },
  text: `<?xml version="1.0" encoding="UTF-8"?>\n${body}`,
});

/** S3 (path-style REST/XML) and CloudWatch (JSON 1.0) as AWS answers them; GetMetricData gives 3 points a page. */
function answer(objects: Map<string, string>, data: Record<string, [number, number][]>, pageSize = 3) {
  return (r: SeenRequest): Answer => {
    if (r.target === "GraniteServiceVersion20100801.ListMetrics")
      return {
        json: {
          Metrics: Object.keys(data).map((k) => {
            const [step, variant, MetricName] = k.split("/");
            const Dimensions = [
              { Name: "campaign", Value: "spring" },
              { Name: "step", Value: step },
              { Name: "variant", Value: variant },
            ];
            return { Namespace: "AWS/SES", MetricName, Dimensions };
          }),
        },
      };
    if (r.target === "GraniteServiceVersion20100801.GetMetricData") {
      const input = JSON.parse(r.body);
      const points = input.MetricDataQueries.flatMap((q: any) => {
        const d = Object.fromEntries(q.MetricStat.Metric.Dimensions.map((x: any) => [x.Name, x.Value]));
        return (data[`${d.step}/${d.variant}/${q.MetricStat.Metric.MetricName}`] ?? [])
          .filter(([t]) => t >= input.StartTime && t < input.EndTime)
          .map(([t, v]) => ({ id: q.Id, t, v }));
      });
      const from = input.NextToken ? Number(input.NextToken) : 0;
      const page = points.slice(from, from + pageSize);
      const ids = [...new Set(page.map((p: any) => p.id))];
      return {
        json: {
          MetricDataResults: ids.map((Id) => ({
            Id,
            Timestamps: page.filter((p: any) => p.id === Id).map((p: any) => p.t),
            Values: page.filter((p: any) => p.id === Id).map((p: any) => p.v),
            StatusCode: "Complete",
          })),
          NextToken: from + pageSize < points.length ? String(from + pageSize) : undefined,
        },
      };
    }
    const url = new URL(r.url, "http://x");
    const [, bucket, ...rest] = decodeURIComponent(url.pathname).split("/");
    if (url.searchParams.get("list-type") === "2") {
      const prefix = url.searchParams.get("prefix") ?? "";
      const keys = [...objects.keys()]
        .filter((k) => k.startsWith(`${bucket}/${prefix}`))
        .map((k) => k.slice(bucket.length + 1));
      return xml(
        `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${prefix}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${keys
          .map((k) => `<Contents><Key>${k}</Key><Size>${objects.get(`${bucket}/${k}`)!.length}</Size></Contents>`)
          .join("")}</ListBucketResult>`,
      );
    }
    const body = objects.get(`${bucket}/${rest.join("/")}`);
    if (body === undefined)
      return {
        status: 404,
        headers: { "content-type": "application/xml" },
        text: `<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`,
      };
    return {
      headers: { "content-type": "application/octet-stream", "content-length": String(Buffer.byteLength(body)) },
      text: body,
    };
  };
}

async function run(objects: Map<string, string>, args: string[], data = DATA) {
  const endpoint = await startEndpoint(answer(objects, data));
  let stdout = "",
    stderr = "";
  try {
    const code = await withEnv({ AWS_ENDPOINT_URL_S3: endpoint.url, AWS_ENDPOINT_URL_CLOUDWATCH: endpoint.url }, () =>
      report(["--campaign", "spring", "--outputs", outputs, "--to", "2026-12-04T12:00Z", ...args], {
        out: (t) => (stdout += t),
        err: (t) => (stderr += t),
      }),
    );
    return { code, stdout, stderr, requests: endpoint.requests };
  } finally {
    await endpoint.close();
  }
}

const withPlan = () =>
  new Map([
    [`${BUCKET}/launches/spring/ae32aac75343b824.json`, JSON.stringify(RECORD)],
    [`${BUCKET}/plans/spring/ae32aac75343b824.jsonl`, planText()],
  ]);

const close = (actual: number | null, expected: number, rel = 1e-6) =>
  assert.ok(actual !== null && Math.abs(actual - expected) <= rel * Math.abs(expected), `${actual} ≉ ${expected}`);

describe("campaign-report on the wire: comparisons, due sends, conversions (local S3 + CloudWatch endpoint)", function () {
  this.timeout(20_000);

  it("compares B with A per step and over all, across GetMetricData pages; sent is a rate of the sends due", async () => {
    const r = await run(withPlan(), ["--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const rep = JSON.parse(r.stdout);
    // 19 data points, 3 a page: 7 pages, each after the token of the one before
    const pages = r.requests
      .filter((q) => q.target?.endsWith("GetMetricData"))
      .map((q) => JSON.parse(q.body).NextToken ?? null);
    assert.deepStrictEqual(pages, [null, "3", "6", "9", "12", "15", "18"]);
    const row = (step: string, variant: string) => rep.rows.find((x: any) => x.step === step && x.variant === variant);
    // due by hand from the plan: step 1 all 1000; step 2 A 600 and B 500 of 1000 at 09:00 (≤ 12:00), the rest at 14:00
    assert.deepStrictEqual(
      rep.rows.map((x: any) => [x.step, x.variant, x.scheduled, x.due, x.sent, x.delivered]),
      [
        ["1", "A", 1000, 1000, 1000, 980],
        ["1", "B", 1000, 1000, 1000, 990],
        ["2", "A", 1000, 600, 600, 590],
        ["2", "B", 1000, 500, 500, 495],
      ],
    );
    assert.strictEqual(row("2", "A").rates.sent, 1, "600 sent of 600 due, not 60% of 1000 scheduled");
    assert.strictEqual(rep.total.rates.sent, 1);
    assert.deepStrictEqual(rep.due, { counted: "plans", unknownLaunches: [] });
    // python3: math.erfc(abs(z)/sqrt(2)), z from the pooled standard error
    const expected: [string, string, number, number, number, number][] = [
      ["1", "opened", 470 / 990, 400 / 980, 0.16313131313131313, 0.002923867518769948],
      ["1", "clicked", 80 / 990, 50 / 980, 0.5838383838383839, 0.007752002709783651],
      ["2", "opened", 190 / 495, 200 / 590, 0.1323232323232323, 0.12511004834286904],
      ["2", "clicked", 40 / 495, 30 / 590, 0.5892255892255892, 0.0454096776253052],
      ["all", "opened", 660 / 1485, 600 / 1570, 0.1629629629629628, 0.0004741404972707055],
      ["all", "clicked", 120 / 1485, 80 / 1570, 0.585858585858586, 0.0008556379735693926],
    ];
    assert.strictEqual(rep.comparisons.length, expected.length);
    expected.forEach(([step, metric, rate, againstRate, lift, p], i) => {
      const c = rep.comparisons[i];
      assert.deepStrictEqual([c.step, c.metric, c.variant, c.against], [step, metric, "B", "A"]);
      close(c.rate, rate, 1e-12);
      close(c.againstRate, againstRate, 1e-12);
      close(c.lift, lift, 1e-9);
      close(c.pValue, p);
      assert.strictEqual(c.significant, p < 0.05);
    });
  });

  it("a bulk plan's scheduled and due are entries (recipient-steps), not its schedules", async () => {
    const bulk = bulkPlanText();
    // 1000 per step and variant in lines of 50: 20 for step 1; step 2 A 600 + 400 (12 + 8), B 500 + 500 (10 + 10).
    assert.strictEqual(bulk.trim().split("\n").length, 80);
    // The launcher's record of a bulk plan counts entries in `scheduled` and its schedules under `bulk`.
    const record = { ...RECORD, bulk: { schedules: 80, entries: 4000, schedulesPerRecipientStep: 0.02 } };
    const objects = new Map([
      [`${BUCKET}/launches/spring/ae32aac75343b824.json`, JSON.stringify(record)],
      [`${BUCKET}/plans/spring/ae32aac75343b824.jsonl`, bulk],
    ]);
    const r = await run(objects, ["--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const rep = JSON.parse(r.stdout);
    // due by hand, as for the plain plan: step 1 all 1000; step 2 A 600 and B 500 due by 12:00 on Dec 4
    assert.deepStrictEqual(
      rep.rows.map((x: any) => [x.step, x.variant, x.scheduled, x.due]),
      [
        ["1", "A", 1000, 1000],
        ["1", "B", 1000, 1000],
        ["2", "A", 1000, 600],
        ["2", "B", 1000, 500],
      ],
    );
    assert.strictEqual(rep.total.rates.sent, 1, "3,100 sent of 3,100 entries due");
    const text = await run(objects, []);
    assert.match(
      text.stdout.split("\n")[0],
      /: 1 launch, 4,000 sends scheduled \(4,000 of them in 80 bulk schedules\), holdout 200/,
    );
  });

  it("a bulk plan line without entries it can count is a finding naming the line (exit 1)", async () => {
    const lines = bulkPlanText().trim().split("\n");
    const bad = JSON.parse(lines[25]);
    bad.entries = "a7";
    lines[25] = JSON.stringify(bad);
    const objects = new Map([
      [`${BUCKET}/launches/spring/ae32aac75343b824.json`, JSON.stringify(RECORD)],
      [`${BUCKET}/plans/spring/ae32aac75343b824.jsonl`, lines.join("\n") + "\n"],
    ]);
    // A finding: the command's runner prints its message as one line and exits 1 (tests/scripts/lib/cli/exit-codes.test.ts).
    await assert.rejects(run(objects, []), (e: Error) => {
      assert.strictEqual(e.constructor.name, "FindingsError");
      assert.match(
        e.message,
        /plans\/spring\/ae32aac75343b824\.jsonl line 26: a bulk plan line's entries must be a list of 1 to 50/,
      );
      return true;
    });
  });

  it("the text shows the due column, the comparisons and a verdict", async () => {
    const r = await run(withPlan(), []);
    assert.strictEqual(r.code, 0, r.stderr);
    const cells = (re: RegExp) =>
      r.stdout
        .split("\n")
        .find((l) => re.test(l))!
        .trim()
        .split(/\s{2,}/);
    assert.deepStrictEqual(cells(/^\s+2\s+A\s/).slice(0, 5), ["2", "A", "1,000", "600", "600 100.0%"]);
    assert.deepStrictEqual(cells(/^\s+all\s+all\s/).slice(0, 5), ["all", "all", "4,000", "3,100", "3,100 100.0%"]);
    assert.deepStrictEqual(cells(/^\s+all\s+opens\s+B/), [
      "all",
      "opens",
      "B",
      "A",
      "44.4%",
      "38.2%",
      "+16.3%",
      "<0.001",
      "yes",
    ]);
    assert.deepStrictEqual(cells(/^\s+2\s+opens\s+B/), [
      "2",
      "opens",
      "B",
      "A",
      "38.4%",
      "33.9%",
      "+13.2%",
      "0.125",
      "no",
    ]);
    assert.match(
      r.stdout,
      /^ {2}verdict: B beats A on opens \(44\.4% vs 38\.2%, \+16\.3%, p < 0\.001\); B beats A on clicks \(8\.1% vs 5\.1%, \+58\.6%, p < 0\.001\)$/m,
    );
    assert.doesNotMatch(r.stdout, /50\.0%/);
  });

  it("--conversions: each variant against the holdout, sizes from the launch record", async () => {
    const file = path.join(tmp, "conversions.csv");
    fs.writeFileSync(file, "variant,conversions\nA,50\nB,70\nholdout,5\n");
    const r = await run(withPlan(), ["--json", "--conversions", file]);
    assert.strictEqual(r.code, 0, r.stderr);
    const conv = JSON.parse(r.stdout).comparisons.filter((c: any) => c.metric === "converted");
    // python3: A 50/1000 vs 5/200 → p 0.12274836426903277; B 70/1000 vs 5/200 → p 0.01639507184919225
    assert.deepStrictEqual(
      conv.map((c: any) => [c.step, c.variant, c.against, c.rate, c.againstRate, c.lift, c.significant]),
      [
        ["all", "A", "holdout", 0.05, 0.025, 1, false],
        ["all", "B", "holdout", 0.07, 0.025, 1.8, true],
      ],
    );
    close(conv[0].pValue, 0.12274836426903277);
    close(conv[1].pValue, 0.01639507184919225);
    const text = (await run(withPlan(), ["--conversions", file])).stdout;
    assert.match(text, /verdict: .*; B converts more than the holdout \(7\.0% vs 2\.5%, \+180\.0%, p = 0\.016\)$/m);
  });

  it("--conversions that do not fit: exit 2, one line naming the file and line or variant", async () => {
    const cases: [string, RegExp][] = [
      ["variant,count\nA,1\n", /conv\.csv line 1: the header must be variant,conversions$/],
      ["variant,conversions\nA,-1\n", /conv\.csv line 2: conversions "-1" must be a whole number 0 or more$/],
      ["variant,conversions\nA,1\nA,2\n", /conv\.csv line 3: A is given twice$/],
      [
        "variant,conversions\nC,1\nholdout,1\n",
        /conv\.csv: variant C is not in campaign spring \(it has A, B, holdout\)$/,
      ],
      [
        "variant,conversions\nA,1001\n",
        /conv\.csv: A has 1,001 conversions but 1,000 recipients in the launch records$/,
      ],
    ];
    const file = path.join(tmp, "conv.csv");
    for (const [text, message] of cases) {
      fs.writeFileSync(file, text);
      await assert.rejects(run(withPlan(), ["--conversions", file]), (e: Error) =>
        e.constructor.name === "UsageError" || e.constructor.name === "InputError"
          ? (assert.match(e.message, message), true)
          : false,
      );
    }
  });

  it("a plan expired while sends are still to come: due counted as scheduled, and the report says so", async () => {
    const objects = withPlan();
    objects.delete(`${BUCKET}/plans/spring/ae32aac75343b824.jsonl`);
    const r = await run(objects, []);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /due unknown for launch ae32aac75343b824 \(its plan has expired from the bucket while sends were still to come\): counted as all scheduled/,
    );
  });

  it("a launch over, or not begun, is counted from its record: the plan is not read", async () => {
    const planRead = (r: { requests: SeenRequest[] }) => r.requests.some((q) => q.url.includes("/plans/"));
    const over = await run(withPlan(), ["--json"]);
    assert.ok(planRead(over), "under way at 2026-12-04T12:00Z: read");
    const objects = withPlan();
    objects.delete(`${BUCKET}/plans/spring/ae32aac75343b824.jsonl`);
    for (const [to, due] of [
      ["2026-12-04T14:00Z", 4000],
      ["2026-12-01T13:59Z", 0],
    ] as const) {
      const endpoint = await startEndpoint(answer(objects, {}));
      let stdout = "";
      try {
        const code = await withEnv(
          { AWS_ENDPOINT_URL_S3: endpoint.url, AWS_ENDPOINT_URL_CLOUDWATCH: endpoint.url },
          () =>
            report(["--campaign", "spring", "--outputs", outputs, "--to", to, "--json"], {
              out: (t) => (stdout += t),
              err() {},
            }),
        );
        assert.strictEqual(code, 0);
      } finally {
        await endpoint.close();
      }
      const rep = JSON.parse(stdout);
      assert.strictEqual(rep.total.due, due, to);
      assert.deepStrictEqual(rep.due, { counted: "records", unknownLaunches: [] });
      assert.ok(!planRead(endpoint), to);
    }
  });

  describe("--html: the page shows the text report's numbers (and renders in headless Chromium when installed)", () => {
    const page = path.join(tmp, "spring.html");
    const conversions = path.join(tmp, "page-conversions.csv");
    let text: string;
    let html: string;
    before(async () => {
      fs.writeFileSync(conversions, "variant,conversions\nA,50\nB,70\nholdout,5\n");
      const r = await run(withPlan(), ["--conversions", conversions, "--html", page]);
      assert.strictEqual(r.code, 0, r.stderr);
      text = r.stdout;
      html = fs.readFileSync(page, "utf8");
    });

    it("every row of the funnel (total, due and rejected included), the comparisons, the verdict and the delays line", () => {
      assertPageMatchesText(html, text);
    });

    it("the send curve has labelled axes with units and gridlines", () => {
      const curve = /<svg class="send-curve"[\s\S]*?<\/svg>/.exec(html)![0];
      assert.deepStrictEqual(
        [...curve.matchAll(/class="axis-label"[^>]*>([^<]+)</g)].map((m) => m[1]),
        ["hour (UTC, MM-DD HHh)", "sends per hour (SES Send events)"],
      );
      // the busiest hour is 1,000 sends: gridlines every 200 from 0 to 1,000, each labelled
      const yLabels = [...curve.matchAll(/<text x="66" [^>]*>([\d,]+)</g)].map((m) => m[1]);
      assert.deepStrictEqual(yLabels, ["0", "200", "400", "600", "800", "1,000"]);
      assert.ok((curve.match(/class="grid"/g) ?? []).length >= 6 + 5);
      for (const funnel of html.match(/<svg class="funnel"[\s\S]*?<\/svg>/g)!)
        assert.match(funnel, /class="grid"[\s\S]*class="axis-label"[^>]*>count \(/);
    });

    it("in headless Chromium: the rendered page's text has the same numbers, and a screenshot is taken", function () {
      const chromium = ["chromium", "chromium-browser", "google-chrome"].find(
        (c) => spawnSync("which", [c]).status === 0,
      );
      if (!chromium) {
        console.log("      (skipped: no chromium on PATH; apt-get install chromium to run it)");
        return this.skip();
      }
      this.timeout(90_000);
      const flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ];
      const profile = () => `--user-data-dir=${fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-chromium-"))}`;
      const dom = spawnSync(chromium, [...flags, profile(), "--dump-dom", `file://${page}`], {
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.strictEqual(dom.status, 0, dom.stderr);
      assertPageMatchesText(dom.stdout, text);
      const png = path.join(tmp, "spring.png");
      const shot = spawnSync(
        chromium,
        [...flags, profile(), `--screenshot=${png}`, "--window-size=1200,1600", `file://${page}`],
        {
          encoding: "utf8",
          timeout: 60_000,
        },
      );
      assert.ok(fs.existsSync(png), shot.stderr);
      const head = fs.readFileSync(png).subarray(0, 24);
      assert.strictEqual(head.subarray(1, 4).toString(), "PNG");
      assert.deepStrictEqual([head.readUInt32BE(16), head.readUInt32BE(20)], [1200, 1600]);
    });
  });
});

/** A page's visible text of an element: tags dropped, entities decoded, spaces collapsed. */
const textOf = (h: string) =>
  h
    .replace(/<[^>]+>/g, "")
    .replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

function tableCells(html: string, cls: string): string[][] {
  const table = new RegExp(`<table class="${cls}">([\\s\\S]*?)</table>`).exec(html)![1];
  return [...table.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1].matchAll(/<t[hd]>([\s\S]*?)<\/t[hd]>/g)].map((c) => textOf(c[1])),
  );
}

/** The text report's table that starts with `head` (its first cell), cells split on runs of two spaces or more. */
function textTable(text: string, first: string, indent: number): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith(" ".repeat(indent) + first + " "));
  const rows: string[][] = [];
  for (
    let i = start;
    i < lines.length &&
    /^ +\S/.test(lines[i]) &&
    lines[i].search(/\S/) === indent &&
    !/^ *(rates|verdict|comparisons|also|\(|due unknown)/.test(lines[i]);
    i++
  )
    rows.push(lines[i].trim().split(/ {2,}/));
  return rows;
}

function assertPageMatchesText(html: string, text: string): void {
  const funnel = tableCells(html, "funnel-table");
  assert.deepStrictEqual(funnel, textTable(text, "step", 2));
  assert.ok(
    funnel.some((r) => r[0] === "all" && r[1] === "all"),
    "the total row",
  );
  assert.ok(funnel[0].includes("rejected") && funnel[0].includes("due"));
  assert.deepStrictEqual(tableCells(html, "comparisons"), textTable(text, "step", 4));
  const verdict = /^ {2}verdict: (.*)$/m.exec(text)![1];
  assert.strictEqual(textOf(/<p class="verdict">([\s\S]*?)<\/p>/.exec(html)![1]), `Verdict: ${verdict}`);
  const also = /^ {2}also: (.*)$/m.exec(text)?.[1];
  assert.strictEqual(
    textOf(/<p class="also">([\s\S]*?)<\/p>/.exec(html)![1]),
    `Also: ${also ?? "0 rendering failures, 0 delivery delays"}.`,
  );
}

/**
 * The texts' funnel (issue 37): Logs Insights (AWS JSON 1.1, X-Amz-Target Logs_20140328.*) on the same local
 * endpoint through AWS_ENDPOINT_URL_CLOUDWATCH_LOGS. The stand-in answers the second stats' rows as Logs Insights
 * gives them (every value a string), after `running` polls that are still Running.
 */
describe("campaign-report on the wire: the SMS funnel from the SMS event log group (Logs Insights)", function () {
  this.timeout(20_000);
  const smsOutputs = path.join(tmp, "outputs-sms.json");
  fs.writeFileSync(
    smsOutputs,
    JSON.stringify({ bucketName: BUCKET, region: "us-east-1", smsEventLogGroupName: "/sendtime/dev/sms-events" }),
  );
  const cell = (field: string, value: string) => ({ field, value });
  const ROWS = [
    // step 1, A: 900 texts whose latest event is TEXT_DELIVERED, 50 TEXT_SUCCESSFUL, 30 pending, 20 failed.
    ["1", "A", "TEXT_DELIVERED", "900", "900", "5.229", "2.718"],
    ["1", "A", "TEXT_SUCCESSFUL", "50", "100", "0.581", "0.302"],
    ["1", "A", "TEXT_PENDING", "30", "30", "0", "0"],
    ["1", "A", "TEXT_CARRIER_UNREACHABLE", "12", "12", "0.06972", "0"],
    ["1", "A", "TEXT_SPAM", "8", "8", "0.04648", "0"],
    // step 2 without a variant (no variant field in the row).
    ["2", "", "TEXT_DELIVERED", "400", "800", "4.648", "2.416"],
  ].map(([step, variant, last, texts, parts, price, fee]) => [
    cell("step", step),
    ...(variant ? [cell("variant", variant)] : []),
    cell("last", last),
    cell("texts", texts),
    cell("parts", parts),
    cell("price", price),
    cell("carrierFee", fee),
  ]);

  async function runSms(args: string[], logs: (r: SeenRequest) => Answer | undefined) {
    const s3AndMetrics = answer(withPlan(), DATA);
    const endpoint = await startEndpoint((r) => logs(r) ?? s3AndMetrics(r));
    try {
      const env = {
        AWS_ENDPOINT_URL_S3: endpoint.url,
        AWS_ENDPOINT_URL_CLOUDWATCH: endpoint.url,
        AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: endpoint.url,
      };
      const argv = ["--campaign", "spring", "--outputs", smsOutputs, "--to", "2026-12-04T12:00Z", ...args];
      const r = await withEnv(env, () => runMain(report, argv));
      return { ...r, requests: endpoint.requests };
    } finally {
      await endpoint.close();
    }
  }

  const logsAnswer =
    (running: number, status = "Complete") =>
    (r: SeenRequest): Answer | undefined => {
      if (r.target === "Logs_20140328.StartQuery") return { json: { queryId: "q-1" } };
      if (r.target === "Logs_20140328.GetQueryResults")
        return running-- > 0 ? { json: { status: "Running", results: [] } } : { json: { status, results: ROWS } };
      if (r.target === "Logs_20140328.StopQuery") return { json: { success: true } };
      return undefined;
    };

  it("queries the log group over the report's range by the campaign tag, and counts each text by its latest event", async () => {
    const r = await runSms(["--json", "--sms-price-per-part", "0.00883"], logsAnswer(2));
    assert.strictEqual(r.code, 0, r.stderr);
    const start = r.requests.find((q) => q.target === "Logs_20140328.StartQuery")!;
    const body = JSON.parse(start.body);
    assert.strictEqual(body.logGroupName, "/sendtime/dev/sms-events");
    // The range: from the first send (2026-12-01T14:00Z) to --to rounded up to the hour (12:00Z), in epoch seconds.
    assert.deepStrictEqual(
      [body.startTime, body.endTime],
      [Date.UTC(2026, 11, 1, 14) / 1000, Date.UTC(2026, 11, 4, 12) / 1000],
    );
    assert.match(body.queryString, /filter context\.campaign = "spring" and eventType like \/\^TEXT_\//);
    assert.match(
      body.queryString,
      /stats latest\(eventType\) as last.* by messageId, step, variant\n\| stats count\(\*\) as texts/,
    );
    assert.strictEqual(body.limit, 10_000);
    // Two polls Running, then Complete: three GetQueryResults.
    assert.strictEqual(r.requests.filter((q) => q.target === "Logs_20140328.GetQueryResults").length, 3);
    const sms = JSON.parse(r.stdout).sms;
    assert.deepStrictEqual(
      sms.rows.map((x: any) => [x.step, x.variant, x.sent, x.delivered, x.pending, x.failed, x.parts]),
      [
        // 900 + 50 + 30 + 12 + 8 = 1,000 sent; delivered 900 + 50; parts 900 + 100 + 30 + 12 + 8 = 1,050.
        ["1", "A", 1000, 950, 30, { carrier_unreachable: 12, spam: 8 }, 1050],
        ["2", "no-variant", 400, 400, 0, {}, 800],
      ],
    );
    // Billed per the events: 5.229 + 0.581 + 0.06972 + 0.04648 + 4.648 = 10.5742 (AWS), 2.718 + 0.302 + 2.416 = 5.436.
    close(sms.total.billed.message, 10.5742);
    close(sms.total.billed.carrier, 5.436);
    // 1,850 parts × $0.00883 = $16.3355.
    assert.strictEqual(sms.total.parts, 1850);
    close(sms.estimate.dollars, 16.3355);
    assert.strictEqual(sms.optedOut, null);
  });

  it("the text and the page show the texts and their cost", async () => {
    const html = path.join(tmp, "sms.html");
    const r = await runSms(["--sms-price-per-part", "0.00883", "--html", html], logsAnswer(0));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /texts \(SMS events of log group \/sendtime\/dev\/sms-events/);
    assert.match(r.stdout, /1 +A +1,000 +950 +30 +carrier_unreachable 12, spam 8 +1,050/);
    assert.match(
      r.stdout,
      /cost: billed per the events \$16\.01 \(AWS \$10\.57, carriers \$5\.44\); 1,850 parts × \$0\.0088 \(--sms-price-per-part\) = \$16\.34/,
    );
    assert.match(r.stdout, /opted out: not in the events/);
    const page = fs.readFileSync(html, "utf8");
    assert.match(page, /<h2>Texts \(SMS\)<\/h2>/);
    assert.match(page, /<td>carrier_unreachable 12, spam 8<\/td>/);
  });

  it("a query that fails is one line naming the log group (exit 1)", async () => {
    const r = await runSms([], logsAnswer(0, "Failed"));
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /Logs Insights query of \/sendtime\/dev\/sms-events: the query ended Failed \(query id q-1\)/,
    );
  });

  it("a query that never completes is bounded by --timeout-seconds, and stopped", async () => {
    const r = await runSms(["--timeout-seconds", "2.5"], logsAnswer(Number.MAX_SAFE_INTEGER));
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /no result within the command's time limit of 2\.5 s/);
    assert.ok(
      r.requests.some((q) => q.target === "Logs_20140328.StopQuery"),
      "the query is stopped",
    );
  });

  it("a hung GetQueryResults is bounded by --timeout-seconds", async () => {
    const hang = (q: SeenRequest): Answer | undefined =>
      q.target === "Logs_20140328.StartQuery"
        ? { json: { queryId: "q-1" } }
        : q.target?.startsWith("Logs_")
          ? "hang"
          : undefined;
    const r = await runSms(["--timeout-seconds", "2"], hang);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /GetQueryResults \(Logs Insights query of \/sendtime\/dev\/sms-events\): no result within the command's time limit of 2 s/,
    );
  });
});
