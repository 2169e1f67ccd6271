/**
 * The one-click unsubscribe endpoint as deployed: bundled by the stack's own esbuild step into one file, required
 * from disk, its (bundled) SES and SSM clients mocked with aws-sdk-client-mock. Requests are Lambda function URL
 * events (payload 2.0) as RFC 8058 mail clients send them. Tokens are made with Python's hmac (an independent
 * implementation of HMAC-SHA256), not with the code under test.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { mockClient } from "aws-sdk-client-mock";
import { bundleUnsubscribeHandler } from "../../../infra/handler-bundle";
import { senderInput } from "../../../infra/core/send/sender-input";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { unsubscribeHeaders } from "../../../infra/core/consent/unsubscribe";
import { Endpoint, SeenRequest, startEndpoint } from "../../helpers/aws-endpoint";
import { runJsonataMachine } from "../../helpers/jsonata-interpreter";
import { senderTestParameters, withLedger } from "../../helpers/sender-ledger";

const KEY_VALUE = Buffer.alloc(32, 7).toString("base64url");
const OTHER_KEY_VALUE = Buffer.alloc(32, 8).toString("base64url");
const OPT_OUT_TABLE = "unsubscribe-opt-outs-1a2b3c4";
const SETTINGS = {
  contactListName: "sendtime-dev",
  topicName: "campaigns",
  keyParameter: "/sendtime/dev/unsubscribe-key",
  optOutTable: OPT_OUT_TABLE,
};

/** `<address b64url>.<HMAC-SHA256(key, "sendtime-unsubscribe:v1:" + address) b64url>`, computed by Python. */
function pythonToken(keyValue: string, address: string): string {
  const script = `
import base64, hashlib, hmac, sys
pad = lambda s: s + "=" * (-len(s) % 4)
key = base64.urlsafe_b64decode(pad(sys.argv[1]))
a = sys.argv[2].strip().lower()
b = lambda x: base64.urlsafe_b64encode(x).decode().rstrip("=")
print(b(a.encode()) + "." + b(hmac.new(key, ("sendtime-unsubscribe:v1:" + a).encode(), hashlib.sha256).digest()))`;
  return execFileSync("python3", ["-c", script, keyValue, address]).toString().trim();
}

const awsError = (name: string) => Object.assign(new Error(`${name} from the fake`), { name });

/** SES's contact list, behind the mock: contacts and every call made. */
class FakeContacts {
  contacts = new Map<string, any>();
  calls: string[] = [];
  failWith?: string;
  send(command: any) {
    const name = command.constructor.name.replace(/Command\d*$/, "");
    const input = command.input;
    this.calls.push(name);
    assert.strictEqual(input.ContactListName, "sendtime-dev");
    if (this.failWith) throw awsError(this.failWith);
    const found = this.contacts.get(input.EmailAddress);
    if (name === "GetContact") {
      if (!found) throw awsError("NotFoundException");
      return structuredClone(found);
    }
    if (name === "CreateContact") {
      if (found) throw awsError("AlreadyExistsException");
      this.contacts.set(input.EmailAddress, { ...input });
      return {};
    }
    assert.strictEqual(name, "UpdateContact");
    if (!found) throw awsError("NotFoundException");
    this.contacts.set(input.EmailAddress, { ...input });
    return {};
  }
}

/**
 * The opt-out table behind a local DynamoDB endpoint (JSON 1.0 on the wire, as the service speaks it): items by
 * address, and how the next requests are answered.
 */
