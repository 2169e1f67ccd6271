/**
 * The bulk sender, run by the tests' JSONata interpreter against a fake SES that answers per entry (a status for each
 * address and attempt), a fake table (the frequency cap) and a fake dead-letter queue. What a user would notice: who
 * got mail and how many times, what reached the dead-letter queue, and what the execution says.
 */
import * as assert from "assert";
import fc from "fast-check";
import { TextDocument } from "vscode-languageserver-textdocument";
import { SenderInput, senderInput } from "../../infra/rules/bulk-request";
import type { BulkPlanRow } from "../../infra/rules/plan-row";
import {
  ENTRY_RETRY,
  senderDefinition,
  SenderParameters,
  senderWorstCaseSeconds,
} from "../../infra/rules/sender-definition";
import { stepFunctions } from "../../infra/rules/quotas";
import { StatesError } from "../helpers/asl-interpreter";
import { FakeTable, JsonataRunStats, runJsonataMachine } from "../helpers/jsonata-interpreter";

const aslValidator = require("asl-validator");
const { getLanguageService } = require("amazon-states-language-service");

const QUEUE = "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq";
const PARAMS: SenderParameters = { partition: "aws", deadLetterQueueUrl: QUEUE };
const CAPPED: SenderParameters = { ...PARAMS, gate: { cap: { max: 1, per: "day" }, tableName: "sendtime-gate-dev" } };
const OPT_OUT_TABLE = "unsubscribe-opt-outs-1a2b3c4";
const CHECKED: SenderParameters = { ...PARAMS, optOuts: { tableName: OPT_OUT_TABLE } };
const CHECKED_CAPPED: SenderParameters = { ...CAPPED, optOuts: { tableName: OPT_OUT_TABLE } };
const SCHEDULE = "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/b.0900.spring-sale.A.0-1";
const AT = "2026-12-01T09:00:00Z";
const SENDER = { fromAddress: "news@mail.example.com", configurationSetName: "sendtime-dev" };

/** A bulk line of these recipients (ids r0, r1, …), and the input Scheduler would start the sender with. */
function input(addresses: string[]): SenderInput {
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
  return { ...senderInput(SENDER, "spring", row), schedule: SCHEDULE, scheduled_time: AT };
}

type Answer = string | { error: string; deliverFirst?: boolean } | "no-result";

/**
 * SES: `plan(address, attempt)` gives the entry's status on its n-th call (1-based), or, for the whole call, an error
 * (thrown; with `deliverFirst`, the entries up to the failing one were delivered before it: a 5xx after a partial send).
 */
class Fakes {
  table = new FakeTable("sendtime-gate-dev");
  /** The opt-out table: addresses (as recorded) opted out, every BatchGetItem's keys, and how each call answers. */
  optedOut = new Set<string>();
  lookUps: string[][] = [];
  lookUpAnswer: (call: number, keys: string[]) => "all" | { unprocessed: string[] } | { error: string } = () => "all";
  delivered: string[] = [];
  calls: string[][] = [];
  deadLetters: any[] = [];
  metrics: any[] = [];
  attempts = new Map<string, number>();
  constructor(private readonly plan: (address: string, attempt: number) => Answer = () => "SUCCESS") {}

