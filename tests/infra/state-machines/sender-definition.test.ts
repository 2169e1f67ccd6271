/**
 * The one sender, run by the tests' JSONata interpreter against stateful fakes: SES answering per entry (a status for
 * each address and attempt, or a whole-call failure before or after it delivered), the ledger (occurrences and
 * campaign states), the cap's table, the opt-out table and the dead-letter queue. What a user would notice: who got
 * mail and how many times, each entry's recorded outcome, what reached the dead-letter queue.
 */
import * as assert from "assert";
import fc from "fast-check";
import { TextDocument } from "vscode-languageserver-textdocument";
import { recipientSenderInput, SenderInput, senderInput } from "../../../infra/core/send/sender-input";
import type { BulkPlanRow } from "../../../infra/core/plan/bulk-plan-row";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { SenderParameters } from "../../../infra/state-machines/sender-states";
import {
  ENTRY_RETRY,
  secondsFromStateReadToLastSend,
  senderWorstCaseSeconds,
} from "../../../infra/core/send/sender-contract";
import { stepFunctions } from "../../../infra/core/plan/quotas";
import { MAX_BULK_ENTRIES_INPUT_BYTES } from "../../../infra/core/plan/bulk-plan-row";
import { StatesError } from "../../helpers/asl-interpreter";
import { FakeTable, JsonataRunStats, runJsonataMachine } from "../../helpers/jsonata-interpreter";

const aslValidator = require("asl-validator");
const { getLanguageService } = require("amazon-states-language-service");

const QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq";
const LEDGER = "sender-ledger-dev";
const GATE = "sendtime-gate-dev";
const OPT_OUT_TABLE = "unsubscribe-opt-outs-1a2b3c4";
const PARAMS: SenderParameters = { partition: "aws", deadLetterQueueUrl: QUEUE, ledger: { tableName: LEDGER } };
const capped = (max = 1): SenderParameters => ({ ...PARAMS, gate: { cap: { max, per: "day" }, tableName: GATE } });
const CAPPED = capped(1);
const CHECKED: SenderParameters = { ...PARAMS, optOuts: { tableName: OPT_OUT_TABLE } };
const CHECKED_CAPPED: SenderParameters = { ...CAPPED, optOuts: { tableName: OPT_OUT_TABLE } };
const SCHEDULE = "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/b.0900.spring-sale.A.0-1";
const AT = "2026-12-01T09:00:00Z";
const SENDER = { fromAddress: "news@mail.example.com", configurationSetName: "sendtime-dev" };