class FakeOptOuts {
  items = new Map<string, Record<string, { S: string }>>();
  answers: ({ status: number; type: string } | "hang")[] = [];
  handle(r: SeenRequest) {
    assert.strictEqual(r.method, "POST");
    assert.strictEqual(r.target, "DynamoDB_20120810.UpdateItem");
    assert.strictEqual(r.headers["content-type"], "application/x-amz-json-1.0");
    assert.match(
      String(r.headers.authorization),
      /^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/us-east-1\/dynamodb\/aws4_request, SignedHeaders=[^,]*x-amz-target/,
    );
    const next = this.answers.shift();
    if (next === "hang") return "hang" as const;
    if (next)
      return {
        status: next.status,
        json: { __type: `com.amazonaws.dynamodb.v20120810#${next.type}`, message: "from the fake" },
      };
    const req = JSON.parse(r.body);
    assert.strictEqual(req.TableName, OPT_OUT_TABLE);
    assert.deepStrictEqual(Object.keys(req.Key), ["address"]);
    // The endpoint's one expression, applied as DynamoDB documents if_not_exists: the first time is kept.
    assert.strictEqual(req.UpdateExpression, "SET #since = if_not_exists(#since, :now)");
    const since: string = req.ExpressionAttributeNames["#since"];
    const address: string = req.Key.address.S;
    const item: Record<string, { S: string }> = this.items.get(address) ?? { address: { S: address } };
    item[since] ??= req.ExpressionAttributeValues[":now"];
    this.items.set(address, item);
    return { json: {} };
  }
}

