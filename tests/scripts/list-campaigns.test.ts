/**
 * list-campaigns over the real wire formats against one local endpoint: EventBridge Scheduler REST-JSON
 * (ListScheduleGroups, ListSchedules, each paged behind NextToken) and S3 REST/XML (the launch records).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as listCampaigns } from "../../scripts/list-campaigns";
import { Answer, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-list-"));
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(
  outputs,
  JSON.stringify({
    bucketName: "recipients-ce6a540",
    region: "us-east-1",
    journeyDefinitions: [{ name: "welcome", steps: [] }],
  }),
);

/** Groups as AWS lists them (2 a page); "other-group" is not ours (NamePrefix filters it out server-side). */
const GROUPS = [
  { Name: "campaign-autumn", State: "ACTIVE", CreationDate: Date.UTC(2026, 8, 1) / 1000 },
  { Name: "campaign-spring", State: "ACTIVE", CreationDate: Date.UTC(2026, 10, 30) / 1000 },
  { Name: "campaign-welcome", State: "ACTIVE", CreationDate: Date.UTC(2026, 0, 5) / 1000 },
  { Name: "campaign-winter", State: "DELETING", CreationDate: Date.UTC(2026, 11, 1) / 1000 },
  { Name: "other-group", State: "ACTIVE", CreationDate: 0 },
];
/** Schedules per group: spring 250 (7 paused) and the cleanup schedule, autumn none, welcome 3, winter 1. */
const SCHEDULES: Record<string, { Name: string; State: string }[]> = {
  "campaign-spring": [
    ...Array.from({ length: 250 }, (_, i) => ({ Name: `r${i}-1`, State: i < 7 ? "DISABLED" : "ENABLED" })),
    { Name: "sendtime.cleanup", State: "ENABLED" },
  ],
  "campaign-autumn": [],
  "campaign-welcome": [1, 2, 3].map((i) => ({ Name: `s${i}-1`, State: "ENABLED" })),
  "campaign-winter": [{ Name: "w1-2", State: "ENABLED" }],
};
const RECORDS: Record<string, { key: string; modified: string; body: string }[]> = {
  spring: [
    {
      key: "launches/spring/first.json",
      modified: "2026-11-29T10:00:00.000Z",
      body: JSON.stringify({ launch: { id: "first", at: "2026-11-29T10:00:00.000Z" }, scheduled: [{ schedules: 9 }] }),
    },
    {
      key: "launches/spring/ae32aac75343b824.json",
      modified: "2026-11-30T12:00:01.000Z",
      body: JSON.stringify({
        launch: { id: "ae32aac75343b824", at: "2026-11-30T12:00:00.000Z" },
        scheduled: [{ schedules: 200 }, { schedules: 100 }],
        firstSend: "2026-12-01T14:00:00.000Z",
        lastSend: "2026-12-04T14:00:00.000Z",
      }),
    },
  ],
};

/** Pages of `items`, `size` at a time, behind tokens "p<n>" (or `forever`: the same token again and again). */
function paged<T>(items: T[], token: string | null, size: number, forever?: string) {
  if (forever) return { items: items.slice(0, size), next: forever };
  const from = token ? Number(token.slice(1)) : 0;
  return { items: items.slice(from, from + size), next: from + size < items.length ? `p${from + size}` : undefined };
}

function aws(o: { repeatSchedulesToken?: string; hang?: boolean } = {}) {
  return (r: SeenRequest): Answer => {
    const url = new URL(r.url, "http://x");
    const q = url.searchParams;
    if (url.pathname === "/schedule-groups") {
      const mine = GROUPS.filter((g) => g.Name.startsWith(q.get("NamePrefix") ?? ""));
      const p = paged(mine, q.get("NextToken"), 2);
      return {
        headers: { "content-type": "application/json" },
        json: {
          ScheduleGroups: p.items.map((g) => ({
            ...g,
            Arn: `arn:aws:scheduler:us-east-1:123456789012:schedule-group/${g.Name}`,
          })),
          NextToken: p.next,
        },
      };
    }
    if (url.pathname === "/schedules") {
      if (o.hang) return "hang";
      const group = q.get("ScheduleGroup")!;
      const p = paged(
        SCHEDULES[group] ?? [],
        q.get("NextToken"),
        100,
        group === "campaign-spring" ? o.repeatSchedulesToken : undefined,
      );
      return {
        headers: { "content-type": "application/json" },
        json: { Schedules: p.items.map((s) => ({ ...s, GroupName: group })), NextToken: p.next },
      };
    }
    const [, bucket, ...rest] = decodeURIComponent(url.pathname).split("/");
    if (q.get("list-type") === "2") {
      const campaign = (q.get("prefix") ?? "").split("/")[1];
      const records = RECORDS[campaign] ?? [];
      // one object a page, to follow the continuation token
      const p = paged(records, q.get("continuation-token"), 1);
      return {
        headers: { "content-type": "application/xml" },
        text: `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${q.get("prefix")}</Prefix><KeyCount>${p.items.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>${p.next ? "true" : "false"}</IsTruncated>${p.next ? `<NextContinuationToken>${p.next}</NextContinuationToken>` : ""}${p.items
          .map(
            (x) =>
              `<Contents><Key>${x.key}</Key><LastModified>${x.modified}</LastModified><Size>${x.body.length}</Size></Contents>`,
          )
          .join("")}</ListBucketResult>`,
      };
    }
    const key = rest.join("/");
    const record = Object.values(RECORDS)
      .flat()
      .find((x) => x.key === key);
    if (!record)
      return {
        status: 404,
        headers: { "content-type": "application/xml" },
        text: "<Error><Code>NoSuchKey</Code></Error>",
      };
    return {
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(record.body)) },
      text: record.body,
    };
  };
}

