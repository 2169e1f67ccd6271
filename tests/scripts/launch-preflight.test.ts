/**
 * A real launch checks what SES and the mailbox providers check before anything is uploaded (issue 36): on the wire,
 * against a local SES v2 stand-in (REST-JSON: GET /v2/email/account, GET /v2/email/identities/{name}, errors in
 * x-amzn-errortype), a local DNS server (UDP on 127.0.0.1) answering the DMARC lookups, a local S3 and Step Functions.
 * One test per check and its message; hangs of SES and of DNS are bounded. Expected days and counts are computed by
 * hand from the list below.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../../scripts/launch-campaign";
import { dnsLookup, dmarcNames } from "../../scripts/lib/aws/dmarc";
import { Answer, Endpoint, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { runMain } from "../helpers/cli";
import { DnsAnswer, resolverFor, startDnsServer } from "../helpers/dns-server";
import { LocalS3, startLocalS3 } from "../helpers/s3-server";
import { HEALTHY_ACCOUNT, HEALTHY_DOMAIN, PREFLIGHT_OUTPUTS } from "../helpers/ses";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-preflight-"));
let runs = 0;

/**
 * Six recipients, two per zone, at 09:00 local on 2026-12-01 and one day later (+1d). By hand: Auckland (NZDT,
 * UTC+13) 09:00 = 2026-11-30T20:00Z, Tokyo (UTC+9) = 2026-12-01T00:00Z, New York (EST, UTC−5) = 2026-12-01T14:00Z;
 * so per UTC day: 2026-11-30: 2, 2026-12-01: 2 + 2 + 2 = 6, 2026-12-02: 2 + 2 = 4.
 */
const LIST = path.join(tmp, "list.csv");
fs.writeFileSync(
  LIST,
  [
    "id,email,timezone",
    "r1,ann@example.com,Pacific/Auckland",
    "r2,bob@example.com,Pacific/Auckland",
    "r3,cy@other.test,Asia/Tokyo",
    "r4,dee@other.test,Asia/Tokyo",
    "r5,eve@example.com,America/New_York",
    "r6,fay@third.test,America/New_York",
  ].join("\n") + "\n",
);

const json = (body: unknown): Answer => ({ headers: { "content-type": "application/json" }, json: body });
const notFound: Answer = {
  status: 404,
  headers: { "x-amzn-errortype": "NotFoundException", "content-type": "application/json" },
  json: { message: "Email identity does not exist" },
};
const DMARC_OK: DnsAnswer = { txt: [["v=DMARC1; p=quarantine; rua=mailto:d@example.com"]] };

interface Setup {
  account?: object;
  identity?: (name: string) => Answer;
  ses?: (q: SeenRequest) => Answer | undefined;
  dns?: (name: string, type: number) => DnsAnswer;
  outputs?: object;
  flags?: string[];
  /** CloudWatch's answer to DescribeAlarms (the account's guardrail alarms); absent: no CloudWatch endpoint. */
  alarms?: (q: SeenRequest) => Answer;
}