describe("one-click unsubscribe endpoint (the esbuild bundle the stack deploys)", function () {
  this.timeout(60_000);
  let bundle: any;
  let ses: ReturnType<typeof mockClient>;
  let ssm: ReturnType<typeof mockClient>;
  let fake: FakeContacts;
  let keyReads: number;
  const realLog = console.log;
  const realError = console.error;
  let logs: string[];
  let source = 0;
  let table: FakeOptOuts;
  let dynamodb: Endpoint;

  before(async () => {
    dynamodb = await startEndpoint((r) => table.handle(r));
    process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamodb.url;
    process.env.AWS_ACCESS_KEY_ID = "test";
    process.env.AWS_SECRET_ACCESS_KEY = "test";
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-unsubscribe-"));
    const file = path.join(dir, "index.js");
    fs.writeFileSync(file, bundleUnsubscribeHandler().code);
    process.env.SENDTIME_UNSUBSCRIBE = JSON.stringify(SETTINGS);
    process.env.AWS_REGION = "us-east-1";
    bundle = require(file);
    ses = mockClient(bundle.SESv2Client);
    ssm = mockClient(bundle.SSMClient);
  });
  beforeEach(() => {
    bundle.resetForTests();
    fake = new FakeContacts();
    table = new FakeOptOuts();
    dynamodb.requests.length = 0;
    keyReads = 0;
    ses.reset();
    ssm.reset();
    (ses as any).send.callsFake((command: any) => Promise.resolve().then(() => fake.send(command)));
    (ssm as any).send.callsFake((command: any) =>
      Promise.resolve().then(() => {
        keyReads++;
        assert.deepStrictEqual(command.input, { Name: SETTINGS.keyParameter, WithDecryption: true });
        return { Parameter: { Value: KEY_VALUE } };
      }),
    );
    logs = [];
    console.log = console.error = (line: string) => logs.push(String(line));
  });
  afterEach(() => {
    console.log = realLog;
    console.error = realError;
  });
  after(async () => {
    ses.restore();
    ssm.restore();
    await dynamodb.close();
    for (const k of [
      "AWS_ENDPOINT_URL_DYNAMODB",
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_REGION",
      "SENDTIME_UNSUBSCRIBE",
    ])
      delete process.env[k];
  });

  /** A request from its own source address (each test's requests share one unless told otherwise). */
  const request = (method: string, token: string, body?: string, ip = `203.0.113.${source}`) => ({
    version: "2.0",
    requestContext: { http: { method, sourceIp: ip } },
    queryStringParameters: { t: token },
    headers: body ? { "content-type": "application/x-www-form-urlencoded" } : {},
    ...(body ? { body: Buffer.from(body).toString("base64"), isBase64Encoded: true } : {}),
  });
  const oneClick = (token: string, ip?: string) =>
    bundle.handler(request("POST", token, "List-Unsubscribe=One-Click", ip));
  beforeEach(() => source++);

  it("a good token: one-click POST opts the address out of the topic with one read and one write, and says so", async () => {
    const token = pythonToken(KEY_VALUE, " Ann@Example.com ");
    const res = await oneClick(token);
    assert.strictEqual(res.statusCode, 200);
    assert.match(res.body, /You are unsubscribed/);
    assert.deepStrictEqual(fake.calls, ["GetContact", "CreateContact"]);
    assert.deepStrictEqual(fake.contacts.get("ann@example.com").TopicPreferences, [
      { TopicName: "campaigns", SubscriptionStatus: "OPT_OUT" },
    ]);
    assert.deepStrictEqual(
      logs.map((l) => JSON.parse(l)),
      [{ outcome: "opted-out", status: 200 }],
    );
    assert.ok(!logs.join("").includes("ann"), "logs hold no address");
    // And in the opt-out table the sender reads, keyed as the token names the address.
    assert.deepStrictEqual([...table.items.keys()], ["ann@example.com"]);
    assert.match(table.items.get("ann@example.com")!.opted_out_at.S, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("an existing contact keeps its other topics, attributes and settings; only this topic turns OPT_OUT", async () => {
    fake.contacts.set("bob@example.com", {
      ContactListName: "sendtime-dev",
      EmailAddress: "bob@example.com",
      TopicPreferences: [
        { TopicName: "news", SubscriptionStatus: "OPT_IN" },
        { TopicName: "campaigns", SubscriptionStatus: "OPT_IN" },
      ],
      UnsubscribeAll: false,
      AttributesData: '{"plan":"pro"}',
    });
    const res = await oneClick(pythonToken(KEY_VALUE, "bob@example.com"));
    assert.strictEqual(res.statusCode, 200);
    assert.deepStrictEqual(fake.calls, ["GetContact", "UpdateContact"]);
    const c = fake.contacts.get("bob@example.com");
    assert.deepStrictEqual(c.TopicPreferences, [
      { TopicName: "news", SubscriptionStatus: "OPT_IN" },
      { TopicName: "campaigns", SubscriptionStatus: "OPT_OUT" },
    ]);
    assert.deepStrictEqual([c.UnsubscribeAll, c.AttributesData], [false, '{"plan":"pro"}']);
  });

  it("repeated: the second click is fine (200) and writes nothing; the key is read once per instance", async () => {
    const token = pythonToken(KEY_VALUE, "cy@example.com");
    assert.strictEqual((await oneClick(token)).statusCode, 200);
    fake.calls = [];
    const again = await oneClick(token);
    assert.strictEqual(again.statusCode, 200);
    assert.deepStrictEqual(fake.calls, ["GetContact"]);
    assert.strictEqual(keyReads, 1);
    assert.strictEqual(JSON.parse(logs[1]).outcome, "already-opted-out");
    assert.strictEqual(table.items.size, 1);
  });

  it("an address already opted out in SES (before the table existed) is recorded in the table too; the first time is kept", async () => {
    fake.contacts.set("old@example.com", {
      ContactListName: "sendtime-dev",
      EmailAddress: "old@example.com",
      TopicPreferences: [{ TopicName: "campaigns", SubscriptionStatus: "OPT_OUT" }],
    });
    table.items.set("old@example.com", {
      address: { S: "old@example.com" },
      opted_out_at: { S: "2026-01-01T00:00:00.000Z" },
    });
    const res = await oneClick(pythonToken(KEY_VALUE, "old@example.com"));
    assert.strictEqual(res.statusCode, 200);
    assert.strictEqual(table.items.get("old@example.com")!.opted_out_at.S, "2026-01-01T00:00:00.000Z");
    table.items.clear();
    assert.strictEqual((await oneClick(pythonToken(KEY_VALUE, "old@example.com"))).statusCode, 200);
    assert.ok(table.items.has("old@example.com"));
  });

  it("the table refusing or failing: 503 with Retry-After and no SES call (never 'unsubscribed' while bulk sends would still go)", async () => {
    table.answers = [{ status: 400, type: "AccessDeniedException" }];
    const denied = await oneClick(pythonToken(KEY_VALUE, "joe@example.com"));
    assert.strictEqual(denied.statusCode, 503);
    assert.strictEqual(denied.headers["Retry-After"], "60");
    assert.deepStrictEqual(JSON.parse(logs[0]), {
      outcome: "table-error",
      status: 503,
      error: "AccessDeniedException",
    });
    assert.deepStrictEqual(fake.calls, []);
    // Throttled twice, then answered: three attempts, one opt-out.
    table.answers = [
      { status: 400, type: "ProvisionedThroughputExceededException" },
      { status: 500, type: "InternalServerError" },
    ];
    assert.strictEqual((await oneClick(pythonToken(KEY_VALUE, "joe@example.com"))).statusCode, 200);
    assert.ok(table.items.has("joe@example.com"));
    assert.strictEqual(dynamodb.requests.filter((r) => r.body.includes("joe@")).length, 4);
  });

  it("a table that never answers: 503 within the attempts' bound (3 × 1.5 s), no SES call", async function () {
    this.timeout(20_000);
    table.answers = ["hang", "hang", "hang"];
    const started = Date.now();
    const res = await oneClick(pythonToken(KEY_VALUE, "kim@example.com"));
    assert.strictEqual(res.statusCode, 503);
    assert.ok(Date.now() - started < 6_000, `${Date.now() - started} ms`);
    assert.deepStrictEqual(fake.calls, []);
  });

  it("end to end: an address opted out through the endpoint is never sent by a bulk schedule that holds it; the others are", async () => {
    assert.strictEqual((await oneClick(pythonToken(KEY_VALUE, "Bob@Example.com"))).statusCode, 200);
    const entries = ["ann@example.com", "bob@example.com", "cy@example.com"].map((email, i) => ({
      recipient_id: `r${i}`,
      email,
      template_data: { unsubscribe_url: `https://u.example/?t=${i}` },
      headers: unsubscribeHeaders(`https://u.example/?t=${i}`),
    }));
    const row = {
      schedule_name: "b.0900.spring.-.0",
      send_at: "2026-12-01T09:00:00",
      timezone: "UTC",
      utc: "2026-12-01T09:00:00.000Z",
      schedule_expression: "at(2026-12-01T09:00:00)",
      step: 1,
      template: "spring",
      variant: null,
      entries,
    };
    const input = {
      ...senderInput(
        { fromAddress: "news@mail.example.com", configurationSetName: "sendtime-dev" },
        "spring",
        row as any,
      ),
      schedule: "s",
      scheduled_time: "2026-12-01T09:00:00Z",
    };
    const sent: string[] = [];
    const def = senderDefinition(
      senderTestParameters({
        deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/1/dlq",
        optOuts: { tableName: OPT_OUT_TABLE },
      }),
    );
    const { output } = await runJsonataMachine(
      def,
      input,
      withLedger({
        call: (service, action, args) => {
          if (service === "dynamodb" && action === "batchGetItem") {
            const keys = args.RequestItems[OPT_OUT_TABLE].Keys.map((k: any) => k.address.S);
            return {
              Responses: {
                [OPT_OUT_TABLE]: keys.filter((k: string) => table.items.has(k)).map((k: string) => table.items.get(k)),
              },
              UnprocessedKeys: {},
            };
          }
          if (service === "cloudwatch") return {};
          assert.deepStrictEqual([service, action], ["sesv2", "sendBulkEmail"]);
          sent.push(...args.BulkEmailEntries.map((e: any) => e.Destination.ToAddresses[0]));
          return { BulkEmailEntryResults: args.BulkEmailEntries.map(() => ({ Status: "SUCCESS", MessageId: "m" })) };
        },
      }),
      { startTime: "2026-12-01T09:00:00Z" },
    );
    assert.deepStrictEqual(sent, ["ann@example.com", "cy@example.com"]);
    assert.strictEqual(output.opted_out, 1);
  });

  it("a forged or altered token: 400 and no SES call (another key, another address, bad shapes)", async () => {
    const good = pythonToken(KEY_VALUE, "dee@example.com");
    const forged = [
      pythonToken(OTHER_KEY_VALUE, "dee@example.com"),
      `${Buffer.from("eve@example.com").toString("base64url")}.${good.split(".")[1]}`,
      good.slice(0, -1) + (good.endsWith("A") ? "B" : "A"),
      "",
      "not-a-token",
      `${good}.x`,
    ];
    for (const t of forged) {
      const res = await oneClick(t, `198.51.100.${forged.indexOf(t)}`);
      assert.strictEqual(res.statusCode, 400, t);
      assert.match(res.body, /not valid/);
    }
    assert.deepStrictEqual(fake.calls, []);
    assert.deepStrictEqual([table.items.size, dynamodb.requests.length], [0, 0]);
  });

  it("GET shows a confirmation page whose button POSTs the one-click body; it unsubscribes nobody", async () => {
    const token = pythonToken(KEY_VALUE, "fay@example.com");
    const res = await bundle.handler(request("GET", token));
    assert.strictEqual(res.statusCode, 200);
    assert.strictEqual(res.headers["Content-Type"], "text/html; charset=utf-8");
    assert.ok(res.body.includes(`<form method="post" action="?t=${encodeURIComponent(token)}">`));
    assert.ok(res.body.includes('<input type="hidden" name="List-Unsubscribe" value="One-Click">'));
    assert.deepStrictEqual(fake.calls, []);
    const bad = await bundle.handler(request("GET", pythonToken(OTHER_KEY_VALUE, "fay@example.com")));
    assert.strictEqual(bad.statusCode, 400);
  });

  it("a POST without the one-click body is refused (400); multipart/form-data with it is accepted", async () => {
    const token = pythonToken(KEY_VALUE, "gus@example.com");
    assert.strictEqual((await bundle.handler(request("POST", token, "hello=1"))).statusCode, 400);
    assert.deepStrictEqual(fake.calls, []);
    const multipart = '--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n';
    assert.strictEqual((await bundle.handler(request("POST", token, multipart))).statusCode, 200);
  });

  it("rate-limited per source address: the 11th request in a minute gets 429 and no SES call; another source is served", async () => {
    const token = pythonToken(KEY_VALUE, "hal@example.com");
    for (let i = 0; i < 10; i++) assert.strictEqual((await oneClick(token, "192.0.2.1")).statusCode, 200);
    fake.calls = [];
    const limited = await oneClick(token, "192.0.2.1");
    assert.strictEqual(limited.statusCode, 429);
    assert.strictEqual(limited.headers["Retry-After"], "60");
    assert.deepStrictEqual(fake.calls, []);
    assert.strictEqual((await oneClick(token, "192.0.2.2")).statusCode, 200);
  });

  it("SES busy or failing: 503 with Retry-After, the error's name logged (no address); other methods: 405", async () => {
    fake.failWith = "TooManyRequestsException";
    const res = await oneClick(pythonToken(KEY_VALUE, "ida@example.com"));
    assert.strictEqual(res.statusCode, 503);
    assert.strictEqual(res.headers["Retry-After"], "60");
    assert.deepStrictEqual(JSON.parse(logs[0]), {
      outcome: "ses-busy",
      status: 503,
      error: "TooManyRequestsException",
    });
    const put = await bundle.handler(request("PUT", "x"));
    assert.strictEqual(put.statusCode, 405);
  });
});