async function run(args: string[], o: Parameters<typeof aws>[0] = {}) {
  const endpoint = await startEndpoint(aws(o));
  let stdout = "",
    stderr = "";
  try {
    const code = await withEnv({ AWS_ENDPOINT_URL_SCHEDULER: endpoint.url, AWS_ENDPOINT_URL_S3: endpoint.url }, () =>
      listCampaigns(["--outputs", outputs, ...args], { out: (t) => (stdout += t), err: (t) => (stderr += t) }),
    );
    return { code, stdout, stderr, requests: endpoint.requests };
  } finally {
    await endpoint.close();
  }
}

describe("list-campaigns on the wire (local Scheduler + S3 endpoint)", function () {
  this.timeout(20_000);

  it("every campaign-* group over every page, its pending schedules over every page, its last launch", async () => {
    const r = await run(["--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout);
    assert.deepStrictEqual(
      list.map((c: any) => [
        c.campaign,
        c.state,
        c.pendingSchedules,
        c.disabledSchedules,
        c.journey,
        c.lastLaunch?.id ?? null,
      ]),
      [
        ["autumn", "ACTIVE", 0, 0, false, null],
        ["spring", "ACTIVE", 250, 7, false, "ae32aac75343b824"],
        ["welcome", "ACTIVE", 3, 0, true, null],
        ["winter", "DELETING", 1, 0, false, null],
      ],
    );
    assert.deepStrictEqual(list[1].lastLaunch, {
      id: "ae32aac75343b824",
      at: "2026-11-30T12:00:00.000Z",
      schedules: 300,
      firstSend: "2026-12-01T14:00:00.000Z",
      lastSend: "2026-12-04T14:00:00.000Z",
      record: "s3://recipients-ce6a540/launches/spring/ae32aac75343b824.json",
    });
    assert.strictEqual(list[0].createdAt, "2026-09-01T00:00:00.000Z");
    const urls = r.requests.map((q) => q.url);
    // groups: 4 of ours, 2 a page → 2 pages, asked with the prefix; spring's 251 schedules, 100 a page → 3 pages
    assert.deepStrictEqual(
      urls
        .filter((u) => u.startsWith("/schedule-groups"))
        .map((u) => new URL(u, "http://x").searchParams.get("NextToken")),
      [null, "p2"],
    );
    assert.ok(urls.filter((u) => u.startsWith("/schedule-groups")).every((u) => u.includes("NamePrefix=campaign-")));
    assert.strictEqual(
      urls.filter((u) => u.startsWith("/schedules?") && u.includes("ScheduleGroup=campaign-spring")).length,
      3,
    );
    // the journey's records are not looked for; spring's listing followed its continuation token
    assert.ok(!urls.some((u) => u.includes("launches%2Fwelcome") || u.includes("launches/welcome")));
  });

  it("prints a table", async () => {
    const r = await run([]);
    assert.strictEqual(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.deepStrictEqual(lines[0].split(/\s{2,}/), [
      "campaign",
      "state",
      "pending",
      "paused",
      "last launch",
      "sends",
    ]);
    assert.deepStrictEqual(lines[2].split(/\s{2,}/), [
      "spring",
      "ACTIVE",
      "250",
      "7",
      "ae32aac75343b824 at 2026-11-30T12:00Z, 300 schedules",
      "2026-12-01T14:00Z → 2026-12-04T14:00Z",
    ]);
    assert.deepStrictEqual(lines[3].split(/\s{2,}/).slice(0, 5), [
      "welcome",
      "ACTIVE",
      "3",
      "0",
      "journey (no launches)",
    ]);
    assert.strictEqual(lines[5], "4 campaigns, 254 pending schedules");
  });

  it("a page token AWS repeats forever: stopped, one line naming the call, exit 1", async () => {
    await assert.rejects(run([], { repeatSchedulesToken: "again" }), (e: Error) => {
      assert.strictEqual(e.constructor.name, "FindingsError");
      assert.match(
        e.message,
        /^ListSchedules in campaign-spring: the service returned page token "again" a second time \(page 2\); stopped instead of looping$/,
      );
      return true;
    });
  });

  it("a call that never answers: cut off at --timeout-seconds, one line, exit 1", async () => {
    const started = Date.now();
    await assert.rejects(run(["--timeout-seconds", "0.5"], { hang: true }), (e: Error) => {
      assert.strictEqual(e.constructor.name, "DeadlineExceeded");
      assert.match(
        e.message,
        /^ListSchedules in campaign-autumn: no result within the command's time limit of 0.5 s \(--timeout-seconds\)/,
      );
      return true;
    });
    assert.ok(Date.now() - started < 5_000);
  });

  it("bad flags: exit 2 (a flag it would ignore is refused)", async () => {
    for (const args of [
      ["--dlq-url", "x"],
      ["--timeout-seconds", "0"],
      ["--stack", "dev", "--outputs", outputs],
    ])
      await assert.rejects(
        listCampaigns(args.includes("--outputs") ? args : ["--outputs", outputs, ...args], { out() {}, err() {} }),
        (e: Error) => e.constructor.name === "UsageError",
      );
  });

  it("no campaign: says so, exit 0", async () => {
    const none = path.join(tmp, "none.json");
    fs.writeFileSync(none, JSON.stringify({ region: "us-east-1" }));
    const endpoint = await startEndpoint(() => ({
      headers: { "content-type": "application/json" },
      json: { ScheduleGroups: [] },
    }));
    let out = "";
    try {
      const code = await withEnv({ AWS_ENDPOINT_URL_SCHEDULER: endpoint.url }, () =>
        listCampaigns(["--outputs", none], { out: (t) => (out += t), err() {} }),
      );
      assert.strictEqual(code, 0);
    } finally {
      await endpoint.close();
    }
    assert.strictEqual(out, "No campaign: no campaign-* schedule group in this account and Region.\n");
  });

  it("with the ledger: each campaign's own state, a guardrail's pause on its own line with since when and why", async () => {
    const withLedger = path.join(tmp, "ledger.json");
    fs.writeFileSync(
      withLedger,
      JSON.stringify({ ...JSON.parse(fs.readFileSync(outputs, "utf8")), ledgerTableName: "sendtime-ledger" }),
    );
    const reason =
      "guardrail: bounce rate at or above 2% over 1h (at least 200 sends) (alarm sendtime-dev-guardrail-campaign-bounce-spring)";
    const items: Record<string, object> = {
      "campaign#spring": {
        pk: { S: "campaign#spring" },
        state: { S: "paused" },
        reason: { S: reason },
        updated_at: { S: "2026-12-01T15:02:00.000Z" },
      },
      "campaign#winter": {
        pk: { S: "campaign#winter" },
        state: { S: "cancelled" },
        updated_at: { S: "2026-12-02T09:00:00.000Z" },
      },
    };
    const scheduler = aws();
    const gets: string[] = [];
    const endpoint = await startEndpoint((r) => {
      if (r.target !== "DynamoDB_20120810.GetItem") return scheduler(r);
      const q = JSON.parse(r.body);
      gets.push(`${q.TableName} ${q.Key.pk.S} ${q.ConsistentRead}`);
      const item = items[q.Key.pk.S];
      return { json: item ? { Item: item } : {} };
    });
    let stdout = "";
    let json = "";
    try {
      const env = {
        AWS_ENDPOINT_URL_SCHEDULER: endpoint.url,
        AWS_ENDPOINT_URL_S3: endpoint.url,
        AWS_ENDPOINT_URL_DYNAMODB: endpoint.url,
      };
      const io = (sink: (t: string) => void) => ({ out: sink, err() {} });
      assert.strictEqual(
        await withEnv(env, () =>
          listCampaigns(
            ["--outputs", withLedger],
            io((t) => (stdout += t)),
          ),
        ),
        0,
      );
      await withEnv(env, () =>
        listCampaigns(
          ["--outputs", withLedger, "--json"],
          io((t) => (json += t)),
        ),
      );
    } finally {
      await endpoint.close();
    }
    // One consistent read per launched campaign (not the journey), each of its own item.
    assert.deepStrictEqual(gets.slice(0, 3), [
      "sendtime-ledger campaign#autumn true",
      "sendtime-ledger campaign#spring true",
      "sendtime-ledger campaign#winter true",
    ]);
    const lines = stdout.trimEnd().split("\n");
    assert.deepStrictEqual(lines.slice(-3), [
      `spring: paused since 2026-12-01T15:02:00.000Z (reason: ${reason})`,
      "winter: cancelled since 2026-12-02T09:00:00.000Z",
      "4 campaigns, 254 pending schedules",
    ]);
    const states = JSON.parse(json).map((c: any) => [c.campaign, c.campaignState?.state ?? null]);
    assert.deepStrictEqual(states, [
      ["autumn", "live"],
      ["spring", "paused"],
      ["welcome", null],
      ["winter", "cancelled"],
    ]);
  });
});
