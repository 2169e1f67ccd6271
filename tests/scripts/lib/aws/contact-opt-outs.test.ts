/**
 * launch-campaign --bulk reads the stack's SES contact list before a real launch: SendBulkEmail carries no
 * ListManagementOptions, so SES itself drops nothing for an opted-out contact. Against a local endpoint speaking SES
 * v2's REST-JSON (POST /v2/email/contact-lists/{name}/contacts/list, errors in x-amzn-errortype): the filter on the
 * wire, every page, a repeated token, a hang, a throttle, and the rows a launch rejects. Expected addresses are
 * written by hand (trimmed, lower-cased), never taken from the code's output.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { main } from "../../../../scripts/launch-campaign";
import { readContactListOptOuts } from "../../../../scripts/lib/aws/contact-opt-outs";
import { Deadline } from "../../../../scripts/lib/aws/call";
import { DeadlineExceeded, FindingsError } from "../../../../infra/core/errors";
import { parseBulkPlanRow } from "../../../../infra/core/plan/bulk-plan-row";
import { Answer, Endpoint, SeenRequest, startEndpoint, withEnv } from "../../../helpers/aws-endpoint";
import { runMain } from "../../../helpers/cli";
import { LocalS3, startLocalS3 } from "../../../helpers/s3-server";
import { fakeDmarc, healthySes } from "../../../helpers/ses";
import { dnsLookup } from "../../../../scripts/lib/aws/dmarc";

const LIST = "newsletter";
const TOPIC = "campaigns";
const LIST_PATH = `/v2/email/contact-lists/${LIST}/contacts/list`;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-optouts-"));
let runs = 0;

const optedOutOfTopic = (email: string) => ({
  EmailAddress: email,
  TopicPreferences: [{ TopicName: TOPIC, SubscriptionStatus: "OPT_OUT" }],
  UnsubscribeAll: false,
});
const unsubscribedFromAll = (email: string) => ({
  EmailAddress: email,
  TopicPreferences: [{ TopicName: TOPIC, SubscriptionStatus: "OPT_IN" }],
  UnsubscribeAll: true,
});
const subscribed = (email: string) => ({
  EmailAddress: email,
  TopicPreferences: [{ TopicName: TOPIC, SubscriptionStatus: "OPT_IN" }],
  UnsubscribeAll: false,
});

/** SES v2's answer to ListContacts: the topic's opt-outs (two pages) for the filtered call, every contact otherwise. */
function contactList(pages: { topic: unknown[][]; all: unknown[][] }) {
  return (r: SeenRequest): Answer => {
    if (r.method === "GET" && r.url.startsWith("/v2/email/templates/"))
      return { json: { TemplateName: decodeURIComponent(r.url.split("/").pop()!), TemplateContent: { Subject: "s" } } };
    if (r.method !== "POST" || r.url !== LIST_PATH)
      return { status: 404, headers: { "x-amzn-errortype": "NotFoundException" }, json: {} };
    const body = JSON.parse(r.body || "{}");
    const which = body.Filter ? pages.topic : pages.all;
    const page = body.NextToken ? Number(body.NextToken.slice(1)) : 0;
    // Tokens name the listing and the page: "t1" is the filtered listing's second page, "a1" the whole list's.
    const next = page + 1 < which.length ? { NextToken: `${body.Filter ? "t" : "a"}${page + 1}` } : {};
    return { json: { Contacts: which[page], ...next } };
  };
}

async function withSes<T>(handler: (r: SeenRequest) => Answer, body: (e: Endpoint) => Promise<T>): Promise<T> {
  // A launch's preflight (GetAccount, GetEmailIdentity) is answered healthy; the contact list is what is tested.
  const ses = await startEndpoint((r) => healthySes(r) ?? handler(r));
  try {
    return await withEnv({ AWS_ENDPOINT_URL_SESV2: ses.url }, () => body(ses));
  } finally {
    await ses.close();
  }
}

const client = () => new SESv2Client({ region: "us-east-1", maxAttempts: 3 });
const listCalls = (e: Endpoint) => e.requests.filter((r) => r.url === LIST_PATH).map((r) => JSON.parse(r.body || "{}"));