/** A bulk line of these recipients (ids r0, r1, …), and the input Scheduler would start the sender with. */
function input(addresses: string[], schedule = SCHEDULE, at = AT): SenderInput {
  const row: BulkPlanRow = {
    schedule_name: "b.0900.spring-sale.A.0-1",
    send_at: "2026-12-01T09:00:00",
    timezone: "UTC",
    utc: "2026-12-01T09:00:00.000Z",
    schedule_expression: "at(2026-12-01T09:00:00)",
    step: 1,
    template: "spring-sale",
    variant: "A",
    entries: addresses.map((email, i) => ({
      recipient_id: `r${i}`,
      email,
      template_data: { first_name: `Zoë "${i}"`, unsubscribe_url: `https://u.example/?t=${i}` },
      headers: [
        { Name: "List-Unsubscribe", Value: `<https://u.example/?t=${i}>` },
        { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" },
      ],
    })),
  };
  // Scheduler fills in the two context attributes when it starts the sender.
  return { ...senderInput(SENDER, "spring", row), schedule, scheduled_time: at };
}

/** What redrive creates for a dead-lettered entry: a new schedule `<original>-r<N>`, so a new occurrence. */
const redriven = (i: SenderInput, recipients: string[], n = 1): SenderInput => {
  const keep = i.recipients.map((r, k) => [r, k] as const).filter(([r]) => recipients.includes(r));
  return {
    ...i,
    bulk: { ...i.bulk, BulkEmailEntries: keep.map(([, k]) => i.bulk.BulkEmailEntries[k]) },
    recipients: keep.map(([r]) => r),
    schedule: `${i.schedule}-r${n}`,
  };
};

type Answer = string | { error: string; deliverFirst?: boolean } | "no-result";

/**
 * SES: `plan(address, attempt)` gives the entry's status on its n-th call (1-based), or, for the whole call, an error
 * (thrown; with `deliverFirst`, the entries up to the failing one were delivered before it: a 5xx after a partial send).
 */
class Fakes {
  ledger = new FakeTable(LEDGER);
  table = new FakeTable(GATE);
  /** The opt-out table: addresses (as recorded) opted out, every BatchGetItem's keys, and how each call answers. */
  optedOut = new Set<string>();
  lookUps: string[][] = [];
  lookUpAnswer: (call: number, keys: string[]) => "all" | { unprocessed: string[] } | { error: string } = () => "all";
  delivered: string[] = [];
  calls: string[][] = [];
  /** Every SES request as it arrived: [action, request]. */
  requests: [string, any][] = [];
  deadLetters: any[] = [];
  metrics: any[] = [];
  attempts = new Map<string, number>();
  /** Called before each SES call is answered (to change the campaign's state or opt-outs mid-send). */
  beforeSes: (call: number) => void = () => {};
  /** Services that fail: a whole service ("cloudwatch") or one DynamoDB action on one table ("ledger:getItem"). */
  broken = new Set<string>();
  constructor(private readonly plan: (address: string, attempt: number) => Answer = () => "SUCCESS") {}

  setState(state: string, campaign = "spring") {
    const pk = `campaign#${campaign}`;
    this.ledger.items.set(pk, { pk: { S: pk }, state: { S: state } });
  }

  /** Each recipient's recorded outcome in the occurrence's item, as "outcome" or "outcome:reason". */
  outcomes(i: SenderInput): Record<string, string> {
    const item: any = this.ledger.items.get(`occ#${i.schedule}#${i.scheduled_time}`);
    const out: Record<string, string> = {};
    for (const [r, v] of Object.entries<any>(item?.outcomes?.M ?? {}))
      out[r] = v.M.reason.S && v.M.outcome.S !== "sent" ? `${v.M.outcome.S}:${v.M.reason.S}` : v.M.outcome.S;
    return out;
  }

  services() {
    return {
      call: (service: string, action: string, args: any) => {
        if (this.broken.has(service)) throw new StatesError(`${service}.InternalFailure`, "broken by the test");
        if (service === "dynamodb") return this.dynamodb(action, args);
        if (service === "cloudwatch" && action === "putMetricData") return (this.metrics.push(args), {});
        if (service === "sqs" && action === "sendMessage") {
          assert.strictEqual(args.QueueUrl, QUEUE);
          this.deadLetters.push(JSON.parse(args.MessageBody));
          return { MessageId: `d-${this.deadLetters.length}` };
        }
        return this.ses(action, args);
      },
    };
  }

  private dynamodb(action: string, args: any) {
    if (action === "batchGetItem") return this.batchGet(args);
    const which = args.TableName === LEDGER ? "ledger" : "gate";
    if (this.broken.has(`${which}:${action}`))
      throw new StatesError("DynamoDB.InternalServerErrorException", "broken by the test");
    return (which === "ledger" ? this.ledger : this.table).call(action, args);
  }

  private ses(action: string, args: any) {
    assert.ok(["sendBulkEmail", "sendEmail"].includes(action), action);
    this.requests.push([action, args]);
    this.beforeSes(this.requests.length);
    if (action === "sendBulkEmail") assertBulkShape(args);
    const addresses: string[] =
      action === "sendEmail"
        ? args.Destination.ToAddresses
        : args.BulkEmailEntries.map((e: any) => e.Destination.ToAddresses[0]);
    this.calls.push(addresses);
    const answers = addresses.map((a: string) => {
      const n = (this.attempts.get(a) ?? 0) + 1;
      this.attempts.set(a, n);
      return this.plan(a, n);
    });
    const failure = answers.find((x: Answer) => typeof x === "object");
    if (failure) {
      if (failure.deliverFirst)
        for (const [i, a] of addresses.entries()) {
          if (typeof answers[i] === "object") break;
          this.delivered.push(a);
        }
      throw new StatesError(failure.error, "from the fake");
    }
    if (action === "sendEmail") {
      if (answers[0] !== "SUCCESS") throw new StatesError("SesV2.MessageRejected", `${answers[0]} from the fake`);
      this.delivered.push(addresses[0]);
      return { MessageId: `m-${this.delivered.length}` };
    }
    const results = answers.flatMap((x: Answer, i: number) => {
      if (x === "no-result") return [];
      if (x === "SUCCESS") this.delivered.push(addresses[i]);
      return [
        x === "SUCCESS"
          ? { Status: x, MessageId: `m-${this.delivered.length}` }
          : { Status: x, Error: `${x} from the fake` },
      ];
    });
    return { BulkEmailEntryResults: results };
  }

  /** DynamoDB BatchGetItem as its API reference says: ≤ 100 keys, none twice, Responses and UnprocessedKeys per table. */
  private batchGet(args: any) {
    assert.deepStrictEqual(Object.keys(args.RequestItems), [OPT_OUT_TABLE]);
    const request = args.RequestItems[OPT_OUT_TABLE];
    const keys: string[] = request.Keys.map((k: any) => {
      assert.deepStrictEqual(Object.keys(k), ["address"]);
      return k.address.S;
    });
    assert.ok(keys.length >= 1 && keys.length <= 100, `${keys.length} keys`);
    if (new Set(keys).size !== keys.length)
      throw new StatesError("DynamoDB.ValidationException", "Provided list of item keys contains duplicates");
    this.lookUps.push(keys);
    const answer = this.lookUpAnswer(this.lookUps.length, keys);
    if (typeof answer === "object" && "error" in answer) throw new StatesError(answer.error, "from the fake");
    const unprocessed = answer === "all" ? [] : answer.unprocessed;
    const found = keys
      .filter((k) => !unprocessed.includes(k) && this.optedOut.has(k))
      .map((k) => ({ address: { S: k } }));
    return {
      Responses: { [OPT_OUT_TABLE]: found },
      UnprocessedKeys: unprocessed.length
        ? { [OPT_OUT_TABLE]: { ...request, Keys: unprocessed.map((k) => ({ address: { S: k } })) } }
        : {},
    };
  }

  async run(i: SenderInput, params = PARAMS, stats: JsonataRunStats = { retries: [] }) {
    return runJsonataMachine(senderDefinition(params), i, this.services(), { startTime: AT }, stats);
  }

  /** Runs, and gives the output, or "failed" when the execution failed with Sender.EntriesFailed. */
  async settle(i: SenderInput, params = PARAMS): Promise<any> {
    return this.run(i, params).then(
      (r) => r.output,
      (e) => (failed(e) ? "failed" : Promise.reject(e)),
    );
  }
}

/** The request as SES v2 SendBulkEmail takes it (API reference): ≤ 50 entries, one To each, data as JSON text. */
function assertBulkShape(r: any) {
  assert.deepStrictEqual(Object.keys(r).sort(), [
    "BulkEmailEntries",
    "ConfigurationSetName",
    "DefaultContent",
    "DefaultEmailTags",
    "FromEmailAddress",
  ]);
  assert.ok(r.BulkEmailEntries.length >= 1 && r.BulkEmailEntries.length <= 50);
  for (const e of r.BulkEmailEntries) {
    assert.strictEqual(e.Destination.ToAddresses.length, 1);
    assert.strictEqual(
      typeof JSON.parse(e.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData),
      "object",
    );
    assert.ok(Array.isArray(e.ReplacementHeaders));
  }
}

const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;
const failed = (e: unknown) => e instanceof StatesError && e.error === "Sender.EntriesFailed";
const OK = { sent: 0, skipped: 0, opted_out: 0, capped: 0, held: 0, cancelled: 0 };
const pointer = (recipients: string[], outcome: string, reason: string, name = "b.0900.spring-sale.A.0-1") => ({
  campaign: "spring",
  schedule_name: name,
  scheduled_time: AT,
  recipients,
  outcome,
  reason,
});

async function languageServiceErrors(definition: object): Promise<string[]> {
  const ls = getLanguageService({});
  const doc = TextDocument.create("file:///sender.asl.json", "json", 1, JSON.stringify(definition, null, 2));
  const diagnostics = await ls.doValidation(doc, ls.parseJSONDocument(doc));
  return diagnostics
    .filter((d: any) => d.severity === 1)
    .map((d: any) => `${d.message} at ${JSON.stringify(d.range.start)}`);
}

describe("the one sender: definition", () => {
  it("passes asl-validator (checkPaths, checkArn) and AWS's language service, with and without a cap and opt-outs", async () => {
    for (const p of [
      PARAMS,
      CAPPED,
      { ...CAPPED, gate: { cap: { max: 3, per: "month" as const }, tableName: GATE } },
      CHECKED,
      CHECKED_CAPPED,
    ]) {
      const def = senderDefinition(p);
      const { isValid, errors } = aslValidator(structuredClone(def), { checkPaths: true, checkArn: true });
      assert.deepStrictEqual(errors, []);
      assert.ok(isValid);
      assert.deepStrictEqual(await languageServiceErrors(def), []);
    }
  });

  it("ends within EXPRESS's 5 minutes at 50 entries with every call slow and retried to its limit", () => {
    for (const capped of [false, true])
      for (const checked of [false, true])
        assert.ok(
          senderWorstCaseSeconds(50, capped, checked) < stepFunctions.expressMaxSeconds - 30,
          `${senderWorstCaseSeconds(50, capped, checked)} s`,
        );
    // The bound counts what it says: more entries (more Map waves) take longer.
    assert.ok(senderWorstCaseSeconds(50, true) > senderWorstCaseSeconds(10, true));
  });

  it("the bound cancel waits: one state read (1 s + retries after 1 and 2 s, each 1 s: 6 s) and one SES call (10 s + after 1 s, 10 s + after 2 s, 10 s: 33 s)", () => {
    assert.strictEqual(secondsFromStateReadToLastSend(), 39);
  });
});

describe("the one sender: sending", () => {
  it("all accepted: the occurrence claimed, the state read, one call, each entry sent once and recorded sent", async () => {
    const f = new Fakes();
    const i = input(["ann@example.com", "bob@example.com", "cy@example.com"]);
    const { output, path } = await f.run(i);
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com", "cy@example.com"]);
    assert.deepStrictEqual(output, { ...OK, sent: 3 });
    assert.deepStrictEqual(path, [
      "Prepare",
      "Claim",
      "IsText",
      "AnyPending",
      "ReadCampaignState",
      "IsLive",
      "OneOrBulk",
      "Send",
      "Sort",
      "Again",
      "Record",
      "AnyToSettle",
      "AnyFailed",
      "Done",
    ]);
    assert.deepStrictEqual(f.outcomes(i), { r0: "sent", r1: "sent", r2: "sent" });
    assert.deepStrictEqual(f.deadLetters, []);
    // The claim: the occurrence's key, its campaign, and a TTL 14 days after the scheduled time.
    const claim = f.ledger.items.get(`occ#${SCHEDULE}#${AT}`)!;
    assert.deepStrictEqual(
      [claim.campaign, claim.expires_at],
      [{ S: "spring" }, { N: String(Date.parse(AT) / 1000 + 14 * 86400) }],
    );
  });

  it("sends the request the fan-out built, tags and data unchanged", async () => {
    const f = new Fakes();
    const i = input(["ann@example.com"]);
    await f.run(i);
    assert.deepStrictEqual(f.requests, [["sendBulkEmail", i.bulk]]);
    assert.deepStrictEqual(i.bulk.DefaultEmailTags, [
      { Name: "campaign", Value: "spring" },
      { Name: "step", Value: "1" },
      { Name: "variant", Value: "A" },
    ]);
  });

  it("a per-recipient schedule with SES list management is sent with SendEmail: the request a schedule used to give SES itself", async () => {
    const f = new Fakes();
    const row = {
      recipient_id: "a1",
      email: "a1@example.com",
      template: "welcome",
      template_data: { first_name: 'Zoë "the" \\ one', note: "line1\nline2 \u{1F600}", step: "1" },
      step: 1,
      variant: "B",
    };
    const listManagement = { contactListName: "sendtime-dev", topicName: "campaigns" };
    const i = {
      ...recipientSenderInput({ ...SENDER, listManagement }, "spring", row),
      schedule: SCHEDULE,
      scheduled_time: AT,
    };
    const { output } = await f.run(i);
    assert.deepStrictEqual(output, { ...OK, sent: 1 });
    // Written by hand: SES v2 SendEmail with a template, the tags and ListManagementOptions (no headers: no link).
    assert.deepStrictEqual(f.requests, [
      [
        "sendEmail",
        {
          FromEmailAddress: "news@mail.example.com",
          Destination: { ToAddresses: ["a1@example.com"] },
          Content: { Template: { TemplateName: "welcome", TemplateData: JSON.stringify(row.template_data) } },
          ConfigurationSetName: "sendtime-dev",
          EmailTags: [
            { Name: "campaign", Value: "spring" },
            { Name: "step", Value: "1" },
            { Name: "variant", Value: "B" },
          ],
          ListManagementOptions: { ContactListName: "sendtime-dev", TopicName: "campaigns" },
        },
      ],
    ]);
  });

  it("a transient entry is retried alone (the state read again first), a rejected one recorded not sent and dead-lettered as a pointer", async () => {
    const f = new Fakes((a, n) =>
      a === "bob@example.com" && n === 1
        ? "TRANSIENT_FAILURE"
        : a === "cy@example.com"
          ? "MESSAGE_REJECTED"
          : "SUCCESS",
    );
    const stats: JsonataRunStats = { retries: [] };
    const i = input(["ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com"]);
    const { path } = await f.run(i, PARAMS, stats).catch((e) => (assert.ok(failed(e)), { path: [] as string[] }));
    assert.deepStrictEqual(f.calls, [
      ["ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com"],
      ["bob@example.com"],
    ]);
    assert.deepStrictEqual(f.delivered.sort(), ["ann@example.com", "bob@example.com", "dee@example.com"]);
    assert.deepStrictEqual(f.deadLetters, [
      pointer(["r2"], "not-sent", "MESSAGE_REJECTED: MESSAGE_REJECTED from the fake"),
    ]);
    assert.deepStrictEqual(f.outcomes(i), {
      r0: "sent",
      r1: "sent",
      r2: "not-sent:MESSAGE_REJECTED: MESSAGE_REJECTED from the fake",
      r3: "sent",
    });
    // Waited once before the retry: half to all of the first delay (2 s).
    assert.strictEqual(stats.waits!.length, 1);
    assert.ok(stats.waits![0] >= 1 && stats.waits![0] <= ENTRY_RETRY.intervalSeconds);
    void path;
  });

  it("an entry throttled on every try is sent at most 1 + maxRetries times, then not sent with its last status", async () => {
    const f = new Fakes((a) => (a === "bob@example.com" ? "ACCOUNT_THROTTLED" : "SUCCESS"));
    const stats: JsonataRunStats = { retries: [] };
    await assert.rejects(f.run(input(["ann@example.com", "bob@example.com"]), PARAMS, stats), failed);
    assert.strictEqual(f.attempts.get("bob@example.com"), 1 + ENTRY_RETRY.maxRetries);
    assert.strictEqual(f.attempts.get("ann@example.com"), 1);
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.recipients, m.outcome, m.reason]),
      [[["r1"], "not-sent", "ACCOUNT_THROTTLED: ACCOUNT_THROTTLED from the fake"]],
    );
    // Backoff grows (2, 4, 8 s, each waited half to whole): the k-th wait is at most 2^k and above 2^k / 2 - 1.
    assert.strictEqual(stats.waits!.length, ENTRY_RETRY.maxRetries);
    stats.waits!.forEach((w, k) => assert.ok(w <= 2 ** (k + 1) && w >= 2 ** k, `wait ${k}: ${w}`));
  });

  it("a throttled call (nothing sent) is retried whole; each entry is then sent once", async () => {
    let throttles = 2;
    const f = new Fakes(() => "SUCCESS");
    const services = f.services();
    const stats: JsonataRunStats = { retries: [] };
    const { output } = await runJsonataMachine(
      senderDefinition(PARAMS),
      input(["ann@example.com", "bob@example.com"]),
      {
        call: (s, a, args) => {
          if (s === "sesv2" && throttles-- > 0)
            throw new StatesError("SesV2.TooManyRequestsException", "Maximum sending rate exceeded");
          return services.call(s, a, args);
        },
      },
      { startTime: AT },
      stats,
    );
    assert.deepStrictEqual(output, { ...OK, sent: 2 });
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com"]);
    assert.deepStrictEqual(
      stats.retries.map((r) => r.error),
      ["SesV2.TooManyRequestsException", "SesV2.TooManyRequestsException"],
    );
  });

  it("a call whose outcome is unknown (a 5xx after SES sent some) is not retried: every entry recorded unknown, dead-lettered once", async () => {
    const f = new Fakes((a) =>
      a === "cy@example.com" ? { error: "SesV2.SesV2Exception", deliverFirst: true } : "SUCCESS",
    );
    const i = input(["ann@example.com", "bob@example.com", "cy@example.com"]);
    await assert.rejects(f.run(i), failed);
    assert.strictEqual(f.calls.length, 1);
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com"]);
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.recipients[0], m.outcome, m.reason]),
      [
        ["r0", "unknown", "SesV2.SesV2Exception: from the fake"],
        ["r1", "unknown", "SesV2.SesV2Exception: from the fake"],
        ["r2", "unknown", "SesV2.SesV2Exception: from the fake"],
      ],
    );
    assert.deepStrictEqual(Object.values(f.outcomes(i)), Array(3).fill("unknown:SesV2.SesV2Exception: from the fake"));
  });

  it("a call SES refused (a missing template) is not sent for every entry; results that do not match the entries one for one: every entry unknown", async () => {
    const refused = new Fakes(() => ({ error: "SesV2.NotFoundException" }));
    await assert.rejects(refused.run(input(["ann@example.com", "bob@example.com"])), failed);
    assert.deepStrictEqual(
      refused.deadLetters.map((m) => m.outcome),
      ["not-sent", "not-sent"],
    );
    const short = new Fakes((a) => (a === "bob@example.com" ? "no-result" : "SUCCESS"));
    await assert.rejects(short.run(input(["ann@example.com", "bob@example.com"])), failed);
    assert.strictEqual(short.calls.length, 1, "an entry without a result is never retried");
    assert.deepStrictEqual(
      short.deadLetters.map((m) => [m.recipients[0], m.outcome, m.reason]),
      [
        ["r0", "unknown", "SendBulk.NoResult"],
        ["r1", "unknown", "SendBulk.NoResult"],
      ],
    );
  });
});

