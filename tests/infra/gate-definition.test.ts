import * as assert from "assert";
import { TextDocument } from "vscode-languageserver-textdocument";
import { GateInput, gateDefinition, GateParameters } from "../../infra/rules/frequency-cap";
import { StatesError } from "../helpers/asl-interpreter";
import { evaluateCondition, FakeTable, runJsonataMachine } from "../helpers/jsonata-interpreter";

const aslValidator = require("asl-validator");
const { getLanguageService } = require("amazon-states-language-service");

const PARAMS: GateParameters = {
  partition: "aws",
  cap: { max: 2, per: "day" },
  tableName: "sendtime-gate-dev",
  deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq",
};

const ARN = (name: string) => `arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-${name}`;

function gateInput(address: string, campaign: string, schedule: string, scheduledTime: string): GateInput {
  return {
    email: {
      FromEmailAddress: "news@mail.example.com",
      Destination: { ToAddresses: [address] },
      Content: { Template: { TemplateName: "t", TemplateData: '{"step":"1"}' } },
      ConfigurationSetName: "sendtime-dev",
      EmailTags: [
        { Name: "campaign", Value: campaign },
        { Name: "step", Value: "1" },
      ],
    },
    campaign,
    schedule: ARN(schedule),
    scheduled_time: scheduledTime,
  };
}

/** The gate's world: the table, SES, CloudWatch and the dead-letter queue. */
class Fakes {
  table = new FakeTable("sendtime-gate-dev");
  sent: any[] = [];
  metrics: any[] = [];
  deadLetters: any[] = [];
  sesFailure?: string;
  /** Every call, in order, as `service:action`. */
  calls: string[] = [];
  /** An UpdateItem that takes something away (DELETE) fails with this error. */
  releaseFailure?: string;

  services() {
    return {
      call: (service: string, action: string, args: any) => {
        this.calls.push(`${service}:${action}`);
        if (service === "dynamodb" && this.releaseFailure && /DELETE/.test(args.UpdateExpression ?? ""))
          throw new StatesError(this.releaseFailure, "Internal server error");
        if (service === "dynamodb") return this.table.call(action, args);
        if (service === "sesv2" && action === "sendEmail") {
          if (this.sesFailure) throw new StatesError(this.sesFailure, "Email address is not verified.");
          this.sent.push(args);
          return { MessageId: `m-${this.sent.length}` };
        }
        if (service === "cloudwatch" && action === "putMetricData") return (this.metrics.push(args), {});
        if (service === "sqs" && action === "sendMessage") return (this.deadLetters.push(args), { MessageId: "d" });
        throw new Error(`unexpected call ${service}:${action}`);
      },
    };
  }

  run(input: GateInput, params = PARAMS) {
    return runJsonataMachine(gateDefinition(params), input, this.services(), { startTime: input.scheduled_time });
  }
}

async function languageServiceErrors(definition: object): Promise<string[]> {
  const ls = getLanguageService({});
  const doc = TextDocument.create("file:///gate.asl.json", "json", 1, JSON.stringify(definition, null, 2));
  const diagnostics = await ls.doValidation(doc, ls.parseJSONDocument(doc));
  return diagnostics.filter((d: any) => d.severity === 1).map((d: any) => d.message);
}

