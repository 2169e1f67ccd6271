/**
 * SES's own opt-outs into the opt-out table: the SUBSCRIPTION events the configuration set publishes to EventBridge
 * ("Email Subscribed", source aws.ses), handled by the unsubscribe function's bundle as the stack deploys it (its
 * second entry point, sesOptOutHandler), with the DynamoDB wire answered by a local endpoint. The event is SES's own
 * sample (the developer guide's "Subscription record", event-publishing-retrieving-sns-examples) inside EventBridge's
 * envelope; expected keys are written by hand.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { bundleUnsubscribeHandler } from "../../../infra/handler-bundle";
import { Endpoint, SeenRequest, startEndpoint } from "../../helpers/aws-endpoint";

const TABLE = "unsubscribe-opt-outs-1a2b3c4";
const LIST = "sendtime-dev";
const TOPIC = "campaigns";

/** The developer guide's Subscription record (the topic and list renamed to the stack's), as EventBridge delivers it. */
function sesEvent(
  change: { unsubscribeAll?: unknown; topics?: { topicName: string; subscriptionStatus: string }[] },
  over: { list?: string; destination?: string[]; detailType?: string } = {},
) {
  return {
    version: "0",
    id: "1f1d4e5a-0000-4000-8000-000000000001",
    "detail-type": over.detailType ?? "Email Subscribed",
    source: "aws.ses",
    account: "123456789012",
    time: "2022-01-12T01:00:18Z",
    region: "us-east-1",
    resources: [],
    detail: {
      eventType: "Subscription",
      mail: {
        timestamp: "2022-01-12T01:00:14.340Z",
        source: "sender@example.com",
        sourceArn: "arn:aws:ses:us-east-1:123456789012:identity/sender@example.com",
        sendingAccountId: "123456789012",
        messageId: "EXAMPLEe4bccb684-777bc8de-afa7-4970-92b0-f515137b1497-000000",
        destination: over.destination ?? ["Recipient@Example.com"],
        headersTruncated: false,
        commonHeaders: { from: ["sender@example.com"], to: ["recipient@example.com"], subject: "Message" },
        tags: { "ses:operation": ["SendEmail"], "ses:configuration-set": ["sendtime-dev"] },
      },
      subscription: {
        contactList: over.list ?? LIST,
        timestamp: "2022-01-12T01:00:17.910Z",
        source: "UnsubscribeHeader",
        newTopicPreferences: {
          unsubscribeAll: "unsubscribeAll" in change ? change.unsubscribeAll : false,
          topicSubscriptionStatus: change.topics ?? [{ topicName: TOPIC, subscriptionStatus: "OptIn" }],
        },
        oldTopicPreferences: {
          unsubscribeAll: false,
          topicSubscriptionStatus: [{ topicName: TOPIC, subscriptionStatus: "OptIn" }],
        },
      },
    },
  };
}