describe("the one sender: exactly once per occurrence", () => {
  it("a repeated invocation of a claimed occurrence sends nothing, even after the first one's call timed out (issue 31)", async () => {
    // The first invocation: SES delivered, then the call timed out. Scheduler invokes the same occurrence again.
    const f = new Fakes((a, n) => (n === 1 ? { error: "States.Timeout", deliverFirst: true } : "SUCCESS"));
    const i = input(["ann@example.com", "bob@example.com"]);
    await assert.rejects(f.run(i), failed);
    const again = await f.run(i);
    assert.deepStrictEqual(again.output, { repeat: true, entries: 2 });
    assert.deepStrictEqual(again.path, ["Prepare", "Claim", "WhoClaimed", "IsOwnClaim", "AlreadyClaimed"]);
    assert.deepStrictEqual(f.calls.length, 1, "one SES call in all");
  });

  it("a recurring schedule's next occurrence (same ARN, another time) is a send of its own", async () => {
    const f = new Fakes();
    await f.run(input(["ann@example.com"]));
    await f.run(input(["ann@example.com"], SCHEDULE, "2026-12-02T09:00:00Z"));
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "ann@example.com"]);
  });

  it("a claim that fails (the ledger unreachable) sends nothing: every entry not sent, dead-lettered", async () => {
    const f = new Fakes();
    f.broken.add("ledger:putItem");
    await assert.rejects(f.run(input(["ann@example.com", "bob@example.com"])), failed);
    assert.deepStrictEqual(f.calls, []);
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.recipients[0], m.outcome, m.reason.split(":")[0]]),
      [
        ["r0", "not-sent", "Ledger.ClaimFailed"],
        ["r1", "not-sent", "Ledger.ClaimFailed"],
      ],
    );
  });

  it("a claim retried after its first write landed is this execution's own: every entry unknown, dead-lettered, none sent and none lost (review)", async () => {
    const f = new Fakes();
    const ledger = f.ledger;
    const call = ledger.call.bind(ledger);
    let first = true;
    // DynamoDB applies the first PutItem, then answers 500: Step Functions retries it, and the retry meets its own item.
    ledger.call = (action: string, args: any) => {
      const r = call(action, args);
      if (action === "putItem" && first) {
        first = false;
        throw new StatesError("DynamoDB.InternalServerErrorException", "after the write");
      }
      return r;
    };
    const i = input(["ann@example.com", "bob@example.com"]);
    await assert.rejects(f.run(i), failed);
    assert.deepStrictEqual(f.calls, [], "no SES call: it cannot know it never sent");
    assert.deepStrictEqual(
      Object.values(f.outcomes(i)).map((o) => o.split(":")[0]),
      ["unknown", "unknown"],
    );
    assert.deepStrictEqual(
      f.deadLetters.map((d) => [d.recipients, d.outcome]),
      [
        [["r0"], "unknown"],
        [["r1"], "unknown"],
      ],
    );
    // Another execution (Scheduler's repeat) still sends nothing: the occurrence is settled.
    const again = await f.run(i);
    assert.deepStrictEqual([again.output, f.calls], [{ repeat: true, entries: 2 }, []]);
  });

  it("an admission retried after its first write landed is admitted, and sent once (review)", async () => {
    const f = new Fakes();
    const call = f.table.call.bind(f.table);
    let first = true;
    f.table.call = (action: string, args: any) => {
      const r = call(action, args);
      if (action === "updateItem" && first) {
        first = false;
        throw new StatesError("DynamoDB.ThrottlingException", "after the write");
      }
      return r;
    };
    const i = input(["ann@example.com"]);
    const { output } = await f.run(i, CAPPED);
    assert.deepStrictEqual([output.sent, f.delivered], [1, ["ann@example.com"]]);
    assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01")!.sends.N, "1", "counted once");
  });

  it("SES's MessageRejected, under the name Step Functions gives it (with an Exception suffix), is not sent, not unknown (review)", async () => {
    const f = new Fakes(() => ({ error: "SesV2.MessageRejectedException" }));
    await assert.rejects(f.run(input(["ann@example.com"])), failed);
    assert.deepStrictEqual(
      f.deadLetters.map((d) => d.outcome),
      ["not-sent"],
    );
  });

  it("every task but SES's times out within the bound the worst cases count, and retries its timeout (review)", () => {
    const tasks: any[] = [];
    const walk = (states: Record<string, any>) => {
      for (const st of Object.values(states)) {
        if (st.Type === "Task") tasks.push(st);
        if (st.Type === "Map") walk(st.ItemProcessor.States);
      }
    };
    walk((senderDefinition(CHECKED_CAPPED) as any).States);
    for (const t of tasks) {
      assert.ok(typeof t.TimeoutSeconds === "number", `${t.Resource} has no TimeoutSeconds`);
      if (!t.Resource.includes("sesv2")) {
        assert.strictEqual(t.TimeoutSeconds, 1, t.Resource);
        // Retried, or (a metric's one try) caught: a slow answer never ends the execution.
        const handles = (list: any[] | undefined) =>
          (list ?? []).some(
            (r: any) => r.ErrorEquals.includes("States.Timeout") || r.ErrorEquals.includes("States.ALL"),
          );
        assert.ok(handles(t.Retry) || handles(t.Catch), `${t.Resource} neither retries nor catches a timeout`);
      }
    }
  });

  it("the state stays within Step Functions' 256 KB at the largest input the planner writes: the entries are held once (review)", async () => {
    // 50 entries of personalization filling the planner's budget for a bulk schedule's entries.
    const budget = MAX_BULK_ENTRIES_INPUT_BYTES;
    const big = "x".repeat(Math.floor(budget / 50) - 400);
    const i = input(Array.from({ length: 50 }, (_, k) => `u${k}@example.com`));
    i.bulk.BulkEmailEntries.forEach((e) => {
      const data = JSON.parse(e.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData);
      e.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData = JSON.stringify({ ...data, note: big });
    });
    assert.ok(Buffer.byteLength(JSON.stringify(i)) <= 262_144);
    const sizes: number[] = [];
    const f = new Fakes();
    const services = f.services();
    const def = senderDefinition(CAPPED);
    await runJsonataMachine(def, i, services, { startTime: AT }, { retries: [], sizes });
    assert.ok(sizes.length > 0);
    assert.ok(Math.max(...sizes) <= 262_144, `largest state ${Math.max(...sizes)} bytes`);
  });

  it("a failed record of the outcomes changes no outcome: the mail went, nothing is dead-lettered", async () => {
    const f = new Fakes();
    f.broken.add("ledger:updateItem");
    const { output } = await f.run(input(["ann@example.com"]));
    assert.deepStrictEqual([output.sent, f.delivered, f.deadLetters], [1, ["ann@example.com"], []]);
  });
});

