/**
 * The guardrails' state machines, run by the JSONata interpreter with DynamoDB answered by dynalite: the pause on a campaign's alarm and on the
 * account's (every armed campaign, page by page), each the state write pause-campaign makes (checked against a real
 * DynamoDB, dynalite, and read back by campaign-state's own reader); the arm machine's PutMetricAlarm requests at a
 * launch. Both definitions pass asl-validator and AWS's language service.
 */
import * as assert from "assert";
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { getLanguageService } from "amazon-states-language-service";
import { TextDocument } from "vscode-languageserver-textdocument";
import { DEFAULT_GUARDRAILS } from "../../../infra/core/send/guardrails";
import {
  GuardrailParameters,
  guardrailArmDefinition,
  guardrailPauseDefinition,
} from "../../../infra/state-machines/guardrail-definition";
import { campaignStateWithHistory, readCampaignState, setCampaignState } from "../../../scripts/lib/aws/campaign-state";
import { Deadline } from "../../../scripts/lib/aws/call";
import { StatesError } from "../../helpers/asl-interpreter";
import { runJsonataMachine } from "../../helpers/jsonata-interpreter";
import { LocalDynamoDb, startDynalite } from "../../helpers/ledger";

const aslValidator = require("asl-validator");

const LEDGER = "ledger-test";
const TOPIC = "arn:aws:sns:us-east-1:123456789012:alarms";
const P: GuardrailParameters = {
  stack: "dev",
  guardrails: DEFAULT_GUARDRAILS,
  ledgerTableName: LEDGER,
  topicArn: TOPIC,
};
const START = { startTime: "2026-12-04T01:00:00.000Z" };
const CLEANUP = {
  partition: "aws",
  groupName: "sendtime-dev-guardrail-cleanup",
  roleArn: "arn:aws:iam::123456789012:role/alarm-cleanup",
  deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:guardrails-dlq",
};
const WITH_CLEANUP: GuardrailParameters = { ...P, alarmCleanup: CLEANUP };

/** A "CloudWatch Alarm State Change" event, as the EventBridge docs' sample has it (the fields the rule and machine read). */
const alarmEvent = (alarmName: string, value = "ALARM") => ({
  version: "0",
  "detail-type": "CloudWatch Alarm State Change",
  source: "aws.cloudwatch",
  account: "123456789012",
  time: "2026-12-04T01:00:00Z",
  region: "us-east-1",
  resources: [`arn:aws:cloudwatch:us-east-1:123456789012:alarm:${alarmName}`],
  detail: {
    alarmName,
    state: { value, reason: "Threshold Crossed", timestamp: "2026-12-04T01:00:00.000+0000" },
    previousState: { value: value === "ALARM" ? "OK" : "ALARM" },
  },
});

async function languageServiceErrors(definition: object): Promise<string[]> {
  const ls = getLanguageService({});
  const doc = TextDocument.create("file:///g.asl.json", "json", 1, JSON.stringify(definition, null, 2));
  const diagnostics = await ls.doValidation(doc, ls.parseJSONDocument(doc));
  return diagnostics.filter((d: any) => d.severity === 1).map((d: any) => d.message);
}

let local: LocalDynamoDb;
let db: DynamoDBClient;
let tables = 0;
before(async () => {
  local = await startDynalite();
  db = local.client;
});
after(() => local.close());

/** A fresh ledger table in dynalite: DynamoDB's own condition and update expressions. */
async function freshTable(): Promise<string> {
  const TableName = `${LEDGER}-${++tables}`;
  await db.send(
    new CreateTableCommand({
      TableName,
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  return TableName;
}

async function dynamodb(action: string, args: any) {
  assert.strictEqual(action, "updateItem");
  try {
    const { $metadata, ...out } = await db.send(new UpdateItemCommand(args));
    void $metadata;
    return out;
  } catch (e) {
    // Step Functions names a service's error so.
    throw new StatesError(`DynamoDB.${(e as Error).name}`, (e as Error).message);
  }
}

const put = (table: string, tag: string, state: string, reason: string) =>
  db.send(
    new PutItemCommand({
      TableName: table,
      Item: { pk: { S: `campaign#${tag}` }, state: { S: state }, reason: { S: reason } },
    }),
  );

async function fakes(pages: string[][] = [], conflict = false) {
  const table = await freshTable();
  const calls: [string, string, any][] = [];
  return {
    table,
    params: { ...P, ledgerTableName: table },
    calls,
    call: (service: string, action: string, args: any) => {
      calls.push([service, action, args]);
      if (service === "dynamodb") return dynamodb(action, args);
      if (service === "cloudwatch" && action === "describeAlarms") {
        const page = args.NextToken === undefined ? 0 : Number(args.NextToken);
        const next = page + 1 < pages.length ? String(page + 1) : undefined;
        return { MetricAlarms: (pages[page] ?? []).map((AlarmName) => ({ AlarmName })), NextToken: next };
      }
      if (service === "cloudwatch" && action === "putMetricAlarm") return {};
      if (service === "scheduler" && action === "createSchedule" && conflict)
        throw new StatesError("Scheduler.ConflictException", "Schedule already exists");
      if (service === "scheduler") return {};
      throw new Error(`unexpected ${service}:${action}`);
    },
  };
}

async function stateOf(table: string, tag: string) {
  const item = (await db.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `campaign#${tag}` } } }))).Item;
  return item ? { state: item.state?.S, reason: item.reason?.S, at: item.updated_at?.S } : undefined;
}

