/**
 * The one sender's SMS path as a definition (infra/state-machines/sender-sms.ts): the validators, the worst case within
 * EXPRESS's 5 minutes, the timeouts of its tasks, and the phases it shares with email (the cap, the settle) run by the
 * JSONata interpreter with a fake ledger. The wire cases are in sender-sms-wire.test.ts.
 */
import * as assert from "assert";
import { TextDocument } from "vscode-languageserver-textdocument";
import { smsSenderInput, SmsSenderInput } from "../../../infra/core/send/sms-input";
import { senderInput } from "../../../infra/core/send/sender-input";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { SenderParameters } from "../../../infra/state-machines/sender-states";
import {
  SENDER_CONCURRENCY,
  senderWorstCaseSeconds,
  SMS_CALL,
  SMS_MAX_ENTRIES,
  smsSenderWorstCaseSeconds,
} from "../../../infra/core/send/sender-contract";
import { stepFunctions } from "../../../infra/core/plan/quotas";
import { StatesError } from "../../helpers/asl-interpreter";
import { FakeTable, runJsonataMachine } from "../../helpers/jsonata-interpreter";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const aslValidator = require("asl-validator");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getLanguageService } = require("amazon-states-language-service");

const LEDGER = "sender-ledger-dev";
const GATE = "sendtime-gate-dev";
const SMS = {
  originationIdentity: "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-1a2b",
  configurationSetName: "cs",
};
const BASE: SenderParameters = {
  partition: "aws",
  deadLetterQueueUrl: "https://sqs.example/dlq",
  ledger: { tableName: LEDGER },
};
const TEXTS: SenderParameters = { ...BASE, sms: SMS };
const TEXTS_CAPPED: SenderParameters = { ...TEXTS, gate: { cap: { max: 1, per: "day" }, tableName: GATE } };
const ALL: SenderParameters = { ...TEXTS_CAPPED, optOuts: { tableName: "opt-outs" } };
const AT = "2026-12-01T15:00:00Z";
const SCHEDULE = "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/t-1";

async function languageServiceErrors(definition: object): Promise<string[]> {
  const ls = getLanguageService({});
  const doc = TextDocument.create("file:///sender.asl.json", "json", 1, JSON.stringify(definition, null, 2));
  const diagnostics = await ls.doValidation(doc, ls.parseJSONDocument(doc));
  return diagnostics.filter((d: any) => d.severity === 1).map((d: any) => d.message);
}

function texts(phones: string[], schedule = SCHEDULE, at = AT): SmsSenderInput {
  const rows = phones.map((phone, k) => ({ recipient_id: `r${k}`, phone, body: "Hi", until: "2026-12-01T21:00:00Z" }));
  return { ...smsSenderInput("spring", { step: 1, variant: null }, rows), schedule, scheduled_time: at };
}

/** Runs the sender with fake tables; SendTextMessage answers `sms(number)` (a MessageId, or throws). */
async function run(p: SenderParameters, i: unknown, sms: (n: string) => unknown = () => ({ MessageId: "m" })) {
  const ledger = new FakeTable(LEDGER);
  const gate = new FakeTable(GATE);
  const calls: string[] = [];
  const deadLetters: any[] = [];
  const result = await runJsonataMachine(
    senderDefinition(p),
    i,
    {
      call: (service, action, args) => {
        calls.push(`${service}:${action}`);
        if (service === "dynamodb") return (args.TableName === GATE ? gate : ledger).call(action, args);
        if (service === "sqs") return (deadLetters.push(JSON.parse(args.MessageBody)), {});
        if (service === "cloudwatch") return {};
        if (service === "pinpointsmsvoicev2") return sms(args.DestinationPhoneNumber);
        if (service === "sesv2")
          return { BulkEmailEntryResults: args.BulkEmailEntries.map(() => ({ Status: "SUCCESS" })) };
        throw new Error(`unexpected ${service}:${action}`);
      },
    },
    { startTime: AT },
  ).catch((e) => {
    if (e instanceof StatesError && e.error === "Sender.EntriesFailed")
      return { output: "failed", path: [] as string[] };
    throw e;
  });
  return { ...result, calls, deadLetters, gate, ledger };
}