describe("the contact list's opt-outs (ListContacts on the wire)", function () {
  this.timeout(20_000);

  it("reads every page of the topic's opt-outs and of the whole list, and keeps each opted-out address once", async () => {
    const handler = contactList({
      topic: [
        [optedOutOfTopic(" Ann@Example.com ")],
        [optedOutOfTopic("bob@example.com"), subscribed("filter-bug@example.com")],
      ],
      all: [
        [subscribed("cy@example.com"), unsubscribedFromAll("Dee@Example.COM")],
        [optedOutOfTopic("bob@example.com")],
      ],
    });
    await withSes(handler, async (ses) => {
      const d = new Deadline(10);
      const found = await readContactListOptOuts(d, client(), { contactListName: LIST, topicName: TOPIC });
      d.dispose();
      assert.deepStrictEqual([...found.optedOut].sort(), [
        ["ann@example.com", "topic"],
        ["bob@example.com", "topic"],
        ["dee@example.com", "all"],
      ]);
      const calls = listCalls(ses);
      // The topic's opt-outs, as SES documents the filter; then every contact (ListContactsFilter has no UnsubscribeAll).
      const filter = {
        FilteredStatus: "OPT_OUT",
        TopicFilter: { TopicName: TOPIC, UseDefaultIfPreferenceUnavailable: true },
      };
      assert.deepStrictEqual(calls[0].Filter, filter);
      assert.strictEqual(calls[0].NextToken, undefined);
      assert.deepStrictEqual(calls[1].Filter, filter);
      assert.strictEqual(calls[1].NextToken, "t1");
      assert.strictEqual(calls[2].Filter, undefined);
      assert.strictEqual(calls[3].NextToken, "a1");
      assert.strictEqual(calls.length, 4);
      assert.strictEqual(found.contactsRead, 6);
    });
  });

  it("follows a page with no contacts but a token (SES pages a filter that way) to the end", async () => {
    const handler = contactList({ topic: [[], [], [optedOutOfTopic("late@example.com")]], all: [[]] });
    await withSes(handler, async (ses) => {
      const d = new Deadline(10);
      const found = await readContactListOptOuts(d, client(), { contactListName: LIST, topicName: TOPIC });
      d.dispose();
      assert.deepStrictEqual([...found.optedOut.keys()], ["late@example.com"]);
      assert.strictEqual(listCalls(ses).length, 4);
    });
  });

  it("stops with one line when SES returns a page token a second time, instead of listing forever", async () => {
    await withSes(
      (r) => (r.url === LIST_PATH ? { json: { Contacts: [], NextToken: "same" } } : { status: 404, json: {} }),
      async (ses) => {
        const d = new Deadline(10);
        await assert.rejects(
          readContactListOptOuts(d, client(), { contactListName: LIST, topicName: TOPIC }),
          (e: Error) =>
            e instanceof FindingsError && /ListContacts .*newsletter.*page token "same" a second time/.test(e.message),
        );
        d.dispose();
        assert.strictEqual(listCalls(ses).length, 2);
      },
    );
  });

  it("is bounded by the command's time limit when SES does not answer", async () => {
    await withSes(
      () => "hang",
      async () => {
        const d = new Deadline(1);
        const started = Date.now();
        await assert.rejects(
          readContactListOptOuts(d, client(), { contactListName: LIST, topicName: TOPIC }),
          (e: Error) => e instanceof DeadlineExceeded && /ListContacts.*--timeout-seconds/.test(e.message),
        );
        assert.ok(Date.now() - started < 3_000, "within the deadline");
        d.dispose();
      },
    );
  });

  it("retries a throttled page (TooManyRequestsException) and reads on", async () => {
    let throttled = 0;
    const pages = contactList({
      topic: [[optedOutOfTopic("ann@example.com")]],
      all: [[unsubscribedFromAll("dee@example.com")]],
    });
    await withSes(
      (r) => {
        if (r.url === LIST_PATH && throttled++ === 0)
          return {
            status: 429,
            headers: { "x-amzn-errortype": "TooManyRequestsException" },
            json: { message: "Too many requests" },
          };
        return pages(r);
      },
      async (ses) => {
        const d = new Deadline(10);
        const found = await readContactListOptOuts(d, client(), { contactListName: LIST, topicName: TOPIC });
        d.dispose();
        assert.deepStrictEqual([...found.optedOut.keys()].sort(), ["ann@example.com", "dee@example.com"]);
        assert.strictEqual(listCalls(ses).length, 3);
      },
    );
  });
});