describe("the one sender: the campaign's state, read before every SES call", () => {
  it("a paused campaign sends nothing: every entry skipped (paused) and dead-lettered as a pointer for the resume", async () => {
    const f = new Fakes();
    f.setState("paused");
    const i = input(["ann@example.com", "bob@example.com"]);
    const { output } = await f.run(i);
    assert.deepStrictEqual(output, { ...OK, skipped: 2, held: 2 });
    assert.deepStrictEqual(f.calls, []);
    assert.deepStrictEqual(f.deadLetters, [pointer(["r0"], "skipped", "paused"), pointer(["r1"], "skipped", "paused")]);
    assert.deepStrictEqual(f.outcomes(i), { r0: "skipped:paused", r1: "skipped:paused" });
  });

  it("a cancelled campaign sends nothing and leaves no dead letter", async () => {
    const f = new Fakes();
    f.setState("cancelled");
    const { output } = await f.run(input(["ann@example.com"]));
    assert.deepStrictEqual([output.cancelled, f.calls, f.deadLetters], [1, [], []]);
  });

  it("cancelled between two retry rounds: no SES call after it; the entry still pending is skipped (issue 31)", async () => {
    const f = new Fakes((a, n) => (a === "bob@example.com" && n === 1 ? "TRANSIENT_FAILURE" : "SUCCESS"));
    // cancel-campaign sets the state while the first call is under way.
    f.beforeSes = (n) => n === 1 && f.setState("cancelled");
    const i = input(["ann@example.com", "bob@example.com"]);
    const { output } = await f.run(i);
    assert.deepStrictEqual(f.calls, [["ann@example.com", "bob@example.com"]], "no second call");
    assert.deepStrictEqual(output, { ...OK, sent: 1, skipped: 1, cancelled: 1 });
    assert.deepStrictEqual(f.outcomes(i), { r0: "sent", r1: "skipped:cancelled" });
  });

  it("paused between two retry rounds (a guardrail's or an operator's pause): no SES call after it; the entry still pending is held for the resume", async () => {
    const f = new Fakes((a, n) => (a === "bob@example.com" && n === 1 ? "TRANSIENT_FAILURE" : "SUCCESS"));
    // The guardrail's pause machine writes the state while the first call is under way.
    f.beforeSes = (n) => n === 1 && f.setState("paused");
    const i = input(["ann@example.com", "bob@example.com"]);
    const { output } = await f.run(i);
    assert.deepStrictEqual(f.calls, [["ann@example.com", "bob@example.com"]], "no second call");
    assert.deepStrictEqual(output, { ...OK, sent: 1, skipped: 1, held: 1 });
    assert.deepStrictEqual(f.outcomes(i), { r0: "sent", r1: "skipped:paused" });
    assert.deepStrictEqual(f.deadLetters, [pointer(["r1"], "skipped", "paused")]);
  });

  it("a state that cannot be read sends nothing: each entry not sent and dead-lettered", async () => {
    const f = new Fakes();
    f.broken.add("ledger:getItem");
    await assert.rejects(f.run(input(["ann@example.com"])), failed);
    assert.deepStrictEqual(f.calls, []);
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.outcome, m.reason.split(":")[0]]),
      [["not-sent", "CampaignState.Unreadable"]],
    );
  });

  it("another campaign's pause does not hold this one", async () => {
    const f = new Fakes();
    f.setState("paused", "autumn");
    const { output } = await f.run(input(["ann@example.com"]));
    assert.strictEqual(output.sent, 1);
  });
});