describe("the one sender's texts: definition", () => {
  it("passes asl-validator (checkPaths, checkArn) and AWS's language service with texts, with and without a cap and opt-outs", async () => {
    for (const p of [TEXTS, TEXTS_CAPPED, ALL]) {
      const def = senderDefinition(p);
      const { isValid, errors } = aslValidator(structuredClone(def), { checkPaths: true, checkArn: true });
      assert.deepStrictEqual(errors, []);
      assert.ok(isValid);
      assert.deepStrictEqual(await languageServiceErrors(def), []);
    }
  });

  it("calls SendTextMessage through Step Functions' SDK integration, with its own timeout; every other task has the busy bound", () => {
    const tasks: any[] = [];
    const walk = (states: Record<string, any>) => {
      for (const st of Object.values(states)) {
        if (st.Type === "Task") tasks.push(st);
        if (st.Type === "Map") walk(st.ItemProcessor.States);
      }
    };
    walk((senderDefinition(ALL) as any).States);
    const text = tasks.filter((t) => t.Resource === "arn:aws:states:::aws-sdk:pinpointsmsvoicev2:sendTextMessage");
    assert.strictEqual(text.length, 1);
    assert.strictEqual(text[0].TimeoutSeconds, SMS_CALL.timeoutSeconds);
    assert.strictEqual(
      text[0].Retry,
      undefined,
      "a text is never repeated by a Retry (throttling goes to the next round)",
    );
    for (const t of tasks.filter((x) => !/sesv2|pinpointsmsvoicev2/.test(x.Resource)))
      assert.strictEqual(t.TimeoutSeconds, 1, t.Resource);
  });

  it("ends within EXPRESS's 5 minutes at SMS_MAX_ENTRIES texts with every call slow and retried, the Map's concurrency bounded", () => {
    for (const capped of [false, true])
      assert.ok(
        smsSenderWorstCaseSeconds(SMS_MAX_ENTRIES, capped) < stepFunctions.expressMaxSeconds - 30,
        `${smsSenderWorstCaseSeconds(SMS_MAX_ENTRIES, capped)} s`,
      );
    const map = (senderDefinition(TEXTS) as any).States.SendTexts;
    assert.strictEqual(map.MaxConcurrency, SENDER_CONCURRENCY.texts);
    // By hand, uncapped at 20 entries: rounds 3 × (state read 6 s + 2 waves × 5 s) + backoffs 2 + 4 = 54 s; claim and
    // record 2 × 11 s; slots 1 wave × 4 calls × 11 s = 44 s; settle 1 wave × 2 × 11 s = 22 s: 142 s.
    assert.strictEqual(smsSenderWorstCaseSeconds(20, false), 142);
    assert.ok(smsSenderWorstCaseSeconds(20, true) > smsSenderWorstCaseSeconds(5, true));
  });

  it("an email input through a sender with texts is unchanged: SendBulkEmail, no text", async () => {
    const row = {
      step: 1,
      template: "t",
      variant: null,
      entries: [{ recipient_id: "a", email: "a@example.com", template_data: {} }],
    };
    const i = {
      ...senderInput({ fromAddress: "n@example.com", configurationSetName: "cs" }, "spring", row as any),
      schedule: SCHEDULE,
      scheduled_time: AT,
    };
    const r = await run(TEXTS, i);
    assert.ok(r.calls.includes("sesv2:sendBulkEmail"));
    assert.ok(!r.calls.includes("pinpointsmsvoicev2:sendTextMessage"));
    assert.strictEqual(r.output.sent, 1);
  });

  it("texts skip the unsubscribe endpoint's table (it holds addresses): no BatchGetItem", async () => {
    const r = await run(ALL, texts(["+12025550100"]));
    assert.ok(!r.calls.includes("dynamodb:batchGetItem"));
    assert.strictEqual(r.output.sent, 1);
  });

  it("the frequency cap counts a number like an address: the second text that day to one number is capped", async () => {
    const p = TEXTS_CAPPED;
    const gate = new FakeTable(GATE);
    const ledger = new FakeTable(LEDGER);
    const sent: string[] = [];
    const services = {
      call: (service: string, action: string, args: any) => {
        if (service === "dynamodb") return (args.TableName === GATE ? gate : ledger).call(action, args);
        if (service === "pinpointsmsvoicev2") return (sent.push(args.DestinationPhoneNumber), { MessageId: "m" });
        return {};
      },
    };
    const first = await runJsonataMachine(senderDefinition(p), texts(["+12025550100"], `${SCHEDULE}a`), services, {
      startTime: AT,
    });
    const second = await runJsonataMachine(senderDefinition(p), texts(["+12025550100"], `${SCHEDULE}b`), services, {
      startTime: AT,
    });
    assert.deepStrictEqual([first.output.sent, second.output.capped, sent.length], [1, 1, 1]);
    assert.strictEqual(gate.items.get("+12025550100#2026-12-01")?.sends.N, "1");
  });

  it("an opted-out text gives its cap admission back (it was not sent)", async () => {
    const r = await run(TEXTS_CAPPED, texts(["+12025550100"]), () => {
      throw new StatesError("PinpointSmsVoiceV2.ConflictException", "DESTINATION_PHONE_NUMBER_OPTED_OUT");
    });
    assert.strictEqual(r.output.opted_out, 1);
    assert.strictEqual(r.gate.items.get("+12025550100#2026-12-01")?.sends.N, "0");
    assert.deepStrictEqual(r.deadLetters, []);
  });

  it("a ConflictException of another reason is not sent (never resent by itself), with the reason", async () => {
    const r = await run(TEXTS, texts(["+12025550100"]), () => {
      throw new StatesError(
        "PinpointSmsVoiceV2.ConflictException",
        "The pool is deleted (RESOURCE_DELETION_NOT_ALLOWED)",
      );
    });
    assert.strictEqual(r.output, "failed");
    assert.deepStrictEqual(
      r.deadLetters.map((d) => d.outcome),
      ["not-sent"],
    );
  });

  it("pairs each entry with its recipient; entries past SMS_MAX_ENTRIES are not sent, with the reason", async () => {
    const phones = Array.from({ length: SMS_MAX_ENTRIES + 2 }, (_, k) => `+1202555${String(k).padStart(4, "0")}`);
    const numbers: string[] = [];
    const r = await run(TEXTS, texts(phones), (n) => (numbers.push(n), { MessageId: "m" }));
    assert.deepStrictEqual(numbers, phones.slice(0, SMS_MAX_ENTRIES));
    assert.deepStrictEqual(
      r.deadLetters.map((d) => [d.recipients[0], d.reason]),
      [`r${SMS_MAX_ENTRIES}`, `r${SMS_MAX_ENTRIES + 1}`].map((id) => [
        id,
        `Sms.TooManyEntries: an SMS input holds at most ${SMS_MAX_ENTRIES} entries`,
      ]),
    );
  });

  it("a slot write retried after it landed (a timeout) is this occurrence's own slot: sent once, one slot taken", async () => {
    const ledger = new FakeTable(LEDGER);
    let timedOut = false;
    const sent: string[] = [];
    const i = texts(["+13055550100"]);
    (i.sms.Entries[0] as any).SameSubjectLimit = 3;
    const r = await runJsonataMachine(
      senderDefinition(TEXTS),
      i,
      {
        call: (service, action, args) => {
          if (service === "dynamodb") {
            const out = ledger.call(action, args);
            if (action === "updateItem" && args.Key.pk.S.startsWith("num#") && !timedOut) {
              timedOut = true;
              throw new StatesError("States.Timeout", "the write landed, its answer did not");
            }
            return out;
          }
          if (service === "pinpointsmsvoicev2") return (sent.push(args.DestinationPhoneNumber), { MessageId: "m" });
          return {};
        },
      },
      { startTime: AT },
    );
    assert.deepStrictEqual([r.output.sent, sent.length], [1, 1]);
    const slots = ledger.items.get("num#+13055550100")!;
    assert.deepStrictEqual([slots.t0?.N, slots.t1, slots.t2], [String(Date.parse(AT) / 1000), undefined, undefined]);
  });

  it("the email worst case is unchanged by texts", () => {
    assert.ok(senderWorstCaseSeconds(50, true, true) < stepFunctions.expressMaxSeconds - 30);
  });
});