describe("SES's SUBSCRIPTION events into the opt-out table (the bundle's sesOptOutHandler)", function () {
  this.timeout(60_000);
  let bundle: any;
  let dynamodb: Endpoint;
  let answers: ({ status: number; type: string } | "hang")[] = [];
  const items = new Map<string, string>();
  const realLog = console.log;
  const realError = console.error;
  let logs: string[];

  before(async () => {
    dynamodb = await startEndpoint((r: SeenRequest) => {
      assert.strictEqual(r.target, "DynamoDB_20120810.UpdateItem");
      const next = answers.shift();
      if (next === "hang") return "hang";
      if (next) return { status: next.status, json: { __type: `com.amazonaws.dynamodb.v20120810#${next.type}` } };
      const req = JSON.parse(r.body);
      assert.strictEqual(req.TableName, TABLE);
      assert.strictEqual(req.UpdateExpression, "SET #since = if_not_exists(#since, :now)");
      const address = req.Key.address.S;
      if (!items.has(address)) items.set(address, req.ExpressionAttributeValues[":now"].S);
      return { json: {} };
    });
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb.url,
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
      AWS_REGION: "us-east-1",
      SENDTIME_SES_OPT_OUTS: JSON.stringify({ contactListName: LIST, topicName: TOPIC, optOutTable: TABLE }),
    });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-ses-opt-outs-")), "index.js");
    fs.writeFileSync(file, bundleUnsubscribeHandler().code);
    bundle = require(file);
  });
  beforeEach(() => {
    items.clear();
    answers = [];
    dynamodb.requests.length = 0;
    bundle.resetForTests();
    logs = [];
    console.log = console.error = (line: string) => logs.push(String(line));
  });
  afterEach(() => {
    console.log = realLog;
    console.error = realError;
  });
  after(async () => {
    await dynamodb.close();
    for (const k of [
      "AWS_ENDPOINT_URL_DYNAMODB",
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_REGION",
      "SENDTIME_SES_OPT_OUTS",
    ])
      delete process.env[k];
  });

  it("an opt-out of the stack's topic is recorded under the address as the sender looks it up, at SES's time", async () => {
    await bundle.sesOptOutHandler(sesEvent({ topics: [{ topicName: TOPIC, subscriptionStatus: "OptOut" }] }));
    assert.deepStrictEqual([...items], [["recipient@example.com", "2022-01-12T01:00:17.910Z"]]);
    assert.deepStrictEqual(JSON.parse(logs[0]), { outcome: "recorded", optOut: "topic", source: "UnsubscribeHeader" });
    assert.ok(!logs.join("\n").includes("example.com"), "logs hold no address");
  });

  it("SES's own sample (unsubscribe from everything) is recorded, whatever the topics say", async () => {
    await bundle.sesOptOutHandler(
      sesEvent({ unsubscribeAll: true, topics: [{ topicName: "ExampleTopicName", subscriptionStatus: "OptOut" }] }),
    );
    assert.deepStrictEqual([...items.keys()], ["recipient@example.com"]);
    assert.strictEqual(JSON.parse(logs[0]).optOut, "all");
  });

  it("an opt-in, another topic's opt-out, or another contact list records nothing (and deletes nothing)", async () => {
    for (const e of [
      sesEvent({ topics: [{ topicName: TOPIC, subscriptionStatus: "OptIn" }] }),
      sesEvent({ topics: [{ topicName: "news", subscriptionStatus: "OptOut" }] }),
      sesEvent({ topics: [{ topicName: TOPIC, subscriptionStatus: "OptOut" }] }, { list: "someone-elses" }),
    ])
      await bundle.sesOptOutHandler(e);
    assert.strictEqual(dynamodb.requests.length, 0);
    assert.deepStrictEqual(
      logs.map((l) => JSON.parse(l).outcome),
      ["not-an-opt-out", "not-an-opt-out", "other-contact-list"],
    );
  });

  it("a malformed Email Subscribed event is logged and thrown (retried, then kept in the dead-letter queue), nothing recorded", async () => {
    const bad = [
      sesEvent({ topics: [{ topicName: TOPIC, subscriptionStatus: "Maybe" }] }),
      sesEvent({ topics: [{ topicName: TOPIC, subscriptionStatus: "OptOut" }] }, { destination: [] }),
      sesEvent(
        { topics: [{ topicName: TOPIC, subscriptionStatus: "OptOut" }] },
        { destination: ["a@example.com", "b@example.com"] },
      ),
      { ...sesEvent({}), detail: { eventType: "Subscription", mail: {}, subscription: { contactList: LIST } } },
    ];
    for (const e of bad) {
      logs = [];
      await assert.rejects(bundle.sesOptOutHandler(e), /SES subscription event/);
      assert.strictEqual(JSON.parse(logs[0]).outcome, "malformed");
    }
    assert.strictEqual(dynamodb.requests.length, 0);
  });

  it("a display-name destination is recorded under its bare address, as the sender looks it up", async () => {
    const optOut = { topics: [{ topicName: TOPIC, subscriptionStatus: "OptOut" }] };
    await bundle.sesOptOutHandler(sesEvent(optOut, { destination: ['"Ann" <Ann@Example.com>'] }));
    await bundle.sesOptOutHandler(sesEvent(optOut, { destination: ["Bob Smith <bob@example.com>"] }));
    await bundle.sesOptOutHandler(sesEvent(optOut, { destination: ['"Lee, C. <no>" < Lee@example.com >'] }));
    assert.deepStrictEqual([...items.keys()], ["ann@example.com", "bob@example.com", "lee@example.com"]);
  });

  it("a destination that is no address, or an unsubscribeAll that is not a boolean, is malformed: thrown, nothing recorded", async () => {
    const optOut = { topics: [{ topicName: TOPIC, subscriptionStatus: "OptOut" }] };
    const optIn = { topics: [{ topicName: TOPIC, subscriptionStatus: "OptIn" }] };
    const bad = [
      sesEvent(optOut, { destination: ["Ann <ann@example.com"] }),
      sesEvent(optOut, { destination: ['"Ann" <>'] }),
      sesEvent({ ...optIn, unsubscribeAll: "true" }),
      sesEvent({ ...optIn, unsubscribeAll: "false" }),
      sesEvent({ ...optIn, unsubscribeAll: 1 }),
      sesEvent({ ...optIn, unsubscribeAll: null }),
    ];
    for (const e of bad) {
      logs = [];
      await assert.rejects(bundle.sesOptOutHandler(e), /SES subscription event: /);
      assert.strictEqual(JSON.parse(logs[0]).outcome, "malformed");
    }
    assert.strictEqual(dynamodb.requests.length, 0);
  });

  it("an event that is not an Email Subscribed event is ignored with a log line", async () => {
    await bundle.sesOptOutHandler(sesEvent({}, { detailType: "Email Delivered" }));
    await bundle.sesOptOutHandler(undefined);
    assert.strictEqual(dynamodb.requests.length, 0);
    assert.deepStrictEqual(
      logs.map((l) => JSON.parse(l).outcome),
      ["not-a-subscription-event", "not-a-subscription-event"],
    );
  });

  it("a table that fails is thrown (Lambda retries the event, then its on-failure destination keeps it)", async () => {
    answers = [
      { status: 400, type: "AccessDeniedException" },
      { status: 400, type: "AccessDeniedException" },
    ];
    await assert.rejects(
      bundle.sesOptOutHandler(sesEvent({ topics: [{ topicName: TOPIC, subscriptionStatus: "OptOut" }] })),
      /AccessDeniedException/,
    );
    assert.strictEqual(JSON.parse(logs[0]).outcome, "table-error");
    assert.strictEqual(items.size, 0);
  });

  it("the endpoint's handler is still the bundle's default entry point", () => {
    assert.strictEqual(typeof bundle.handler, "function");
    assert.strictEqual(typeof bundle.sesOptOutHandler, "function");
  });
});