describe("the one sender: with the opt-out table, an address opted out after the launch is never sent", () => {
  it("an opted-out entry is skipped and counted, never sent nor dead-lettered; the others get the request unchanged", async () => {
    const f = new Fakes();
    f.optedOut.add("bob@example.com");
    // Bob's address as the plan holds it (any case): the endpoint recorded it as his token names it, lower-cased.
    const i = input(["ann@example.com", "Bob@Example.com", "cy@example.com"]);
    const { output, path } = await f.run(i, CHECKED);
    assert.deepStrictEqual(f.lookUps, [["ann@example.com", "bob@example.com", "cy@example.com"]]);
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "cy@example.com"]);
    assert.deepStrictEqual(output, { ...OK, sent: 2, skipped: 1, opted_out: 1 });
    assert.deepStrictEqual(f.deadLetters, []);
    assert.deepStrictEqual(f.outcomes(i).r1, "skipped:opted-out");
    assert.deepStrictEqual(f.metrics, [
      {
        Namespace: "sendtime",
        MetricData: [
          { MetricName: "OptedOutSends", Dimensions: [{ Name: "campaign", Value: "spring" }], Value: 1, Unit: "Count" },
        ],
      },
    ]);
    // What SES receives: the fan-out's request with Bob's entry taken out, every other byte the same.
    assert.deepStrictEqual(f.requests, [
      ["sendBulkEmail", { ...i.bulk, BulkEmailEntries: [i.bulk.BulkEmailEntries[0], i.bulk.BulkEmailEntries[2]] }],
    ]);
    assert.ok(path.includes("CountOptedOut"));
  });

  it("every entry opted out: no SES call at all, the execution succeeds", async () => {
    const f = new Fakes();
    f.optedOut.add("ann@example.com");
    const { output } = await f.run(input(["ann@example.com", "ann@example.com"]), CHECKED);
    assert.deepStrictEqual(f.lookUps, [["ann@example.com"]], "one key, not two: BatchGetItem refuses duplicates");
    assert.deepStrictEqual([f.calls, f.deadLetters], [[], []]);
    assert.strictEqual(output.opted_out, 2);
  });

  it("a look-up that fails sends nothing: every entry not sent, with the error; its redrive is looked up again and sent", async () => {
    const f = new Fakes();
    f.lookUpAnswer = () => ({ error: "DynamoDB.AccessDeniedException" });
    const i = input(["ann@example.com", "bob@example.com"]);
    await assert.rejects(f.run(i, CHECKED), failed);
    assert.deepStrictEqual([f.calls, f.delivered], [[], []]);
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.recipients, m.outcome, m.reason]),
      [
        [["r0"], "not-sent", "OptOut.LookUpFailed: DynamoDB.AccessDeniedException: from the fake"],
        [["r1"], "not-sent", "OptOut.LookUpFailed: DynamoDB.AccessDeniedException: from the fake"],
      ],
    );
    f.lookUpAnswer = () => "all";
    const redrive = await f.run(redriven(i, ["r0"]), CHECKED);
    assert.deepStrictEqual([redrive.output.sent, f.delivered], [1, ["ann@example.com"]]);
  });

  it("keys left unprocessed are asked again alone; still unprocessed after the retries: not sent", async () => {
    const f = new Fakes();
    f.optedOut.add("cy@example.com");
    f.lookUpAnswer = (n) =>
      n === 1 ? { unprocessed: ["bob@example.com", "cy@example.com"] } : { unprocessed: ["bob@example.com"] };
    const stats: JsonataRunStats = { retries: [] };
    await assert.rejects(
      f.run(input(["ann@example.com", "bob@example.com", "cy@example.com"]), CHECKED, stats),
      failed,
    );
    assert.deepStrictEqual(f.lookUps, [
      ["ann@example.com", "bob@example.com", "cy@example.com"],
      ["bob@example.com", "cy@example.com"],
    ]);
    assert.deepStrictEqual(f.delivered, ["ann@example.com"], "cy opted out, bob unchecked: neither sent");
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.recipients, m.outcome, m.reason.split(":")[1]?.trim()]),
      [[["r1"], "not-sent", "OptOut.Unprocessed"]],
    );
    assert.deepStrictEqual(stats.waits, [1]);
  });

  it("with a cap too: an opted-out entry takes no admission (looked up first); the others are admitted and sent", async () => {
    const f = new Fakes();
    f.optedOut.add("ann@example.com");
    const { output } = await f.run(input(["ann@example.com", "bob@example.com"]), CHECKED_CAPPED);
    assert.deepStrictEqual(output, { ...OK, sent: 1, skipped: 1, opted_out: 1 });
    assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01"), undefined);
    assert.strictEqual(f.table.items.get("bob@example.com#2026-12-01")!.sends.N, "1");
  });
});