describe("guardrails: the state machines' definitions", () => {
  it("pass asl-validator (checkPaths, checkArn) and AWS's language service", async () => {
    for (const d of [guardrailArmDefinition(P), guardrailArmDefinition(WITH_CLEANUP), guardrailPauseDefinition(P)]) {
      const r = aslValidator(structuredClone(d), { checkPaths: true, checkArn: true });
      assert.deepStrictEqual(r.errors ?? [], [], JSON.stringify(r.errors));
      assert.ok(r.isValid);
      assert.deepStrictEqual(await languageServiceErrors(d), []);
    }
  });
});

describe("guardrails: the pause machine", () => {
  it("a campaign's bounce alarm in ALARM sets that campaign paused with the reason and the alarm's name", async () => {
    const f = await fakes();
    const name = "sendtime-dev-guardrail-campaign-bounce-spring-sale";
    await runJsonataMachine(guardrailPauseDefinition(f.params), alarmEvent(name), f, START);
    const s = (await stateOf(f.table, "spring-sale"))!;
    assert.strictEqual(s.state, "paused");
    assert.strictEqual(s.reason, `guardrail: bounce rate at or above 2% over 1h (at least 200 sends) (alarm ${name})`);
    assert.ok(!Number.isNaN(Date.parse(s.at!)) && s.at!.endsWith("Z"), s.at);
    assert.deepStrictEqual(
      f.calls.map(([svc, a]) => `${svc}:${a}`),
      ["dynamodb:updateItem"],
    );
  });

  it("a complaint alarm records the complaint threshold", async () => {
    const f = await fakes();
    await runJsonataMachine(
      guardrailPauseDefinition(f.params),
      alarmEvent("sendtime-dev-guardrail-campaign-complaint-a-b"),
      f,
      START,
    );
    assert.match((await stateOf(f.table, "a-b"))!.reason!, /^guardrail: complaint rate at or above 0\.08% over 1h/);
  });

  it("never overwrites a cancelled campaign, nor an operator's own pause (its reason stays)", async () => {
    const f = await fakes();
    await put(f.table, "gone", "cancelled", "x");
    await put(f.table, "held", "paused", "mine");
    for (const tag of ["gone", "held"])
      await runJsonataMachine(
        guardrailPauseDefinition(f.params),
        alarmEvent(`sendtime-dev-guardrail-campaign-bounce-${tag}`),
        f,
        START,
      );
    assert.deepStrictEqual(await stateOf(f.table, "gone"), { state: "cancelled", reason: "x", at: undefined });
    assert.deepStrictEqual(await stateOf(f.table, "held"), { state: "paused", reason: "mine", at: undefined });
  });

  it("an alarm back to OK, or another stack's alarm, changes nothing", async () => {
    const f = await fakes();
    await runJsonataMachine(
      guardrailPauseDefinition(f.params),
      alarmEvent("sendtime-dev-guardrail-campaign-bounce-x", "OK"),
      f,
      START,
    );
    await runJsonataMachine(
      guardrailPauseDefinition(f.params),
      alarmEvent("sendtime-prod-guardrail-campaign-bounce-x"),
      f,
      START,
    );
    assert.deepStrictEqual(f.calls, []);
  });

  it("the account's reputation alarm pauses every armed campaign, over every page of DescribeAlarms", async () => {
    const b = "sendtime-dev-guardrail-campaign-bounce-";
    const f = await fakes([[`${b}one`, `${b}two`], [`${b}three`]]);
    await put(f.table, "two", "cancelled", "done");
    await runJsonataMachine(
      guardrailPauseDefinition(f.params),
      alarmEvent("sendtime-dev-guardrail-account-bounce"),
      f,
      START,
    );
    const lists = f.calls.filter(([, a]) => a === "describeAlarms").map(([, , args]) => args);
    assert.deepStrictEqual(
      lists.map((a) => [a.AlarmNamePrefix, a.NextToken]),
      [
        [b, undefined],
        [b, "1"],
      ],
    );
    assert.strictEqual((await stateOf(f.table, "one"))!.state, "paused");
    assert.strictEqual((await stateOf(f.table, "three"))!.state, "paused");
    assert.strictEqual((await stateOf(f.table, "two"))!.state, "cancelled");
    assert.match(
      (await stateOf(f.table, "one"))!.reason!,
      /^guardrail: the account's SES Reputation\.BounceRate at or above 2%/,
    );
  });
});