describe("send gate definition", () => {
  it("passes asl-validator (checkPaths, checkArn) and AWS's language service, per day and per month", async () => {
    for (const per of ["day", "month"] as const) {
      const def = gateDefinition({ ...PARAMS, cap: { max: 3, per } });
      const { isValid, errors } = aslValidator(structuredClone(def), { checkPaths: true, checkArn: true });
      assert.deepStrictEqual(errors, []);
      assert.ok(isValid);
      assert.deepStrictEqual(await languageServiceErrors(def), []);
    }
  });

  describe("run (interpreted, with a fake table that evaluates the conditions)", () => {
    it("a third send to one address on one UTC day is capped: counted per campaign, not sent", async () => {
      const f = new Fakes();
      const a = await f.run(gateInput("ann@example.com", "spring", "spring/a1-1", "2026-12-01T09:00:00Z"));
      const b = await f.run(gateInput("ann@example.com", "summer", "summer/a1-1", "2026-12-01T15:30:00Z"));
      const c = await f.run(gateInput("ann@example.com", "autumn", "autumn/a1-1", "2026-12-01T23:59:00Z"));
      assert.deepStrictEqual(a.path, ["Admit", "Send"]);
      assert.deepStrictEqual(b.path, ["Admit", "Send"]);
      assert.deepStrictEqual(c.path, ["Admit", "LookUp", "RepeatOrCapped", "CountCapped", "Capped"]);
      assert.deepStrictEqual(
        f.sent.map((s) => s.EmailTags[0].Value),
        ["spring", "summer"],
      );
      assert.deepStrictEqual(f.metrics, [
        {
          Namespace: "sendtime",
          MetricData: [
            { MetricName: "CappedSends", Dimensions: [{ Name: "campaign", Value: "autumn" }], Value: 1, Unit: "Count" },
          ],
        },
      ]);
      // other addresses are counted on their own
      await f.run(gateInput("bob@example.com", "autumn", "autumn/b1-1", "2026-12-01T23:59:00Z"));
      assert.strictEqual(f.sent.length, 3);
      const item = f.table.items.get("ann@example.com#2026-12-01")!;
      assert.strictEqual(item.sends.N, "2");
      // expires a day after the period ends: 2026-12-03T00:00Z
      assert.strictEqual(item.expires_at.N, String(Date.UTC(2026, 11, 3) / 1000));
    });

    it("sends exactly what the fan-out built, unchanged", async () => {
      const f = new Fakes();
      const input = gateInput("ann@example.com", "spring", "spring/a1-1", "2026-12-01T09:00:00Z");
      await f.run(input);
      assert.deepStrictEqual(f.sent, [input.email]);
    });

    it("a repeated invocation of an admitted schedule is neither counted nor sent again", async () => {
      const f = new Fakes();
      const first = gateInput("ann@example.com", "spring", "spring/a1-1", "2026-12-01T09:00:00Z");
      await f.run(first);
      const again = await f.run(first);
      assert.deepStrictEqual(again.path, ["Admit", "LookUp", "RepeatOrCapped", "AlreadyAdmitted"]);
      assert.strictEqual(f.sent.length, 1);
      assert.strictEqual(f.table.items.get("ann@example.com#2026-12-01")!.sends.N, "1");
      assert.strictEqual(f.metrics.length, 0, "a repeat is not a capped send");
      // the repeat did not use up the day's second send
      const second = await f.run(gateInput("ann@example.com", "summer", "summer/a1-1", "2026-12-01T10:00:00Z"));
      assert.deepStrictEqual(second.path, ["Admit", "Send"]);
      // and a repeat of a capped schedule stays capped, counted again (it is a new refused invocation)
      await f.run(gateInput("ann@example.com", "autumn", "autumn/a1-1", "2026-12-01T11:00:00Z"));
      assert.strictEqual(f.sent.length, 2);
    });

    it("a recurring schedule's occurrences in one period are separate sends (one ARN, other scheduled times); a repeat of one occurrence is not", async () => {
      const f = new Fakes();
      const monthly = { ...PARAMS, cap: { max: 4, per: "month" as const } };
      const weekly = ["2026-12-07T09:00:00Z", "2026-12-14T09:00:00Z", "2026-12-21T09:00:00Z", "2026-12-28T09:00:00Z"];
      for (const t of weekly) await f.run(gateInput("ann@example.com", "digest", "digest/a1-1", t), monthly);
      assert.strictEqual(f.sent.length, 4, "every weekly occurrence is sent");
      const again = await f.run(gateInput("ann@example.com", "digest", "digest/a1-1", weekly[1]), monthly);
      assert.deepStrictEqual(again.path, ["Admit", "LookUp", "RepeatOrCapped", "AlreadyAdmitted"]);
      assert.strictEqual(f.sent.length, 4);
      assert.strictEqual(f.table.items.get("ann@example.com#2026-12")!.sends.N, "4");
    });

    it("the next UTC day starts a new period", async () => {
      const f = new Fakes();
      for (const [campaign, t] of [
        ["spring", "2026-12-01T09:00:00Z"],
        ["summer", "2026-12-01T10:00:00Z"],
        ["autumn", "2026-12-01T11:00:00Z"],
        ["winter", "2026-12-02T00:00:00Z"],
      ])
        await f.run(gateInput("ann@example.com", campaign, `${campaign}/a1-1`, t));
      assert.deepStrictEqual(
        f.sent.map((s) => s.EmailTags[0].Value),
        ["spring", "summer", "winter"],
      );
      assert.deepStrictEqual([...f.table.items.keys()], ["ann@example.com#2026-12-01", "ann@example.com#2026-12-02"]);
    });

    it("per month: the period is the UTC calendar month", async () => {
      const f = new Fakes();
      const monthly = { ...PARAMS, cap: { max: 1, per: "month" as const } };
      await f.run(gateInput("ann@example.com", "spring", "spring/a1-1", "2026-12-01T09:00:00Z"), monthly);
      await f.run(gateInput("ann@example.com", "summer", "summer/a1-1", "2026-12-31T23:00:00Z"), monthly);
      await f.run(gateInput("ann@example.com", "winter", "winter/a1-1", "2027-01-01T00:00:00Z"), monthly);
      assert.deepStrictEqual(
        f.sent.map((s) => s.EmailTags[0].Value),
        ["spring", "winter"],
      );
      assert.strictEqual(
        f.table.items.get("ann@example.com#2026-12")!.expires_at.N,
        String(Date.UTC(2027, 0, 3) / 1000),
      );
    });

    it("a failed send goes to the dead-letter queue with its input and error, and the execution fails", async () => {
      const f = new Fakes();
      f.sesFailure = "SesV2.MessageRejectedException";
      const input = gateInput("ann@example.com", "spring", "spring/a1-1", "2026-12-01T09:00:00Z");
      await assert.rejects(f.run(input), (e: unknown) => e instanceof StatesError && e.error === "SendGate.Failed");
      assert.strictEqual(f.deadLetters.length, 1);
      assert.strictEqual(f.deadLetters[0].QueueUrl, PARAMS.deadLetterQueueUrl);
      const body = JSON.parse(f.deadLetters[0].MessageBody);
      assert.deepStrictEqual(body.input, input);
      assert.strictEqual(body.error.Error, "SesV2.MessageRejectedException");
    });

    describe("a send that fails after admission gives the admission back before it is dead-lettered", () => {
      const KEY = "ann@example.com#2026-12-01";
      const earlier = () => gateInput("ann@example.com", "summer", "summer/a1-1", "2026-12-01T08:00:00Z");
      const failing = () => gateInput("ann@example.com", "spring", "spring/a1-1", "2026-12-01T09:00:00Z");

      it("count and schedule set are as before the send, and then the message is written", async () => {
        const f = new Fakes();
        await f.run(earlier());
        f.sesFailure = "SesV2.MessageRejectedException";
        f.calls = [];
        await assert.rejects(f.run(failing()), (e: any) => e instanceof StatesError && e.error === "SendGate.Failed");
        const item = f.table.items.get(KEY)!;
        assert.strictEqual(item.sends.N, "1", "only the earlier send is counted");
        assert.deepStrictEqual(item.schedules.SS, [`${ARN("summer/a1-1")}@2026-12-01T08:00:00Z`]);
        assert.deepStrictEqual(f.calls, [
          "dynamodb:updateItem",
          "sesv2:sendEmail",
          "dynamodb:updateItem",
          "sqs:sendMessage",
        ]);
        // The message is what it was: the input and the send's error.
        const body = JSON.parse(f.deadLetters[0].MessageBody);
        assert.deepStrictEqual(Object.keys(body).sort(), ["error", "input"]);
        assert.deepStrictEqual(body.input, failing());
        assert.strictEqual(body.error.Error, "SesV2.MessageRejectedException");
      });

      it("a redrive of the dead-lettered input is admitted and sent, and counted once", async () => {
        const f = new Fakes();
        await f.run(earlier());
        f.sesFailure = "SesV2.MessageRejectedException";
        await assert.rejects(f.run(failing()));
        f.sesFailure = undefined;
        const redrive = await f.run(JSON.parse(f.deadLetters[0].MessageBody).input);
        assert.deepStrictEqual(redrive.path, ["Admit", "Send"]);
        assert.deepStrictEqual(
          f.sent.map((m) => m.EmailTags[0].Value),
          ["summer", "spring"],
        );
        assert.strictEqual(f.table.items.get(KEY)!.sends.N, "2");
      });

      it("a failed send does not use up the cap: with max 1, another campaign's send that day still goes out", async () => {
        const f = new Fakes();
        const one = { ...PARAMS, cap: { max: 1, per: "day" as const } };
        f.sesFailure = "SesV2.MessageRejectedException";
        await assert.rejects(f.run(failing(), one));
        f.sesFailure = undefined;
        const other = await f.run(gateInput("ann@example.com", "autumn", "autumn/a1-1", "2026-12-01T12:00:00Z"), one);
        assert.deepStrictEqual(other.path, ["Admit", "Send"]);
      });

      it("when the release itself fails, the send is still dead-lettered, with the release's error beside the send's", async () => {
        const f = new Fakes();
        f.sesFailure = "SesV2.MessageRejectedException";
        f.releaseFailure = "DynamoDB.InternalServerErrorException";
        await assert.rejects(f.run(failing()), (e: any) => e instanceof StatesError && e.error === "SendGate.Failed");
        assert.strictEqual(f.deadLetters.length, 1);
        const body = JSON.parse(f.deadLetters[0].MessageBody);
        assert.deepStrictEqual(body.input, failing());
        assert.strictEqual(body.error.Error, "SesV2.MessageRejectedException");
        assert.strictEqual(body.release_error.Error, "DynamoDB.InternalServerErrorException");
      });
    });
  });

  it("the fake table's conditions behave like DynamoDB's", () => {
    const item = { pk: { S: "x" }, sends: { N: "2" }, schedules: { SS: ["a", "b"] } };
    const v = { ":max": { N: "2" }, ":s": { S: "a" }, ":t": { S: "c" } };
    assert.strictEqual(evaluateCondition("attribute_not_exists(sends)", item, v), false);
    assert.strictEqual(evaluateCondition("attribute_not_exists(sends)", {}, v), true);
    assert.strictEqual(evaluateCondition("sends < :max", item, v), false);
    assert.strictEqual(evaluateCondition("contains(schedules, :s)", item, v), true);
    assert.strictEqual(evaluateCondition("NOT contains(schedules, :t) AND sends <= :max", item, v), true);
    assert.strictEqual(
      evaluateCondition("attribute_not_exists(sends) OR (sends < :max AND NOT contains(schedules, :t))", item, v),
      false,
    );
  });
});