describe("the one sender: with a frequency cap, entry by entry", () => {
  it("a capped entry is skipped and counted; the others are sent", async () => {
    const f = new Fakes();
    // ann had her one send of the day already (another campaign's), under her address in another case.
    f.table.items.set("ann@example.com#2026-12-01", {
      pk: { S: "ann@example.com#2026-12-01" },
      sends: { N: "1" },
      schedules: { SS: ["x@y"] },
    });
    const i = input(["Ann@Example.com", "bob@example.com", "cy@example.com"]);
    const { output } = await f.run(i, CAPPED);
    assert.deepStrictEqual(output, { ...OK, sent: 2, skipped: 1, capped: 1 });
    assert.deepStrictEqual(f.calls, [["bob@example.com", "cy@example.com"]]);
    assert.deepStrictEqual(f.outcomes(i).r0, "skipped:capped");
  });

  it("an unknown outcome keeps its admission: a later send to the same address that day is capped (issue 31)", async () => {
    // SES delivered, then the call timed out: the mail may have gone, so it counts against the cap.
    const f = new Fakes((a) => (a === "cy@example.com" ? { error: "States.Timeout", deliverFirst: true } : "SUCCESS"));
    await assert.rejects(f.run(input(["ann@example.com", "bob@example.com", "cy@example.com"]), CAPPED), failed);
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com"]);
    assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01")!.sends.N, "1", "admission kept");
    // A journey's send the same day, through the same door.
    const journey = "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-welcome/a1-1";
    const { output } = await f.run(input(["ann@example.com"], journey), CAPPED);
    assert.deepStrictEqual([output.capped, f.delivered.length], [1, 2]);
  });

  it("a not-sent entry gives its admission back; its redrive is admitted and sent once", async () => {
    let reject = true;
    const f = new Fakes((a) => (a === "bob@example.com" && reject ? "MESSAGE_REJECTED" : "SUCCESS"));
    const i = input(["ann@example.com", "bob@example.com"]);
    await assert.rejects(f.run(i, CAPPED), failed);
    assert.strictEqual(f.table.items.get("bob@example.com#2026-12-01")?.sends?.N ?? "0", "0");
    assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01")!.sends.N, "1");
    reject = false;
    const redrive = await f.run(redriven(i, ["r1"]), CAPPED);
    assert.deepStrictEqual(redrive.output.sent, 1);
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com"]);
  });

  it("a lost capped-send metric changes no outcome: the capped entry is skipped, not dead-lettered (issue 31)", async () => {
    const f = new Fakes();
    f.table.items.set("ann@example.com#2026-12-01", {
      pk: { S: "ann@example.com#2026-12-01" },
      sends: { N: "1" },
      schedules: { SS: ["x@y"] },
    });
    f.broken.add("cloudwatch");
    const i = input(["ann@example.com"]);
    const { output } = await f.run(i, CAPPED);
    assert.deepStrictEqual([output.capped, f.deadLetters, f.calls], [1, [], []]);
    assert.deepStrictEqual(f.outcomes(i), { r0: "skipped:capped" });
  });

  it("held by a pause after admission: the admission is given back, so the resumed send is admitted", async () => {
    const f = new Fakes();
    f.setState("paused");
    const i = input(["ann@example.com"]);
    await f.run(i, CAPPED);
    assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01")?.sends?.N ?? "0", "0");
    f.setState("live");
    const { output } = await f.run(redriven(i, ["r0"]), CAPPED);
    assert.deepStrictEqual([output.sent, f.delivered], [1, ["ann@example.com"]]);
  });
});