describe("guardrails: the arm machine", () => {
  it("puts the launched campaign's bounce and complaint alarms, named and dimensioned by its tag", async () => {
    const f = await fakes();
    const event = {
      "detail-type": "Step Functions Execution Status Change",
      source: "aws.states",
      detail: {
        status: "RUNNING",
        stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev",
        input: JSON.stringify({ campaign_id: "spring.2026", campaign_tag: "spring_2026-1a2b3c4d" }),
      },
    };
    await runJsonataMachine(guardrailArmDefinition(f.params), event, f, START);
    const puts = f.calls.filter(([, a]) => a === "putMetricAlarm").map(([, , args]) => args);
    assert.deepStrictEqual(
      puts.map((a) => a.AlarmName),
      [
        "sendtime-dev-guardrail-campaign-bounce-spring_2026-1a2b3c4d",
        "sendtime-dev-guardrail-campaign-complaint-spring_2026-1a2b3c4d",
      ],
    );
    for (const [a, metric, threshold] of [
      [puts[0], "Bounce", 0.02],
      [puts[1], "Complaint", 0.0008],
    ] as const) {
      assert.strictEqual(a.Threshold, threshold);
      assert.deepStrictEqual(a.AlarmActions, [TOPIC]);
      const stats = a.Metrics.filter((m: any) => m.MetricStat);
      assert.deepStrictEqual(
        stats.map((m: any) => [
          m.Id,
          m.MetricStat.Metric.MetricName,
          m.MetricStat.Metric.Dimensions,
          m.MetricStat.Period,
        ]),
        [
          ["sends", "Send", [{ Name: "campaign", Value: "spring_2026-1a2b3c4d" }], 300],
          ["events", metric, [{ Name: "campaign", Value: "spring_2026-1a2b3c4d" }], 300],
        ],
      );
      assert.deepStrictEqual([a.EvaluationPeriods, a.DatapointsToAlarm], [12, 1], "the hour in 5-minute periods");
    }
  });
});

describe("guardrails: the arm machine schedules the alarms' deletion once the campaign is over", () => {
  const launch = (input: object) => ({
    "detail-type": "Step Functions Execution Status Change",
    source: "aws.states",
    detail: { status: "RUNNING", input: JSON.stringify({ campaign_id: "spring", campaign_tag: "spring", ...input }) },
  });

  it("at the last send + the window: one-time, in the clean-up group, DeleteAlarms of the two alarms", async () => {
    const f = await fakes();
    // The launch's housekeeping instant is the last send + its 15-minute window + 86,400 s (cleanupAt), rounded up
    // to the minute: a last send at 2026-12-05T20:00Z gives 2026-12-06T20:15:00. The alarms go 1 h after the last
    // send's window, by hand: 2026-12-05T20:15 + 1 h = 2026-12-05T21:15:00.
    const out = await runJsonataMachine(
      guardrailArmDefinition({ ...WITH_CLEANUP, ledgerTableName: f.table }),
      launch({ cleanup_at: "2026-12-06T20:15:00" }),
      f,
      START,
    );
    assert.deepStrictEqual(out.path.slice(-2), ["ScheduleAlarmDeletion", "Armed"]);
    const [create] = f.calls.filter(([s]) => s === "scheduler");
    assert.strictEqual(create[1], "createSchedule");
    const { Target, ...rest } = create[2];
    assert.deepStrictEqual(rest, {
      Name: "spring",
      GroupName: "sendtime-dev-guardrail-cleanup",
      ScheduleExpression: "at(2026-12-05T21:15:00)",
      ScheduleExpressionTimezone: "UTC",
      FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: 15 },
      ActionAfterCompletion: "DELETE",
    });
    assert.deepStrictEqual(Target.DeadLetterConfig, { Arn: CLEANUP.deadLetterQueueArn });
    assert.strictEqual(Target.Arn, "arn:aws:scheduler:::aws-sdk:cloudwatch:deleteAlarms");
    assert.strictEqual(Target.RoleArn, CLEANUP.roleArn);
    assert.deepStrictEqual(JSON.parse(Target.Input), {
      AlarmNames: ["sendtime-dev-guardrail-campaign-bounce-spring", "sendtime-dev-guardrail-campaign-complaint-spring"],
    });
  });

  it("a re-launch (the schedule exists): UpdateSchedule with the new instant", async () => {
    const f = await fakes([], true);
    await runJsonataMachine(
      guardrailArmDefinition({ ...WITH_CLEANUP, ledgerTableName: f.table }),
      launch({ cleanup_at: "2026-12-07T00:00:00" }),
      f,
      START,
    );
    const calls = f.calls.filter(([s]) => s === "scheduler");
    assert.deepStrictEqual(
      calls.map(([, a, args]) => [a, args.ScheduleExpression]),
      [
        ["createSchedule", "at(2026-12-06T01:00:00)"],
        ["updateSchedule", "at(2026-12-06T01:00:00)"],
      ],
    );
  });

  it("a launch without cleanup_at (started by hand), or a stack without the clean-up: alarms only", async () => {
    for (const params of [WITH_CLEANUP, P]) {
      const f = await fakes();
      await runJsonataMachine(guardrailArmDefinition({ ...params, ledgerTableName: f.table }), launch({}), f, START);
      assert.deepStrictEqual(
        f.calls.map(([, a]) => a),
        ["putMetricAlarm", "putMetricAlarm"],
      );
    }
  });
});