  services() {
    return {
      call: (service: string, action: string, args: any) => {
        if (service === "dynamodb" && action === "batchGetItem") return this.batchGet(args);
        if (service === "dynamodb") return this.table.call(action, args);
        if (service === "cloudwatch" && action === "putMetricData") return (this.metrics.push(args), {});
        if (service === "sqs" && action === "sendMessage") {
          assert.strictEqual(args.QueueUrl, QUEUE);
          this.deadLetters.push(JSON.parse(args.MessageBody));
          return { MessageId: `d-${this.deadLetters.length}` };
        }
        assert.deepStrictEqual([service, action], ["sesv2", "sendBulkEmail"]);
        assertBulkShape(args);
        const addresses = args.BulkEmailEntries.map((e: any) => e.Destination.ToAddresses[0]);
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
      },
    };
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
  assert.deepStrictEqual(r.DefaultContent, { Template: { TemplateName: "spring-sale", TemplateData: "{}" } });
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
const failed = (e: unknown) => e instanceof StatesError && e.error === "SendBulk.EntriesFailed";

async function languageServiceErrors(definition: object): Promise<string[]> {
  const ls = getLanguageService({});
  const doc = TextDocument.create("file:///sender.asl.json", "json", 1, JSON.stringify(definition, null, 2));
  const diagnostics = await ls.doValidation(doc, ls.parseJSONDocument(doc));
  return diagnostics
    .filter((d: any) => d.severity === 1)
    .map((d: any) => `${d.message} at ${JSON.stringify(d.range.start)}`);
}

describe("bulk sender definition", () => {
  it("passes asl-validator (checkPaths, checkArn) and AWS's language service, with and without a cap", async () => {
    for (const p of [
      PARAMS,
      CAPPED,
      { ...CAPPED, gate: { ...CAPPED.gate!, cap: { max: 3, per: "month" as const } } },
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

  it("ends within EXPRESS's 5 minutes at 50 entries with the opt-out look-up too (its bound counts it)", () => {
    // The look-up's worst case by hand: 2 rounds of a busy call (1 s + retries after 1, 2, 4 s, each 1 s: 11 s),
    // one backoff of 1 s between them, and the metric's one try (1 s): 24 s more than without it.
    for (const capped of [false, true])
      assert.strictEqual(senderWorstCaseSeconds(50, capped, true) - senderWorstCaseSeconds(50, capped, false), 24);
    assert.ok(
      senderWorstCaseSeconds(50, true, true) < stepFunctions.expressMaxSeconds - 30,
      `${senderWorstCaseSeconds(50, true)} s`,
    );
  });

  it("ends within EXPRESS's 5 minutes at 50 entries with every call slow and retried to its limit", () => {
    for (const capped of [false, true])
      assert.ok(
        senderWorstCaseSeconds(50, capped) < stepFunctions.expressMaxSeconds - 30,
        `${senderWorstCaseSeconds(50, capped)} s`,
      );
    // The bound counts what it says: more entries (more Map waves) take longer.
    assert.ok(senderWorstCaseSeconds(50, true) > senderWorstCaseSeconds(10, true));
  });

  it("all accepted: one call, each entry sent once, the execution succeeds with counts and no address", async () => {
    const f = new Fakes();
    const { output, path } = await f.run(input(["ann@example.com", "bob@example.com", "cy@example.com"]));
    assert.deepStrictEqual(f.calls, [["ann@example.com", "bob@example.com", "cy@example.com"]]);
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com", "cy@example.com"]);
    assert.deepStrictEqual(output, { sent: 3, capped: 0, repeats: 0 });
    assert.deepStrictEqual(path, ["Prepare", "AnyPending", "Send", "Sort", "Again", "Finish", "Done"]);
    assert.deepStrictEqual(f.deadLetters, []);
  });

  it("sends the request the fan-out built, tags and data unchanged", async () => {
    const f = new Fakes();
    const sent: any[] = [];
    const services = f.services();
    const i = input(["ann@example.com"]);
    await runJsonataMachine(
      senderDefinition(PARAMS),
      i,
      { call: (s, a, args) => (s === "sesv2" && sent.push(args), services.call(s, a, args)) },
      { startTime: AT },
    );
    assert.deepStrictEqual(sent, [i.bulk]);
    assert.deepStrictEqual(sent[0].DefaultEmailTags, [
      { Name: "campaign", Value: "spring" },
      { Name: "step", Value: "1" },
      { Name: "variant", Value: "A" },
    ]);
  });

  it("a transient entry is retried alone, a rejected one dead-lettered with its status, the successful ones never sent twice", async () => {
    const f = new Fakes((a, n) =>
      a === "bob@example.com" && n === 1
        ? "TRANSIENT_FAILURE"
        : a === "cy@example.com"
          ? "MESSAGE_REJECTED"
          : "SUCCESS",
    );
    const stats: JsonataRunStats = { retries: [] };
    const i = input(["ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com"]);
    await assert.rejects(f.run(i, PARAMS, stats), failed);
    assert.deepStrictEqual(f.calls, [
      ["ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com"],
      ["bob@example.com"],
    ]);
    assert.deepStrictEqual(f.delivered.sort(), ["ann@example.com", "bob@example.com", "dee@example.com"]);
    // One message for the one failed entry: its own input (that entry alone, its recipient id), status and error.
    assert.strictEqual(f.deadLetters.length, 1);
    const [m] = f.deadLetters;
    assert.deepStrictEqual(m.error, { Error: "MESSAGE_REJECTED", Cause: "MESSAGE_REJECTED from the fake" });
    assert.strictEqual(m.delivery, "not-sent");
    assert.deepStrictEqual(m.input, {
      ...i,
      bulk: { ...i.bulk, BulkEmailEntries: [i.bulk.BulkEmailEntries[2]] },
      recipients: ["r2"],
    });
    // Waited once before the retry: half to all of the first delay (2 s).
    assert.strictEqual(stats.waits!.length, 1);
    assert.ok(stats.waits![0] >= 1 && stats.waits![0] <= ENTRY_RETRY.intervalSeconds);
  });

  it("an entry throttled on every try is sent at most 1 + maxRetries times, then dead-lettered with its last status", async () => {
    const f = new Fakes((a) => (a === "bob@example.com" ? "ACCOUNT_THROTTLED" : "SUCCESS"));
    const stats: JsonataRunStats = { retries: [] };
    await assert.rejects(f.run(input(["ann@example.com", "bob@example.com"]), PARAMS, stats), failed);
    assert.strictEqual(f.attempts.get("bob@example.com"), 1 + ENTRY_RETRY.maxRetries);
    assert.strictEqual(f.attempts.get("ann@example.com"), 1);
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.input.recipients, m.error.Error, m.delivery]),
      [[["r1"], "ACCOUNT_THROTTLED", "not-sent"]],
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
    assert.deepStrictEqual(output, { sent: 2, capped: 0, repeats: 0 });
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com"]);
    assert.deepStrictEqual(
      stats.retries.map((r) => r.error),
      ["SesV2.TooManyRequestsException", "SesV2.TooManyRequestsException"],
    );
  });

  it("a call whose outcome is unknown (a 5xx after SES sent some) is not retried: every entry dead-lettered once, marked unknown, none sent twice", async () => {
    const f = new Fakes((a) =>
      a === "cy@example.com" ? { error: "SesV2.SesV2Exception", deliverFirst: true } : "SUCCESS",
    );
    await assert.rejects(f.run(input(["ann@example.com", "bob@example.com", "cy@example.com"])), failed);
    assert.strictEqual(f.calls.length, 1);
    assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com"]);
    assert.deepStrictEqual(
      f.deadLetters.map((m) => [m.input.recipients[0], m.error.Error, m.delivery]),
      [
        ["r0", "SesV2.SesV2Exception", "unknown"],
        ["r1", "SesV2.SesV2Exception", "unknown"],
        ["r2", "SesV2.SesV2Exception", "unknown"],
      ],
    );
  });

  it("a call SES refused (a missing template) dead-letters every entry as not sent; a result missing for an entry is unknown", async () => {
    const refused = new Fakes(() => ({ error: "SesV2.NotFoundException" }));
    await assert.rejects(refused.run(input(["ann@example.com", "bob@example.com"])), failed);
    assert.deepStrictEqual(
      refused.deadLetters.map((m) => m.delivery),
      ["not-sent", "not-sent"],
    );
    const short = new Fakes((a) => (a === "bob@example.com" ? "no-result" : "SUCCESS"));
    await assert.rejects(short.run(input(["ann@example.com", "bob@example.com"])), failed);
    assert.strictEqual(short.calls.length, 1, "an entry without a result is never retried");
    assert.deepStrictEqual(
      short.deadLetters.map((m) => [m.input.recipients[0], m.error.Error, m.delivery]),
      [["r1", "SendBulk.NoResult", "unknown"]],
    );
  });

  it("property: every entry is sent exactly once or dead-lettered exactly once, never both; successful entries never re-sent", async () => {
    const statuses = fc.constantFrom(
      "SUCCESS",
      "SUCCESS",
      "TRANSIENT_FAILURE",
      "ACCOUNT_THROTTLED",
      "MESSAGE_REJECTED",
      "ACCOUNT_DAILY_QUOTA_EXCEEDED",
      "FAILED",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(statuses, { minLength: 5, maxLength: 5 }), { minLength: 1, maxLength: 8 }),
        async (plans) => {
          const addresses = plans.map((_, i) => `u${i}@example.com`);
          const f = new Fakes((a, n) => plans[addresses.indexOf(a)][n - 1]);
          const result = await f.run(input(addresses)).then(
            () => "ok",
            (e) => (failed(e) ? "failed" : Promise.reject(e)),
          );
          const dead = f.deadLetters.map((m) => m.input.bulk.BulkEmailEntries[0].Destination.ToAddresses[0]);
          for (const a of addresses) {
            assert.strictEqual(
              count(f.delivered, a) + count(dead, a),
              1,
              `${a}: delivered ${count(f.delivered, a)}, dead ${count(dead, a)}`,
            );
            assert.ok(f.attempts.get(a)! <= 1 + ENTRY_RETRY.maxRetries);
          }
          assert.strictEqual(result, dead.length ? "failed" : "ok");
        },
      ),
      { numRuns: Number(process.env.SENDTIME_PROPERTY_RUNS ?? 60) },
    );
  });

  describe("with the opt-out table: an address opted out after the launch is never sent", () => {
    it("an opted-out entry is dropped and counted, never sent nor dead-lettered; the others get the request unchanged", async () => {
      const f = new Fakes();
      f.optedOut.add("bob@example.com");
      const sent: any[] = [];
      const services = f.services();
      // Bob's address as the plan holds it (any case): the endpoint recorded it as his token names it, lower-cased.
      const i = input(["ann@example.com", "Bob@Example.com", "cy@example.com"]);
      const { output, path } = await runJsonataMachine(
        senderDefinition(CHECKED),
        i,
        { call: (sv, a, args) => (sv === "sesv2" && sent.push(args), services.call(sv, a, args)) },
        { startTime: AT },
      );
      assert.deepStrictEqual(f.lookUps, [["ann@example.com", "bob@example.com", "cy@example.com"]]);
      assert.deepStrictEqual(f.delivered, ["ann@example.com", "cy@example.com"]);
      assert.deepStrictEqual(output, { sent: 2, capped: 0, repeats: 0, opted_out: 1 });
      assert.deepStrictEqual(f.deadLetters, []);
      assert.deepStrictEqual(f.metrics, [
        {
          Namespace: "sendtime",
          MetricData: [
            {
              MetricName: "OptedOutSends",
              Dimensions: [{ Name: "campaign", Value: "spring" }],
              Value: 1,
              Unit: "Count",
            },
          ],
        },
      ]);
      // What SES receives: the fan-out's request with Bob's entry taken out, every other byte the same.
      assert.deepStrictEqual(sent, [
        { ...i.bulk, BulkEmailEntries: [i.bulk.BulkEmailEntries[0], i.bulk.BulkEmailEntries[2]] },
      ]);
      assert.ok(path.includes("CountOptedOut"));
    });

    it("nobody opted out: one look-up, the request SES receives is the fan-out's exactly, no metric", async () => {
      const f = new Fakes();
      const sent: any[] = [];
      const services = f.services();
      const i = input(["ann@example.com", "bob@example.com"]);
      await runJsonataMachine(
        senderDefinition(CHECKED),
        i,
        { call: (sv, a, args) => (sv === "sesv2" && sent.push(args), services.call(sv, a, args)) },
        { startTime: AT },
      );
      assert.deepStrictEqual(sent, [i.bulk]);
      assert.deepStrictEqual([f.lookUps.length, f.metrics.length], [1, 0]);
    });

    it("every entry opted out: no SendBulkEmail call at all, the execution succeeds", async () => {
      const f = new Fakes();
      f.optedOut.add("ann@example.com");
      const { output } = await f.run(input(["ann@example.com", "ann@example.com"]), CHECKED);
      assert.deepStrictEqual(f.lookUps, [["ann@example.com"]], "one key, not two: BatchGetItem refuses duplicates");
      assert.deepStrictEqual([f.calls, f.deadLetters], [[], []]);
      assert.strictEqual(output.opted_out, 2);
    });

    it("a look-up that fails sends nothing: every entry dead-lettered as not sent, with the error", async () => {
      const f = new Fakes();
      f.lookUpAnswer = () => ({ error: "DynamoDB.AccessDeniedException" });
      const i = input(["ann@example.com", "bob@example.com"]);
      await assert.rejects(f.run(i, CHECKED), failed);
      assert.deepStrictEqual([f.calls, f.delivered], [[], []]);
      assert.deepStrictEqual(
        f.deadLetters.map((m) => [m.input.recipients, m.error.Error, m.delivery]),
        [
          [["r0"], "DynamoDB.AccessDeniedException", "not-sent"],
          [["r1"], "DynamoDB.AccessDeniedException", "not-sent"],
        ],
      );
      // A redrive of one, once DynamoDB answers, is looked up again and sent.
      f.lookUpAnswer = () => "all";
      const redrive = await f.run(f.deadLetters[0].input, CHECKED);
      assert.deepStrictEqual([redrive.output.sent, f.delivered], [1, ["ann@example.com"]]);
    });

    it("a busy DynamoDB is retried; keys left unprocessed are asked again alone; still unprocessed after the retries: not sent", async () => {
      const f = new Fakes();
      f.optedOut.add("cy@example.com");
      // Round 1: bob and cy unprocessed; round 2 (the one retry): cy answered (opted out), bob still unprocessed.
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
        f.deadLetters.map((m) => [m.input.recipients, m.error.Error, m.delivery]),
        [[["r1"], "OptOut.Unprocessed", "not-sent"]],
      );
      // One backoff of 1 s (equal jitter, rounded up to whole seconds).
      assert.deepStrictEqual(stats.waits, [1]);
    });

    it("with a cap too: an opted-out entry takes no admission (looked up first); the others are admitted and sent", async () => {
      const f = new Fakes();
      f.optedOut.add("ann@example.com");
      const { output } = await f.run(input(["ann@example.com", "bob@example.com"]), CHECKED_CAPPED);
      assert.deepStrictEqual(output, { sent: 1, capped: 0, repeats: 0, opted_out: 1 });
      assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01"), undefined);
      assert.strictEqual(f.table.items.get("bob@example.com#2026-12-01")!.sends.N, "1");
    });

    it("property: an entry is sent iff its address is not opted out and its look-up succeeded; none is lost", async () => {
      const people = ["ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com", "eve@example.com"];
      await fc.assert(
        fc.asyncProperty(
          fc.subarray(people, { minLength: 1 }),
          fc.subarray(people),
          fc.array(fc.subarray(people), { maxLength: 5 }),
          async (list, opted, unprocessedRounds) => {
            const f = new Fakes();
            opted.forEach((a) => f.optedOut.add(a));
            f.lookUpAnswer = (n, keys) => ({
              unprocessed: (unprocessedRounds[n - 1] ?? []).filter((k) => keys.includes(k)),
            });
            const result = await f.run(input(list), CHECKED).catch((e) => (failed(e) ? undefined : Promise.reject(e)));
            const unchecked = list.filter((a) => [0, 1].every((r) => (unprocessedRounds[r] ?? []).includes(a)));
            const expectSent = list.filter((a) => !opted.includes(a) && !unchecked.includes(a));
            assert.deepStrictEqual(f.delivered, expectSent);
            const dead = f.deadLetters.map((m) => m.input.bulk.BulkEmailEntries[0].Destination.ToAddresses[0]);
            assert.deepStrictEqual(dead, unchecked);
            if (result) assert.strictEqual(result.output.opted_out, list.filter((a) => opted.includes(a)).length);
          },
        ),
        { numRuns: 150 },
      );
    });
  });

  describe("with a frequency cap: the sender admits entry by entry", () => {
    it("a capped entry is dropped and counted; the others are sent; a repeated invocation sends nothing again", async () => {
      const f = new Fakes();
      // ann had her one send of the day already (another campaign's).
      f.table.items.set("ann@example.com#2026-12-01", {
        pk: { S: "ann@example.com#2026-12-01" },
        sends: { N: "1" },
        schedules: { SS: ["x@y"] },
      });
      const i = input(["ann@example.com", "bob@example.com", "cy@example.com"]);
      const first = await f.run(i, CAPPED);
      assert.deepStrictEqual(first.output, { sent: 2, capped: 1, repeats: 0 });
      assert.deepStrictEqual(f.calls, [["bob@example.com", "cy@example.com"]]);
      assert.deepStrictEqual(f.metrics, [
        {
          Namespace: "sendtime",
          MetricData: [
            { MetricName: "CappedSends", Dimensions: [{ Name: "campaign", Value: "spring" }], Value: 1, Unit: "Count" },
          ],
        },
      ]);
      // Scheduler delivers the same invocation again (it retries StartExecution): nothing is sent or counted twice.
      const again = await f.run(i, CAPPED);
      assert.deepStrictEqual(again.output, { sent: 0, capped: 1, repeats: 2 });
      assert.deepStrictEqual(f.delivered, ["bob@example.com", "cy@example.com"]);
      assert.strictEqual(f.table.items.get("bob@example.com#2026-12-01")!.sends.N, "1");
    });

    it("an entry that fails after admission gives it back before it is dead-lettered; its redrive is admitted and sent once", async () => {
      let reject = true;
      const f = new Fakes((a) => (a === "bob@example.com" && reject ? "MESSAGE_REJECTED" : "SUCCESS"));
      await assert.rejects(f.run(input(["ann@example.com", "bob@example.com"]), CAPPED), failed);
      assert.strictEqual(
        f.table.items.get("bob@example.com#2026-12-01")?.sends?.N ?? "0",
        "0",
        "bob's admission was given back",
      );
      assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01")!.sends.N, "1");
      const [m] = f.deadLetters;
      assert.deepStrictEqual([m.input.recipients, m.error.Error], [["r1"], "MESSAGE_REJECTED"]);
      reject = false;
      const redrive = await f.run(m.input, CAPPED);
      assert.deepStrictEqual(redrive.output, { sent: 1, capped: 0, repeats: 0 });
      assert.deepStrictEqual(f.delivered, ["ann@example.com", "bob@example.com"]);
    });
  });
});