describe("launch-campaign --bulk rejects the addresses opted out in the contact list", function () {
  this.timeout(30_000);
  let s3: LocalS3;
  let other: Endpoint;
  const KEY = Buffer.alloc(32, 7).toString("base64url");
  const BUCKET = "recipients-1";
  const outputs = path.join(tmp, "outputs.json");
  const realResolver = dnsLookup.resolver;
  before(async () => {
    dnsLookup.resolver = fakeDmarc;
    s3 = await startLocalS3();
    other = await startEndpoint((r) => {
      if (r.target === "AmazonSSM.GetParameter")
        return { json: { Parameter: { Name: "/sendtime/dev/unsubscribe-key", Type: "SecureString", Value: KEY } } };
      if (r.target === "AWSStepFunctions.StartExecution")
        return {
          json: {
            executionArn: `arn:aws:states:us-east-1:123456789012:execution:f:${JSON.parse(r.body).name}`,
            startDate: 1.8e9,
          },
        };
      return { status: 400, json: { __type: "UnknownOperationException" } };
    });
    fs.writeFileSync(
      outputs,
      JSON.stringify({
        bucketName: BUCKET,
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:f",
        region: "us-east-1",
        unsubscribeUrl: "https://abc.lambda-url.us-east-1.on.aws/",
        unsubscribeKeyParameter: "/sendtime/dev/unsubscribe-key",
        contactListName: LIST,
        unsubscribeTopic: TOPIC,
        fromAddress: "news@example.com",
      }),
    );
  });
  after(async () => {
    dnsLookup.resolver = realResolver;
    await s3.close();
    await other.close();
  });

  const list = () => {
    const file = path.join(tmp, `list-${++runs}.csv`);
    fs.writeFileSync(
      file,
      [
        "id,email,timezone,first_name",
        "a,ann@example.com,UTC,Ann",
        "b, BOB@Example.com ,UTC,Bob",
        "c,cy@example.com,UTC,Cy",
        "d,dee@example.com,UTC,Dee",
      ].join("\n") + "\n",
    );
    return file;
  };
  const args = (file: string, out: string, more: string[]) => [
    ...["--campaign", "spring", "--recipients", file, "--template", "welcome", "--templates", "none"],
    ...["--date", "2026-12-01", "--hour", "9", "--now", "2026-11-20T00:00:00Z", "--bulk", "--json", "--out", out],
    ...more,
  ];

  it("a launch: each opted-out row is in rejects.csv as opted-out, counted, and in no uploaded entry", async () => {
    const handler = contactList({
      topic: [[optedOutOfTopic("bob@example.com")]],
      all: [[optedOutOfTopic("bob@example.com"), unsubscribedFromAll("DEE@example.com"), subscribed("cy@example.com")]],
    });
    const out = path.join(tmp, `out-${++runs}`);
    const r = await withSes(handler, () =>
      withEnv(
        { AWS_ENDPOINT_URL_S3: s3.endpoint, AWS_ENDPOINT_URL_SFN: other.url, AWS_ENDPOINT_URL_SSM: other.url },
        () => runMain(main, args(list(), out, ["--outputs", outputs])),
      ),
    );
    assert.strictEqual(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.strictEqual(summary.rejected.byReason["opted-out"], 2);
    assert.strictEqual(summary.rejected.total, 2);
    assert.strictEqual(summary.recipientsPlanned, 2);
    assert.deepStrictEqual(summary.bulk.contactList, {
      checked: true,
      contactListName: LIST,
      topicName: TOPIC,
      optedOut: 2,
      rejected: 2,
    });
    assert.strictEqual(
      fs.readFileSync(path.join(out, "rejects.csv"), "utf8"),
      [
        "line,id,reason",
        `3,b,opted out of topic ${TOPIC} in contact list ${LIST}`,
        `5,d,unsubscribed from every topic of contact list ${LIST}`,
      ].join("\n") + "\n",
    );
    const plans = [...s3.objects.entries()].filter(([k]) => k.startsWith(`${BUCKET}/plans/`));
    assert.strictEqual(plans.length, 1);
    const emails = plans[0][1]
      .toString()
      .split("\n")
      .filter(Boolean)
      .flatMap((l) => parseBulkPlanRow(l).entries.map((e) => e.email));
    assert.deepStrictEqual(emails.sort(), ["ann@example.com", "cy@example.com"]);
  });

  it("a dry run asks SES nothing and says the contact list was not checked", async () => {
    const out = path.join(tmp, `out-${++runs}`);
    await withSes(contactList({ topic: [[]], all: [[]] }), async (ses) => {
      const json = await runMain(main, args(list(), out, ["--dry-run"]));
      assert.strictEqual(json.code, 0, json.stderr);
      assert.deepStrictEqual(JSON.parse(json.stdout).bulk.contactList, { checked: false });
      const text = await runMain(
        main,
        args(list(), path.join(tmp, `out-${++runs}`), ["--dry-run"]).filter((a) => a !== "--json"),
      );
      assert.match(text.stdout, /\n {2}contact list: not checked \(dry run: no AWS call\)/);
      assert.strictEqual(ses.requests.length, 0);
    });
  });
});