describe("the one sender: properties (issue 31)", function () {
  const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 60);
  this.timeout(Math.max(30_000, RUNS * 150));
  const status = fc.constantFrom(
    "SUCCESS",
    "SUCCESS",
    "SUCCESS",
    "TRANSIENT_FAILURE",
    "ACCOUNT_THROTTLED",
    "MESSAGE_REJECTED",
    "no-result",
  );
  // A call may fail after SES delivered some entries, except with an error that says SES refused the request
  // (CALL_NOT_SENT: the premise the sender rests on).
  const callFailure = fc.oneof(
    fc.record({
      error: fc.constantFrom("States.Timeout", "SesV2.InternalFailure", "States.TaskFailed"),
      deliverFirst: fc.boolean(),
    }),
    fc.record({ error: fc.constant("SesV2.NotFoundException"), deliverFirst: fc.constant(false) }),
  );
  const answer: fc.Arbitrary<Answer> = fc.oneof(
    { weight: 6, arbitrary: status },
    { weight: 1, arbitrary: callFailure },
  );

  it("for every address at most one mail; every entry exactly one outcome; redrive never sends a sent entry, nor an unknown one without --resend-unknown", async () => {
    const people = ["ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com"];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(answer, { minLength: 8, maxLength: 8 }), { minLength: 4, maxLength: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.subarray(people),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.option(fc.record({ at: fc.integer({ min: 1, max: 4 }), to: fc.constantFrom("paused", "cancelled") })),
        fc.array(fc.record({ at: fc.integer({ min: 1, max: 4 }), who: fc.constantFrom(...people) }), { maxLength: 2 }),
        async (plans, cap, list0, invocations, resendUnknown, stateChange, optOuts) => {
          const list = list0.length ? list0 : [people[0]];
          const f = new Fakes((a, n) => plans[people.indexOf(a)][Math.min(n, 8) - 1]);
          f.beforeSes = (n) => {
            if (stateChange && stateChange.at === n) f.setState(stateChange.to);
            for (const o of optOuts) if (o.at === n) f.optedOut.add(o.who);
          };
          const params = { ...capped(cap), optOuts: { tableName: OPT_OUT_TABLE } };
          const i = input(list);
          // Scheduler may invoke one occurrence more than once.
          for (let k = 0; k < invocations; k++) await f.settle(i, params);
          const outcomes = f.outcomes(i);
          assert.deepStrictEqual(Object.keys(outcomes).sort(), i.recipients.slice().sort(), "each entry one outcome");
          const [cancelled, paused] = [stateChange?.to === "cancelled", stateChange?.to === "paused"];
          const callsBeforeState = f.requests.length;
          // Redrive, once and twice: only what the ledger says was not sent (an unknown only with the flag).
          for (let n = 1; n <= 2; n++) {
            const again = i.recipients.filter((r) => {
              const o = outcomes[r];
              return o.startsWith("not-sent") || o === "skipped:paused" || (resendUnknown && o.startsWith("unknown"));
            });
            if (again.length === 0 || n === 2) break;
            await f.settle(redriven(i, again, n), params);
          }
          for (const a of list) {
            const r = i.recipients[list.indexOf(a)];
            const o = outcomes[r];
            const mails = count(f.delivered, a);
            assert.ok(mails <= 1 || (resendUnknown && o.startsWith("unknown")), `${a} (${o}): ${mails} mails`);
            if (o === "sent") assert.strictEqual(mails, 1, `${a} recorded sent`);
          }
          // No SES call after the state changed (it changes during call `at`, if there was one).
          if (stateChange && callsBeforeState >= stateChange.at)
            assert.strictEqual(f.requests.length, stateChange.at, `nothing after ${stateChange.to}`);
          void [cancelled, paused];
        },
      ),
      { numRuns: RUNS },
    );
  });
});