describe("launch-campaign: the preflight of a real launch (SES GetAccount, GetEmailIdentity, DMARC)", function () {
  this.timeout(30_000);
  let s3: LocalS3;
  let sfn: Endpoint;
  const saved = { ...dnsLookup };
  before(async () => {
    s3 = await startLocalS3();
    sfn = await startEndpoint((r) =>
      r.target === "AWSStepFunctions.StartExecution"
        ? {
            json: {
              executionArn: `arn:aws:states:us-east-1:123456789012:execution:f:${JSON.parse(r.body).name}`,
              startDate: 1.8e9,
            },
          }
        : { status: 400, json: { __type: "UnknownOperationException" } },
    );
  });
  after(async () => {
    Object.assign(dnsLookup, saved);
    await s3.close();
    await sfn.close();
  });
  afterEach(() => Object.assign(dnsLookup, saved));

  async function launch(o: Setup = {}) {
    const ses = await startEndpoint((q) => {
      const own = o.ses?.(q);
      if (own) return own;
      if (q.url.startsWith("/v2/email/templates/"))
        return json({ TemplateName: "t", TemplateContent: { Subject: "s" } });
      if (q.url === "/v2/email/account") return json(o.account ?? HEALTHY_ACCOUNT);
      if (q.url.startsWith("/v2/email/identities/"))
        return o.identity ? o.identity(decodeURIComponent(q.url.split("/").pop()!)) : json(HEALTHY_DOMAIN);
      return {
        status: 500,
        headers: { "x-amzn-errortype": "Unexpected" },
        json: { message: `unexpected ${q.method} ${q.url}` },
      };
    });
    const dns = await startDnsServer(o.dns ?? (() => DMARC_OK));
    dnsLookup.resolver = () => resolverFor(dns);
    const outputs = path.join(tmp, `outputs-${++runs}.json`);
    fs.writeFileSync(
      outputs,
      JSON.stringify({
        bucketName: "recipients-1",
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:f",
        region: "us-east-1",
        ...PREFLIGHT_OUTPUTS,
        ...o.outputs,
      }),
    );
    const s3Before = s3.requests.length;
    const started = Date.now();
    const alarms = o.alarms ? await startEndpoint(o.alarms) : undefined;
    try {
      const r = await withEnv(
        {
          AWS_ENDPOINT_URL_SESV2: ses.url,
          AWS_ENDPOINT_URL_S3: s3.endpoint,
          AWS_ENDPOINT_URL_SFN: sfn.url,
          ...(alarms ? { AWS_ENDPOINT_URL_CLOUDWATCH: alarms.url } : {}),
          AWS_MAX_ATTEMPTS: "1",
        },
        () =>
          runMain(main, [
            ...["--campaign", "spring", "--recipients", LIST, "--template", "welcome", "--templates", "none"],
            ...["--date", "2026-12-01", "--hour", "9", "--step", "+1d", "--now", "2026-11-20T00:00:00Z"],
            ...["--out", path.join(tmp, `out-${runs}`), "--outputs", outputs, "--json"],
            ...(o.flags ?? []),
          ]),
      );
      return {
        ...r,
        ms: Date.now() - started,
        ses: ses.requests.map((q) => `${q.method} ${q.url}`),
        dns: [...dns.queries],
        s3: s3.requests.slice(s3Before),
        json: r.stdout ? JSON.parse(r.stdout) : undefined,
        cloudWatch: alarms?.requests ?? [],
      };
    } finally {
      await ses.close();
      await dns.close();
      await alarms?.close();
    }
  }

  it("a healthy account, domain and DMARC record: the checks in order, then the launch; --ses-rate defaults to MaxSendRate", async () => {
    const r = await launch({
      account: { ...HEALTHY_ACCOUNT, SendQuota: { ...HEALTHY_ACCOUNT.SendQuota, MaxSendRate: 14 } },
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(r.ses, [
      "GET /v2/email/templates/welcome",
      "GET /v2/email/account",
      "GET /v2/email/identities/mail.example.com",
    ]);
    assert.deepStrictEqual(r.dns, [{ name: "_dmarc.mail.example.com", type: 16 }]);
    assert.ok(
      r.s3.some((q) => q.method === "PUT"),
      "the plan was uploaded",
    );
    assert.deepStrictEqual(
      [r.json.window.effectiveTps, r.json.window.effectiveTpsSource],
      [14, "SES maximum send rate, GetAccount MaxSendRate"],
    );
    assert.deepStrictEqual(r.json.utcDays, [
      { date: "2026-11-30", sends: 2 },
      { date: "2026-12-01", sends: 6 },
      { date: "2026-12-02", sends: 4 },
    ]);
    assert.strictEqual(r.json.preflight.checked, true);
    assert.deepStrictEqual(r.json.preflight.findings, []);
    assert.doesNotMatch(r.stderr, /^(error|warning):/m);
  });

  it("sending disabled: exit 2 before planning, one line, nothing uploaded", async () => {
    const r = await launch({ account: { ...HEALTHY_ACCOUNT, SendingEnabled: false } });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: SES sending is disabled for this account in this Region \(GetAccount SendingEnabled false\)/m,
    );
    assert.match(r.stderr, /^error: Not launched: 1 preflight check failed \(above\); nothing uploaded or started\.$/m);
    assert.deepStrictEqual(r.s3, []);
    assert.ok(!fs.existsSync(path.join(tmp, `out-${runs}`, "plan.jsonl")), "nothing planned");
  });

  it("the sandbox: every planned address must be a verified identity (an address, or its domain)", async () => {
    const sandbox = { ...HEALTHY_ACCOUNT, ProductionAccessEnabled: false };
    const identities = (names: string[]) => (q: SeenRequest) =>
      q.url === "/v2/email/list-identities"
        ? json({
            EmailIdentities: names.map((n) => ({
              IdentityName: n,
              IdentityType: n.includes("@") ? "EMAIL_ADDRESS" : "DOMAIN",
              SendingEnabled: true,
              VerificationStatus: "SUCCESS",
            })),
          })
        : undefined;
    // example.com (a domain) and cy@other.test are verified: dee@other.test and fay@third.test are not.
    const r = await launch({ account: sandbox, ses: identities(["example.com", "cy@other.test"]) });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: the SES account is in the sandbox \(GetAccount ProductionAccessEnabled false\), which sends only to verified identities, and 2 planned addresses of 6 are not \(dee@other\.test, fay@third\.test\): request production access/m,
    );
    assert.ok(!r.s3.some((q) => q.method === "PUT" || q.query.has("uploadId")), "nothing uploaded");
    const ok = await launch({ account: sandbox, ses: identities(["example.com", "other.test", "fay@third.test"]) });
    assert.strictEqual(ok.code, 0, ok.stderr);
  });

  it("DKIM of the From domain not verified: exit 2 naming its status and the records to publish", async () => {
    const r = await launch({
      identity: () => json({ ...HEALTHY_DOMAIN, DkimAttributes: { SigningEnabled: true, Status: "PENDING" } }),
    });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: the DKIM of mail\.example\.com is PENDING in SES \(GetEmailIdentity\), not SUCCESS: publish its three DKIM CNAME records/m,
    );
    assert.deepStrictEqual(r.s3, []);
  });

  it("no domain identity, only the address: mail fails DMARC alignment (signed for amazonses.com); neither: SES refuses", async () => {
    const r = await launch({
      identity: (name) => (name.includes("@") ? json({ ...HEALTHY_DOMAIN, IdentityType: "EMAIL_ADDRESS" }) : notFound),
    });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.deepStrictEqual(r.ses.slice(2), [
      "GET /v2/email/identities/mail.example.com",
      "GET /v2/email/identities/news%40mail.example.com",
    ]);
    assert.match(
      r.stderr,
      /^error: SES has no domain identity mail\.example\.com: mail from news@mail\.example\.com is DKIM-signed for amazonses\.com/m,
    );
    const none = await launch({ identity: () => notFound });
    assert.match(
      none.stderr,
      /^error: SES has no identity mail\.example\.com or news@mail\.example\.com verified in this Region/m,
    );
  });

  it("no DMARC record at the domain or its parent: exit 2 (a Gmail and Yahoo bulk-sender requirement)", async () => {
    const r = await launch({ dns: (name) => (name === "_dmarc.mail.example.com" ? "nxdomain" : "nodata") });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.deepStrictEqual(
      r.dns.map((q) => q.name),
      ["_dmarc.mail.example.com", "_dmarc.example.com"],
    );
    assert.match(
      r.stderr,
      /^error: no DMARC record for mail\.example\.com \(DNS TXT _dmarc\.mail\.example\.com, _dmarc\.example\.com\): Gmail and Yahoo require one of bulk senders; publish a TXT record at _dmarc\.mail\.example\.com/m,
    );
    assert.deepStrictEqual(r.s3, []);
  });

  it("DMARC: a record at the parent domain counts; TXT records that are not DMARC do not; two DMARC records are none", async () => {
    const parent = await launch({
      dns: (name) =>
        name === "_dmarc.example.com" ? { txt: [["v=DMARC1; ", "p=reject"]] } : { txt: [["v=spf1 -all"]] },
    });
    assert.strictEqual(parent.code, 0, parent.stderr);
    const two = await launch({ dns: () => ({ txt: [["v=DMARC1; p=none"], ["v=DMARC1; p=reject"]] }) });
    assert.strictEqual(two.code, 2, two.stderr);
    assert.match(
      two.stderr,
      /^error: _dmarc\.mail\.example\.com has 2 DMARC records \(TXT v=DMARC1\): receivers then apply none/m,
    );
    assert.deepStrictEqual(dmarcNames("a.b.example.co.uk"), [
      "_dmarc.a.b.example.co.uk",
      "_dmarc.b.example.co.uk",
      "_dmarc.example.co.uk",
      "_dmarc.co.uk",
    ]);
  });

  it("a DNS server that never answers: bounded (timeout × tries), a warning that --force passes", async () => {
    Object.assign(dnsLookup, { timeoutMs: 300, tries: 1, totalMs: 2_000 });
    const r = await launch({ dns: () => "hang" });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.ok(r.ms < 5_000, `bounded: ${r.ms} ms`);
    assert.match(
      r.stderr,
      /^error: the DMARC record of mail\.example\.com could not be checked \(DNS TXT _dmarc\.mail\.example\.com: no answer within 0\.3 s, 1 try\)/m,
    );
    assert.match(
      r.stderr,
      /^error: Not launched: 1 preflight check failed \(above\); nothing uploaded or started \(--force launches despite warnings\)\.$/m,
    );
    const forced = await launch({ dns: () => "hang", flags: ["--force"] });
    assert.strictEqual(forced.code, 0, forced.stderr);
    assert.match(
      forced.stderr,
      /^warning: the DMARC record of mail\.example\.com could not be checked .* \(--force\)$/m,
    );
    assert.strictEqual(forced.json.preflight.findings[0].level, "warning");
  });

  it("a DNS server failing (SERVFAIL) is a warning too: it says nothing about the record", async () => {
    const r = await launch({ dns: () => "servfail" });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /could not be checked \(DNS TXT _dmarc\.mail\.example\.com: the DNS server answered SERVFAIL\)/,
    );
  });

  it("the campaign's peak above MaxSendRate (--ses-rate higher than the account's): exit 2 after planning, the upload aborted", async () => {
    // 6 sends at 2026-12-01T00:00Z and 14:00Z in 1-minute windows: 2 a minute at most at 100/s (a 1-minute window).
    const r = await launch({
      account: { ...HEALTHY_ACCOUNT, SendQuota: { ...HEALTHY_ACCOUNT.SendQuota, MaxSendRate: 0.01 } },
      flags: ["--ses-rate", "100"],
    });
    assert.strictEqual(r.code, 2, r.stderr);
    // 2 sends in a 1-minute window: 2 ÷ 60 = 0.03/s (rounded to hundredths) against 0.01/s.
    assert.match(
      r.stderr,
      /^error: the campaign's peak is 0\.03 emails\/s with its 1-minute window, above the account's SES maximum send rate of 0\.01\/s \(GetAccount MaxSendRate\): leave --ses-rate and --tps out/m,
    );
    assert.deepStrictEqual(
      r.s3.filter((q) => q.method === "PUT"),
      [],
      "nothing uploaded",
    );
    assert.strictEqual(r.json.preflight.findings[0].check, "rate");
  });

  it("a UTC day above Max24HourSend: exit 2 naming the day and its sends (-1 is unlimited)", async () => {
    const quota = (n: number) => ({
      ...HEALTHY_ACCOUNT,
      SendQuota: { ...HEALTHY_ACCOUNT.SendQuota, Max24HourSend: n },
    });
    const r = await launch({ account: quota(5) });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: 2026-12-01 \(UTC\) has 6 sends, above the account's SES quota of 5 a day \(GetAccount Max24HourSend\): spread the campaign over days with --ramp/m,
    );
    assert.strictEqual((await launch({ account: quota(-1) })).code, 0);
    assert.strictEqual((await launch({ account: quota(6) })).code, 0);
  });

  it("a warm-up (--ramp) that keeps each UTC day within Max24HourSend lets the launch through", async () => {
    const caps = path.join(tmp, "caps-3.txt");
    fs.writeFileSync(caps, "3\n");
    const quota = { ...HEALTHY_ACCOUNT, SendQuota: { ...HEALTHY_ACCOUNT.SendQuota, Max24HourSend: 5 } };
    const r = await launch({ account: quota, flags: ["--ramp", caps] });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.ok(
      r.json.utcDays.every((d: { sends: number }) => d.sends <= 3),
      JSON.stringify(r.json.utcDays),
    );
    assert.ok(
      r.s3.some((q) => q.method === "PUT"),
      "launched",
    );
  });

  it("the last 24 hours' sends and the first day's above the quota: a warning (--force launches)", async () => {
    const account = { ...HEALTHY_ACCOUNT, SendQuota: { Max24HourSend: 6, MaxSendRate: 10, SentLast24Hours: 5 } };
    // 2026-11-30 has 2 sends (≤ 6) but 2 + 5 > 6; 2026-12-01 has 6 (≤ 6): only the warning.
    const r = await launch({ account });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error: 2026-11-30 \(UTC\) has 2 sends and the account sent 5 in the last 24 hours/m);
    const forced = await launch({
      account: { ...account, SendQuota: { ...account.SendQuota, Max24HourSend: 6 } },
      flags: ["--force"],
    });
    assert.strictEqual(forced.code, 0, forced.stderr);
  });

  it("no one-click unsubscribe in the stack: exit 2 naming the config keys", async () => {
    const r = await launch({ outputs: { contactListName: undefined, unsubscribeTopic: undefined } });
    assert.strictEqual(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: the stack has no one-click unsubscribe \(no stack outputs contactListName and unsubscribeTopic\): set sendtime:unsubscribeContactList and sendtime:unsubscribeTopic/m,
    );
  });

  describe("the account's guardrail (CloudWatch DescribeAlarms on the wire)", () => {
    const guarded = { guardrailAlarmPrefix: "sendtime-dev-guardrail-" };
    const DESCRIBE = "GraniteServiceVersion20100801.DescribeAlarms";
    const answer = (states: Record<string, string>) => (q: SeenRequest) =>
      q.target === DESCRIBE
        ? json({
            MetricAlarms: Object.entries(states).map(([kind, StateValue]) => ({
              AlarmName: `sendtime-dev-guardrail-account-${kind}`,
              MetricName: kind === "bounce" ? "Reputation.BounceRate" : "Reputation.ComplaintRate",
              StateValue,
              StateUpdatedTimestamp: 1795946400,
            })),
          })
        : { status: 400, json: { __type: "UnknownOperationException" } };

    it("a reputation alarm in ALARM (every campaign paused): not launched, a warning naming it and since when; --force launches", async () => {
      const r = await launch({ outputs: guarded, alarms: answer({ bounce: "ALARM", complaint: "OK" }) });
      assert.strictEqual(r.code, 2, r.stderr);
      const [ask] = r.cloudWatch;
      assert.deepStrictEqual(JSON.parse(ask.body), {
        AlarmNames: ["sendtime-dev-guardrail-account-bounce", "sendtime-dev-guardrail-account-complaint"],
        AlarmTypes: ["MetricAlarm"],
      });
      // 1795946400 s is 2026-11-29T10:00:00Z (by hand: 1795946400 − 1795910400, 2026-11-29T00:00Z, = 36000 s).
      assert.match(
        r.stderr,
        /^error: the account's guardrail alarm sendtime-dev-guardrail-account-bounce is in ALARM since 2026-11-29T10:00:00\.000Z \(SES Reputation\.BounceRate at or above its threshold\): it paused every campaign of the stack, and this one would go out; launch once it is back to OK \(see SES's reputation dashboard\), or --force$/m,
      );
      assert.ok(!r.s3.some((q) => q.method === "PUT"), "nothing uploaded");
      const forced = await launch({ outputs: guarded, alarms: answer({ bounce: "ALARM" }), flags: ["--force"] });
      assert.strictEqual(forced.code, 0, forced.stderr);
      assert.ok(forced.s3.some((q) => q.method === "PUT"));
    });

    it("DescribeAlarms refused: a warning saying it could not tell (--force launches)", async () => {
      const denied = () => ({
        status: 400,
        json: { __type: "AccessDeniedException", message: "not authorized to perform: cloudwatch:DescribeAlarms" },
      });
      const r = await launch({ outputs: guarded, alarms: denied });
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^error: the account's guardrail alarms could not be read \(.*AccessDenied.*\): whether the account's reputation paused the stack's campaigns is unknown; allow cloudwatch:DescribeAlarms, or --force$/m,
      );
      const forced = await launch({ outputs: guarded, alarms: denied, flags: ["--force"] });
      assert.strictEqual(forced.code, 0, forced.stderr);
    });

    it("both back to OK: launched; a stack without guardrails asks CloudWatch nothing", async () => {
      const ok = await launch({ outputs: guarded, alarms: answer({ bounce: "OK", complaint: "INSUFFICIENT_DATA" }) });
      assert.strictEqual(ok.code, 0, ok.stderr);
      assert.strictEqual(ok.cloudWatch.length, 1);
      const bare = await launch({ alarms: answer({ bounce: "ALARM" }) });
      assert.strictEqual(bare.code, 0, bare.stderr);
      assert.deepStrictEqual(bare.cloudWatch, []);
    });
  });

  it("the account under review (PROBATION) is a warning; several failures are one line each", async () => {
    const r = await launch({
      account: { ...HEALTHY_ACCOUNT, EnforcementStatus: "PROBATION", SendingEnabled: false },
      dns: () => "nxdomain",
    });
    assert.strictEqual(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.deepStrictEqual(
      lines.map((l) => l.slice(0, 40)),
      [
        "error: SES sending is disabled for this ",
        "error: no DMARC record for mail.example.",
        "error: the SES account is under review (",
        "error: Not launched: 3 preflight checks ",
      ],
    );
  });

  it("an SES endpoint that never answers GetAccount: the time limit ends the run (exit 1), nothing uploaded", async () => {
    const r = await launch({
      ses: (q) => (q.url === "/v2/email/account" ? "hang" : undefined),
      flags: ["--timeout-seconds", "1"],
    });
    assert.strictEqual(r.code, 1, r.stderr);
    assert.ok(r.ms < 5_000, `bounded: ${r.ms} ms`);
    assert.match(r.stderr, /SES GetAccount: no result within the command's time limit of 1 s/);
    assert.deepStrictEqual(r.s3, []);
  });

  it("a dry run makes no call and says what it did not check", async () => {
    const ses = await startEndpoint(() => ({ status: 500 }));
    try {
      const r = await withEnv({ AWS_ENDPOINT_URL_SESV2: ses.url }, () =>
        runMain(main, [
          ...["--campaign", "spring", "--recipients", LIST, "--template", "welcome", "--templates", "none"],
          ...["--date", "2026-12-01", "--hour", "9", "--now", "2026-11-20T00:00:00Z", "--dry-run"],
          ...["--out", path.join(tmp, `dry-${++runs}`)],
        ]),
      );
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^Dry run: nothing uploaded or started; not checked \(no AWS call or DNS lookup\): SES sending and sandbox, DKIM, DMARC, one-click unsubscribe, the account's guardrail alarms, the peak against MaxSendRate, each UTC day against Max24HourSend\.$/m,
      );
      assert.deepStrictEqual(ses.requests, []);
    } finally {
      await ses.close();
    }
  });
});