describe("guardrails: the pause is pause-campaign's state write (dynalite)", function () {
  this.timeout(20_000);
  const run = (table: string, alarmName: string) =>
    runJsonataMachine(
      guardrailPauseDefinition({ ...P, ledgerTableName: table }),
      alarmEvent(alarmName),
      { call: (service, action, args) => (assert.strictEqual(service, "dynamodb"), dynamodb(action, args)) },
      START,
    );

  const deadline = () => new Deadline(10, () => undefined);

  it("campaign-state reads the guardrail's pause back: paused, its reason and time; resume-campaign's write then sets it live", async () => {
    const table = await freshTable();
    await run(table, "sendtime-dev-guardrail-campaign-bounce-spring");
    const d = deadline();
    try {
      const r = await readCampaignState(d, { ddb: db, table }, "spring");
      assert.strictEqual(r.state, "paused");
      assert.match(r.reason!, /^guardrail: bounce rate at or above 2% over 1h/);
      assert.ok(r.updatedAt && Math.abs(Date.parse(r.updatedAt) - Date.now()) < 60_000, r.updatedAt!);
      const w = await setCampaignState(d, { ddb: db, table }, "spring", "live");
      assert.strictEqual(w.previous.state, "paused");
    } finally {
      d.dispose();
    }
  });

  it("every pause and resume is kept with its time and reason: the guardrail's, the operator's, in order (campaign-report's history)", async () => {
    const table = await freshTable();
    const d = deadline();
    const l = { ddb: db, table };
    try {
      const operator = await setCampaignState(d, l, "spring", "paused", "checking the list");
      const resumed = await setCampaignState(d, l, "spring", "live");
      await run(table, "sendtime-dev-guardrail-campaign-bounce-spring");
      // A second alarm while paused changes nothing, and adds nothing to the history (its condition fails).
      await run(table, "sendtime-dev-guardrail-campaign-complaint-spring");
      const r = await campaignStateWithHistory(d, l, "spring");
      assert.ok(!("error" in r));
      const h = r.history;
      assert.deepStrictEqual(
        h.map((c) => [c.state, c.reason && c.reason.replace(/ \(alarm .*\)$/, "")]),
        [
          ["paused", "checking the list"],
          ["live", null],
          ["paused", "guardrail: bounce rate at or above 2% over 1h (at least 200 sends)"],
        ],
      );
      assert.deepStrictEqual(
        [h[0].at, h[1].at],
        [operator.written.updatedAt, resumed.written.updatedAt],
        "each at the time its write recorded",
      );
      // The guardrail's pause at the time it set (its own $now(), in the same UpdateItem).
      assert.ok(Math.abs(Date.parse(h[2].at) - Date.parse(r.updatedAt!)) < 1000, `${h[2].at} vs ${r.updatedAt}`);
    } finally {
      d.dispose();
    }
  });

  it("a cancelled campaign stays cancelled (the condition fails in DynamoDB itself)", async () => {
    const table = await freshTable();
    await put(table, "spring", "cancelled", "done");
    await run(table, "sendtime-dev-guardrail-campaign-bounce-spring");
    const d = deadline();
    try {
      const r = await readCampaignState(d, { ddb: db, table }, "spring");
      assert.deepStrictEqual([r.state, r.reason], ["cancelled", "done"]);
    } finally {
      d.dispose();
    }
  });
});
