import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import {
  DeleteScheduleCommand,
  DeleteScheduleGroupCommand,
  GetScheduleCommand,
  GetScheduleGroupCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from "@aws-sdk/client-scheduler";
import {
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  ListExecutionsCommand,
  ListMapRunsCommand,
  SFNClient,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBClient, GetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";
import { clock } from "../../scripts/lib/aws/call";
import { HTTP_TIMEOUTS } from "../../scripts/lib/aws/clients";
import { stateClock } from "../../scripts/lib/aws/campaign-state";
import { LocalLedger, startLedger } from "../helpers/ledger";
import { Answer, Endpoint, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { scheduleName } from "../../infra/core/plan/naming";
import { main as cancel } from "../../scripts/cancel-campaign";
import { main as status } from "../../scripts/campaign-status";
import { main as reschedule } from "../../scripts/reschedule";
import { ROOT } from "../helpers/cli";
import { FindingsError, UsageError } from "../../infra/core/errors";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-ops-"));
const SM = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev";
const DLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq-226c700";
const outputs = path.join(tmp, "outputs.json");
const LEDGER = "ledger-0a1b2c3";
fs.writeFileSync(
  outputs,
  JSON.stringify({ stateMachineArn: SM, deadLetterQueueUrl: DLQ, region: "us-east-1", ledgerTableName: LEDGER }),
);
const notFound = (what: string) =>
  Object.assign(new Error(`${what} does not exist.`), { name: "ResourceNotFoundException" });
const execArn = (name: string) => `arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:${name}`;

async function run(cli: (argv: string[], io: any) => Promise<number>, args: string[]) {
  let stdout = "",
    stderr = "";
  const code = await cli([...args, "--outputs", outputs], {
    out: (t: string) => (stdout += t),
    err: (t: string) => (stderr += t),
  });
  return { code, stdout, stderr };
}

let scheduler: AwsClientStub<SchedulerClient>;
let sfn: AwsClientStub<SFNClient>;
let sqs: AwsClientStub<SQSClient>;
let ddb: AwsClientStub<DynamoDBClient>;

/** The wait after cancel's state write counted, not slept: its clock moves on by each wait it asks for. */
function useFakeWaits() {
  const real = { ...stateClock };
  let skipped = 0;
  before(() => {
    stateClock.now = () => Date.now() + skipped;
    stateClock.sleep = async (ms) => void (skipped += ms);
  });
  after(() => Object.assign(stateClock, real));
}

/**
 * Mocked clients (and polls that wait 10 ms instead of seconds) for one describe block only: the wire tests at the
 * end of this file need the real clients. The ledger answers as for a campaign never paused or cancelled.
 */
function useMocks() {
  useFakeWaits();
  const realSleep = clock.sleep;
  before(() => {
    clock.sleep = (ms, signal) => realSleep(Math.min(ms, 10), signal);
    scheduler = mockClient(SchedulerClient);
    sfn = mockClient(SFNClient);
    sqs = mockClient(SQSClient);
    ddb = mockClient(DynamoDBClient);
  });
  beforeEach(() => {
    [scheduler, sfn, sqs, ddb].forEach((m) => m.reset());
    ddb.on(UpdateItemCommand).resolves({});
    ddb.on(GetItemCommand).resolves({});
  });
  after(() => {
    [scheduler, sfn, sqs, ddb].forEach((m) => m.restore());
    clock.sleep = realSleep;
  });
}

/** Two pages of executions: ours, another campaign whose name shares the prefix, and an older one of ours. */
function executions() {
  sfn
    .on(ListExecutionsCommand, { stateMachineArn: SM, statusFilter: "RUNNING", maxResults: 100, nextToken: undefined })
    .resolves({
      executions: [
        {
          executionArn: execArn("spring-aaa"),
          name: "spring-aaa",
          status: "RUNNING",
          stateMachineArn: SM,
          startDate: new Date("2026-11-29T10:00:00Z"),
        },
        {
          executionArn: execArn("spring-sale-bbb"),
          name: "spring-sale-bbb",
          status: "RUNNING",
          stateMachineArn: SM,
          startDate: new Date("2026-11-29T10:00:00Z"),
        },
      ],
      nextToken: "page-2",
    });
  sfn
    .on(ListExecutionsCommand, { stateMachineArn: SM, statusFilter: "RUNNING", maxResults: 100, nextToken: "page-2" })
    .resolves({
      executions: [
        {
          executionArn: execArn("spring-ccc"),
          name: "spring-ccc",
          status: "RUNNING",
          stateMachineArn: SM,
          startDate: new Date("2026-11-29T11:00:00Z"),
        },
      ],
    });
  for (const [name, campaign] of [
    ["spring-aaa", "spring"],
    ["spring-sale-bbb", "spring-sale"],
    ["spring-ccc", "spring"],
  ]) {
    sfn.on(DescribeExecutionCommand, { executionArn: execArn(name) }).resolves({
      executionArn: execArn(name),
      stateMachineArn: SM,
      status: "RUNNING",
      startDate: new Date(),
      input: JSON.stringify({ campaign_id: campaign }),
    });
  }
}

describe("cancel-campaign", () => {
  useMocks();
  it("stops the campaign's running fan-outs (all pages, not a look-alike campaign's), then deletes the group and waits", async () => {
    executions();
    scheduler
      .on(GetScheduleGroupCommand)
      .resolvesOnce({ Name: "campaign-spring", State: "ACTIVE" })
      .resolvesOnce({ Name: "campaign-spring", State: "ACTIVE" }) // read again after the stop
      .resolvesOnce({ State: "DELETING" })
      .rejects(notFound("campaign-spring"));
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
    scheduler.on(DeleteScheduleGroupCommand).resolves({});
    const r = await run(cancel, ["--campaign", "spring", "--poll-seconds", "1"]);
    assert.strictEqual(r.code, 0);
    assert.deepStrictEqual(
      sfn.commandCalls(StopExecutionCommand).map((c) => c.args[0].input),
      [
        { executionArn: execArn("spring-aaa"), error: "sendtime.Cancelled", cause: "campaign spring cancelled" },
        { executionArn: execArn("spring-ccc"), error: "sendtime.Cancelled", cause: "campaign spring cancelled" },
      ],
    );
    assert.deepStrictEqual(
      scheduler.commandCalls(DeleteScheduleGroupCommand).map((c) => c.args[0].input),
      [{ Name: "campaign-spring" }],
    );
    assert.strictEqual(scheduler.commandCalls(GetScheduleGroupCommand).length, 4);
    assert.match(
      r.stdout,
      /Stopped 2 fan-outs \(spring-aaa, spring-ccc\)\.\n  Schedule group campaign-spring deleted\.\n/,
    );
    assert.strictEqual(ddb.commandCalls(UpdateItemCommand)[0].args[0].input.Key?.pk?.S, "campaign#spring");
  });

  it("nothing running and no group: the state is still set (a send may be under way) and waited out, exit 0, nothing stopped or deleted", async () => {
    sfn.on(ListExecutionsCommand).resolves({ executions: [] });
    scheduler.on(GetScheduleGroupCommand).rejects(notFound("campaign-spring"));
    const r = await run(cancel, ["--campaign", "spring"]);
    assert.strictEqual(r.code, 0);
    assert.match(
      r.stdout,
      /^Campaign spring: state cancelled at \S+ \(was live\)\.\n  No running fan-out and no schedule group campaign-spring\.\n  Nothing of campaign spring can send any more since \S+: /,
    );
    assert.strictEqual(ddb.commandCalls(UpdateItemCommand).length, 1);
    assert.strictEqual(
      sfn.commandCalls(StopExecutionCommand).length + scheduler.commandCalls(DeleteScheduleGroupCommand).length,
      0,
    );
  });

  it("--dry-run lists what it would stop and delete and sends no mutating call", async () => {
    executions();
    scheduler.on(GetScheduleGroupCommand).resolves({ State: "ACTIVE" });
    const r = await run(cancel, ["--campaign", "spring", "--dry-run"]);
    assert.strictEqual(r.code, 0);
    assert.match(
      r.stdout,
      /would set its state to cancelled \(now live\), stop 2 running fan-outs: spring-aaa, spring-ccc\n  and delete schedule group campaign-spring \(ACTIVE\)/,
    );
    assert.strictEqual(ddb.commandCalls(UpdateItemCommand).length, 0);
    assert.strictEqual(
      sfn.commandCalls(StopExecutionCommand).length + scheduler.commandCalls(DeleteScheduleGroupCommand).length,
      0,
    );
  });

  it("a group still DELETING at the timeout: exit 1, saying schedules may still fire", async () => {
    sfn.on(ListExecutionsCommand).resolves({ executions: [] });
    scheduler.on(GetScheduleGroupCommand).resolves({ State: "DELETING" });
    const r = await run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.2"]);
    assert.strictEqual(r.code, 1);
    assert.strictEqual(
      scheduler.commandCalls(DeleteScheduleGroupCommand).length,
      0,
      "already being deleted: not deleted again",
    );
    assert.match(
      r.stdout,
      /campaign-spring is still DELETING: AWS is deleting its schedules, and some may still fire until it is gone/,
    );
  });

  it("throttling that outlasts the SDK's retries: exit 1, the failed call named, and the group still there said", async () => {
    sfn.on(ListExecutionsCommand).resolves({ executions: [] });
    scheduler.on(GetScheduleGroupCommand).resolves({ State: "ACTIVE" });
    scheduler
      .on(DeleteScheduleGroupCommand)
      .rejects(Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" }));
    const r = await run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.2"]);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stdout,
      /NOT fully cancelled; what can still send:\n {4}- sender executions .*\n {4}- schedule group campaign-spring is still ACTIVE: its pending schedules will fire\n/,
    );
    assert.match(
      r.stdout,
      /problem: campaign spring: DeleteScheduleGroup campaign-spring: ThrottlingException: Rate exceeded\n/,
    );
  });

  it("a group that stays ACTIVE after DeleteScheduleGroup: exit 1, not 'deleting' (issue 10, item 2)", async () => {
    sfn.on(ListExecutionsCommand).resolves({ executions: [] });
    scheduler.on(GetScheduleGroupCommand).resolves({ Name: "campaign-spring", State: "ACTIVE" });
    scheduler.on(DeleteScheduleGroupCommand).resolves({});
    const r = await run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.2", "--json"]);
    assert.strictEqual(r.code, 1);
    const report = JSON.parse(r.stdout);
    assert.strictEqual(report.groupAfter, "ACTIVE");
    assert.strictEqual(report.stillThere.length, 2, report.stillThere);
    assert.match(
      report.stillThere[0],
      /^sender executions that read the campaign's state before it was cancelled may still be sending until /,
    );
    assert.strictEqual(
      report.stillThere[1],
      "schedule group campaign-spring is still ACTIVE: its pending schedules will fire",
    );
    assert.match(report.problems[0], /group campaign-spring still ACTIVE at the command's time limit of 0.2 s/);
  });

  it("a fan-out that cannot be stopped: exit 1, named, even when the group is gone", async () => {
    executions();
    scheduler
      .on(GetScheduleGroupCommand)
      .resolvesOnce({ State: "ACTIVE" })
      .resolvesOnce({ State: "ACTIVE" }) // read again after the stops
      .rejects(notFound("campaign-spring"));
    scheduler.on(DeleteScheduleGroupCommand).resolves({});
    sfn.on(StopExecutionCommand, { executionArn: execArn("spring-aaa") }).resolves({ stopDate: new Date() });
    sfn
      .on(StopExecutionCommand, { executionArn: execArn("spring-ccc") })
      .rejects(Object.assign(new Error("User is not authorized"), { name: "AccessDeniedException" }));
    const r = await run(cancel, ["--campaign", "spring"]);
    assert.strictEqual(r.code, 1);
    assert.match(r.stdout, /Stopped 1 fan-out \(spring-aaa\)\.\n  Schedule group campaign-spring deleted\.\n/);
    assert.match(
      r.stdout,
      /- fan-out spring-ccc is still RUNNING \(StopExecution failed\): it can still create schedules/,
    );
    assert.match(
      r.stdout,
      /problem: campaign spring: StopExecution spring-ccc: AccessDeniedException: User is not authorized/,
    );
  });

  it("finds a fan-out started by hand under any name by its input's campaign_id (issue 10, item 8)", async () => {
    sfn.on(ListExecutionsCommand).resolves({
      executions: [
        {
          executionArn: execArn("manual-rerun-1"),
          name: "manual-rerun-1",
          status: "RUNNING",
          stateMachineArn: SM,
          startDate: new Date(),
        },
        {
          executionArn: execArn("other-x"),
          name: "other-x",
          status: "RUNNING",
          stateMachineArn: SM,
          startDate: new Date(),
        },
      ],
    });
    sfn
      .on(DescribeExecutionCommand, { executionArn: execArn("manual-rerun-1") })
      .resolves({ status: "RUNNING", input: JSON.stringify({ campaign_id: "spring" }) } as any);
    sfn
      .on(DescribeExecutionCommand, { executionArn: execArn("other-x") })
      .resolves({ status: "RUNNING", input: JSON.stringify({ campaign_id: "autumn" }) } as any);
    scheduler.on(GetScheduleGroupCommand).rejects(notFound("campaign-spring"));
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
    const r = await run(cancel, ["--campaign", "spring"]);
    assert.strictEqual(r.code, 0, r.stdout);
    assert.deepStrictEqual(
      sfn.commandCalls(StopExecutionCommand).map((c) => c.args[0].input.executionArn),
      [execArn("manual-rerun-1")],
    );
    assert.deepStrictEqual(sfn.commandCalls(ListExecutionsCommand)[0].args[0].input.statusFilter, "RUNNING");
  });

  it("--poll-seconds below 1 and --timeout-seconds 0 are refused (exit 2)", async () => {
    await assert.rejects(
      run(cancel, ["--campaign", "spring", "--poll-seconds", "0"]),
      /--poll-seconds 0: must be a whole number from 1 to 60/,
    );
    await assert.rejects(
      run(cancel, ["--campaign", "spring", "--timeout-seconds", "0"]),
      (e: unknown) =>
        e instanceof UsageError && e.message === "--timeout-seconds 0: must be a number of seconds from 0.1 to 86400",
    );
  });
});

/** A schedule as GetSchedule returns it: every field, including the read-only ones. */
const SCHEDULE = {
  Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/a1-1",
  Name: "a1-1",
  GroupName: "campaign-spring",
  ScheduleExpression: "at(2026-12-01T09:00:00)",
  ScheduleExpressionTimezone: "America/New_York",
  FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: 7 },
  ActionAfterCompletion: "DELETE",
  State: "ENABLED",
  Description: "sendtime",
  KmsKeyArn: "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
  StartDate: new Date("2026-11-01T00:00:00Z"),
  EndDate: new Date("2027-01-01T00:00:00Z"),
  CreationDate: new Date("2026-11-29T10:00:00Z"),
  LastModificationDate: new Date("2026-11-29T10:00:00Z"),
  Target: {
    Arn: "arn:aws:scheduler:::aws-sdk:sesv2:sendEmail",
    RoleArn: "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b",
    Input: JSON.stringify({
      FromEmailAddress: "news@mail.example.com",
      Destination: { ToAddresses: ["ann@example.com"] },
    }),
    RetryPolicy: { MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 5 },
    DeadLetterConfig: { Arn: "arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq-226c700" },
  },
} as const;

describe("reschedule", () => {
  useMocks();
  // No other step of the recipient unless a test lists some.
  beforeEach(() => scheduler.on(ListSchedulesCommand).resolves({ Schedules: [] }));
  it("moves a send: UpdateSchedule carries every field GetSchedule returned, with the new time", async () => {
    scheduler.on(GetScheduleCommand, { Name: "a1-1", GroupName: "campaign-spring" }).resolves(SCHEDULE as any);
    scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: SCHEDULE.Arn });
    const r = await run(reschedule, [
      "--campaign",
      "spring",
      "--recipient",
      "a1",
      "--local-time",
      "2026-12-02T10:30",
      "--now",
      "2026-11-29T12:00:00Z",
    ]);
    assert.strictEqual(r.code, 0);
    const { Arn, CreationDate, LastModificationDate, ...kept } = SCHEDULE;
    assert.deepStrictEqual(scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input, {
      ...kept,
      ScheduleExpression: "at(2026-12-02T10:30:00)",
    });
    assert.strictEqual(
      r.stdout,
      "Moved spring/a1-1 from at(2026-12-01T09:00:00) America/New_York to at(2026-12-02T10:30:00) America/New_York (2026-12-02T15:30:00.000Z).\n",
    );
  });

  it("reads --at in --timezone, and writes a DST-gap time in UTC", async () => {
    scheduler.on(GetScheduleCommand).resolves(SCHEDULE as any);
    await run(reschedule, [
      "--campaign",
      "spring",
      "--recipient",
      "a1",
      "--local-time",
      "2027-03-14T02:30",
      "--timezone",
      "america/new_york",
      "--now",
      "2026-11-29T12:00:00Z",
    ]);
    const input = scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input;
    assert.deepStrictEqual(
      [input.ScheduleExpression, input.ScheduleExpressionTimezone],
      ["at(2027-03-14T07:30:00)", "UTC"],
    );
  });

  it("refuses --timezone EST (IANA's fixed UTC-5, not New York's time), changing nothing (issue 33)", async () => {
    scheduler.on(GetScheduleCommand).resolves(SCHEDULE as any);
    await assert.rejects(
      run(reschedule, [
        ...["--campaign", "spring", "--recipient", "a1", "--local-time", "2027-07-15T09:00", "--timezone", "EST"],
        ...["--now", "2026-11-29T12:00:00Z"],
      ]),
      (e: unknown) => e instanceof UsageError && /--timezone EST: .*America\/New_York/.test(e.message),
    );
    assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
  });

  it("finds an odd id's schedule by the planner's name, for the given step", async () => {
    scheduler.on(GetScheduleCommand).resolves(SCHEDULE as any);
    await run(reschedule, [
      "--campaign",
      "spring",
      "--recipient",
      "a 4/ü",
      "--step-number",
      "2",
      "--local-time",
      "2026-12-05T09:00",
      "--now",
      "2026-11-29T12:00:00Z",
    ]);
    assert.deepStrictEqual(scheduler.commandCalls(GetScheduleCommand)[0].args[0].input, {
      Name: scheduleName("a 4/ü", 2),
      GroupName: "campaign-spring",
    });
    assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input.Name, scheduleName("a 4/ü", 2));
  });

  it("refuses a time in the past, changing nothing", async () => {
    scheduler.on(GetScheduleCommand).resolves(SCHEDULE as any);
    await assert.rejects(
      run(reschedule, [
        "--campaign",
        "spring",
        "--recipient",
        "a1",
        "--local-time",
        "2026-11-29T06:00",
        "--now",
        "2026-11-29T12:00:00Z",
      ]),
      (e: unknown) => e instanceof UsageError && /is less than a minute from now/.test(e.message),
    );
    assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
  });

  describe("a one-time send that may have fired is not moved (issue 22, item 6; promises.ts mayHaveFired)", () => {
    // SCHEDULE is at(2026-12-01T09:00:00) America/New_York = 14:00Z (EST, UTC-5; Python zoneinfo), window 7 minutes.
    const moveAtNow = (now: string, at = "2026-12-02T10:30") =>
      run(reschedule, ["--campaign", "spring", "--recipient", "a1", "--local-time", at, "--now", now]);
    for (const [now, why] of [
      ["2026-12-01T14:05:00Z", "5 minutes into its 7-minute window"],
      ["2026-12-01T14:30:00Z", "after its window"],
      ["2026-12-01T13:59:01Z", "59 s before its time, inside the one-minute lead"],
    ])
      it(`refuses (exit 1), changing nothing: now ${now}, ${why}`, async () => {
        scheduler.on(GetScheduleCommand).resolves(SCHEDULE as any);
        scheduler.on(UpdateScheduleCommand).resolves({});
        await assert.rejects(
          moveAtNow(now),
          (e: unknown) =>
            e instanceof FindingsError &&
            e.message ===
              "campaign spring: schedule a1-1 (recipient a1, step 1) is due at 2026-12-01T14:00:00.000Z (at(2026-12-01T09:00:00) America/New_York) and may have fired already (its time has passed, its window is open, or it is due within a minute): not moved, so the recipient cannot get it twice",
        );
        assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
      });

    it("moves it when it is due a minute or more from now (13:59:00Z)", async () => {
      scheduler.on(GetScheduleCommand).resolves(SCHEDULE as any);
      scheduler.on(UpdateScheduleCommand).resolves({});
      const r = await moveAtNow("2026-12-01T13:59:00Z");
      assert.strictEqual(r.code, 0);
      assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 1);
    });

    it("refuses a new time less than a minute away (exit 2): 07:00 New York = 12:00Z, 30 s after now", async () => {
      scheduler.on(GetScheduleCommand).resolves(SCHEDULE as any);
      await assert.rejects(
        moveAtNow("2026-11-29T11:59:30Z", "2026-11-29T07:00"),
        (e: unknown) =>
          e instanceof UsageError &&
          e.message ===
            "--local-time: 2026-11-29T12:00:00.000Z (America/New_York) is less than a minute from now (2026-11-29T11:59:30.000Z); a schedule can only move to a time at least a minute ahead",
      );
      assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
    });
  });

  describe("a move keeps the recipient's steps in order and 60 minutes apart (hostile review; promises.ts droppedSends)", () => {
    // a1-1 at(2026-12-01T09:00:00) = 14:00Z, a1-2 at(2026-12-04T09:00:00) = 12-04T14:00Z, America/New_York (EST;
    // python3 zoneinfo). ListSchedules by the recipient's name prefix also finds another recipient's (a1-2-1: id
    // "a1-2") and a name that is no step of a1 (a1-x), on two pages.
    const STEP2 = { ...SCHEDULE, Name: "a1-2", ScheduleExpression: "at(2026-12-04T09:00:00)" };
    function twoSteps() {
      scheduler.reset();
      scheduler
        .on(ListSchedulesCommand, { GroupName: "campaign-spring", NamePrefix: "a1-", NextToken: undefined })
        .resolves({ Schedules: [{ Name: "a1-1" }, { Name: "a1-2-1" }] as any, NextToken: "p2" })
        .on(ListSchedulesCommand, { GroupName: "campaign-spring", NamePrefix: "a1-", NextToken: "p2" })
        .resolves({ Schedules: [{ Name: "a1-x" }, { Name: "a1-2" }] as any });
      scheduler.on(GetScheduleCommand).rejects(new Error("GetSchedule of a name that is no step of a1"));
      scheduler.on(GetScheduleCommand, { Name: "a1-1", GroupName: "campaign-spring" }).resolves(SCHEDULE as any);
      scheduler.on(GetScheduleCommand, { Name: "a1-2", GroupName: "campaign-spring" }).resolves(STEP2 as any);
      scheduler.on(UpdateScheduleCommand).resolves({});
    }
    const move = (step: string, at: string) =>
      run(reschedule, [
        "--campaign",
        "spring",
        "--recipient",
        "a1",
        "--step-number",
        step,
        "--local-time",
        at,
        "--now",
        "2026-11-29T12:00:00Z",
      ]);
    const refused = async (step: string, at: string, message: string) => {
      twoSteps();
      await assert.rejects(move(step, at), (e: unknown) => e instanceof FindingsError && e.message === message);
      assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
    };

    it("refuses step 1 moved after step 2 (exit 1, naming step 2 and its time)", () =>
      refused(
        "1",
        "2026-12-05T10:00",
        "campaign spring: schedule a1-1 (recipient a1, step 1) moved to 2026-12-05T15:00:00.000Z would come after step 2 (a1-2, due 2026-12-04T14:00:00.000Z: at(2026-12-04T09:00:00) America/New_York): not moved, so the recipient's steps stay in order",
      ));
    it("refuses step 2 moved to 10 minutes after step 1", () =>
      refused(
        "2",
        "2026-12-01T09:10",
        "campaign spring: schedule a1-2 (recipient a1, step 2) moved to 2026-12-01T14:10:00.000Z would come within 60 minutes of step 1 (a1-1, due 2026-12-01T14:00:00.000Z: at(2026-12-01T09:00:00) America/New_York): not moved, so the recipient never gets two sends within 60 minutes",
      ));
    it("refuses step 2 moved before step 1", () =>
      refused(
        "2",
        "2026-11-30T12:00",
        "campaign spring: schedule a1-2 (recipient a1, step 2) moved to 2026-11-30T17:00:00.000Z would come before step 1 (a1-1, due 2026-12-01T14:00:00.000Z: at(2026-12-01T09:00:00) America/New_York): not moved, so the recipient's steps stay in order",
      ));
    it("refuses 59 minutes after step 1, moves at 60 (14:59Z, 15:00Z)", async () => {
      await refused(
        "2",
        "2026-12-01T09:59",
        "campaign spring: schedule a1-2 (recipient a1, step 2) moved to 2026-12-01T14:59:00.000Z would come within 60 minutes of step 1 (a1-1, due 2026-12-01T14:00:00.000Z: at(2026-12-01T09:00:00) America/New_York): not moved, so the recipient never gets two sends within 60 minutes",
      );
      twoSteps();
      const r = await move("2", "2026-12-01T10:00");
      assert.strictEqual(r.code, 0);
      assert.strictEqual(
        (scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input as any).ScheduleExpression,
        "at(2026-12-01T10:00:00)",
      );
      // Read with bounded calls: two pages of names, then GetSchedule of a1-2 and of a1-1 only.
      assert.strictEqual(scheduler.commandCalls(ListSchedulesCommand).length, 2);
      assert.deepStrictEqual(
        scheduler
          .commandCalls(GetScheduleCommand)
          .map((c) => c.args[0].input.Name)
          .sort(),
        ["a1-1", "a1-2"],
      );
    });
    it("moves step 1 earlier, still before step 2 and 60 minutes from it", async () => {
      twoSteps();
      const r = await move("1", "2026-12-02T10:30");
      assert.strictEqual(r.code, 0);
      assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 1);
    });
  });

  it("refuses a time past 9999-12-31 in UTC or the schedule's zone, which no schedule can write, changing nothing", async () => {
    scheduler.on(GetScheduleCommand).resolves({ ...SCHEDULE, ScheduleExpressionTimezone: "Etc/GMT+12" } as any);
    // 9999-12-31T23:00 at UTC-12 is 10000-01-01T11:00Z.
    await assert.rejects(
      run(reschedule, [
        "--campaign",
        "spring",
        "--recipient",
        "a1",
        "--local-time",
        "9999-12-31T23:00",
        "--now",
        "2026-11-29T12:00:00Z",
      ]),
      (e: unknown) => e instanceof UsageError && /would move past 9999-12-31/.test(e.message),
    );
    assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
  });

  it("a missing schedule is a clear message (exit 1)", async () => {
    scheduler.on(GetScheduleCommand).rejects(notFound("Schedule a9-1"));
    await assert.rejects(
      run(reschedule, [
        "--campaign",
        "spring",
        "--recipient",
        "a9",
        "--local-time",
        "2026-12-02T10:30",
        "--now",
        "2026-11-29T12:00:00Z",
      ]),
      (e: unknown) =>
        e instanceof FindingsError &&
        e.message ===
          'campaign spring: no schedule "a9-1" (recipient a9, step 1) in campaign-spring: already sent, removed, or never planned (nor an entry of any bulk schedule of the campaign)',
    );
  });

  it("--remove deletes exactly that schedule", async () => {
    scheduler.on(DeleteScheduleCommand).resolves({});
    const r = await run(reschedule, ["--campaign", "spring", "--recipient", "a1", "--step-number", "2", "--remove"]);
    assert.strictEqual(r.code, 0);
    assert.deepStrictEqual(
      scheduler.commandCalls(DeleteScheduleCommand).map((c) => c.args[0].input),
      [{ Name: "a1-2", GroupName: "campaign-spring" }],
    );
    assert.strictEqual(r.stdout, "Removed spring/a1-2: recipient a1 will not get step 2.\n");
  });

  it("--remove of a missing schedule is a clear message", async () => {
    scheduler.on(DeleteScheduleCommand).rejects(notFound("Schedule a1-2"));
    await assert.rejects(
      run(reschedule, ["--campaign", "spring", "--recipient", "a1", "--step-number", "2", "--remove"]),
      /no schedule "a1-2" \(recipient a1, step 2\) in campaign-spring/,
    );
  });

  it("a schedule in a zone this Node does not know: one line naming the schedule and the zone (exit 1)", async () => {
    scheduler.on(GetScheduleCommand).resolves({ ...SCHEDULE, ScheduleExpressionTimezone: "Mars/Olympus_Mons" } as any);
    await assert.rejects(
      run(reschedule, [
        "--campaign",
        "spring",
        "--recipient",
        "a1",
        "--local-time",
        "2026-12-02T10:30",
        "--now",
        "2026-11-29T12:00:00Z",
      ]),
      (e: unknown) =>
        e instanceof FindingsError &&
        e.message ===
          'campaign spring: schedule a1-1 (recipient a1, step 1) is in time zone "Mars/Olympus_Mons", which this Node\'s time zone data does not know; give --timezone with a zone it knows, or update Node',
    );
    assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
  });

  it("needs exactly one of --at and --remove", async () => {
    await assert.rejects(
      run(reschedule, ["--campaign", "spring", "--recipient", "a1"]),
      /give --at INSTANT or --local-time YYYY-MM-DDTHH:MM to move the send, or --remove/,
    );
    await assert.rejects(
      run(reschedule, ["--campaign", "spring", "--recipient", "a1", "--remove", "--local-time", "2026-12-02T10:30"]),
      UsageError,
    );
  });
});

describe("campaign-status", () => {
  useMocks();
  function stack(count: number, extra: { Name: string; GroupName: string; State: "ENABLED" }[] = []) {
    scheduler.on(GetScheduleGroupCommand).resolves({ State: "ACTIVE" });
    const all = Array.from({ length: count }, (_, i) => ({
      Name: `r${i}-1`,
      GroupName: "campaign-spring",
      State: (i % 10 ? "ENABLED" : "DISABLED") as "ENABLED" | "DISABLED",
    })).concat(extra);
    scheduler
      .on(ListSchedulesCommand, { GroupName: "campaign-spring", MaxResults: 100, NextToken: undefined })
      .resolves({ Schedules: all.slice(0, 100), NextToken: count > 100 ? "p2" : undefined });
    scheduler
      .on(ListSchedulesCommand, { GroupName: "campaign-spring", MaxResults: 100, NextToken: "p2" })
      .resolves({ Schedules: all.slice(100) });
    scheduler.on(GetScheduleCommand).callsFake((input: any) => {
      const i = Number(/^r(\d+)/.exec(input.Name)![1]);
      return {
        Name: input.Name,
        ScheduleExpression: `at(2026-12-01T0${i % 2 ? 9 : 8}:30:00)`,
        ScheduleExpressionTimezone: "America/New_York",
      };
    });
    sfn.on(ListExecutionsCommand).resolves({
      executions: [
        {
          executionArn: execArn("spring-aaa"),
          name: "spring-aaa",
          status: "SUCCEEDED",
          stateMachineArn: SM,
          startDate: new Date("2026-11-29T10:00:00Z"),
        },
      ],
    });
    sfn
      .on(DescribeExecutionCommand)
      .resolves({ status: "SUCCEEDED", input: JSON.stringify({ campaign_id: "spring" }) } as any);
    sfn.on(ListMapRunsCommand).resolves({
      mapRuns: [
        {
          mapRunArn: "arn:aws:states:us-east-1:123456789012:mapRun:sendtime-fanout-dev/FanOut:x",
          executionArn: execArn("spring-aaa"),
          stateMachineArn: SM,
          startDate: new Date(),
        },
      ],
    });
    sfn.on(DescribeMapRunCommand).resolves({
      itemCounts: {
        total: count,
        succeeded: count - 3,
        failed: 3,
        pending: 0,
        running: 0,
        timedOut: 0,
        aborted: 0,
        resultsWritten: count,
      },
    } as any);
    sqs
      .on(GetQueueAttributesCommand, {
        QueueUrl: DLQ,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      })
      .resolves({ Attributes: { ApproximateNumberOfMessages: "2", ApproximateNumberOfMessagesNotVisible: "1" } });
  }

  it("does not count the campaign's housekeeping schedule (it deletes the group; it sends nothing)", async () => {
    stack(150, [{ Name: "sendtime.cleanup", GroupName: "campaign-spring", State: "ENABLED" }]);
    const s = JSON.parse((await run(status, ["--campaign", "spring", "--json"])).stdout);
    assert.deepStrictEqual(s.schedules, { total: 150, byState: { DISABLED: 15, ENABLED: 135 } });
    assert.strictEqual(scheduler.commandCalls(GetScheduleCommand).length, 150);
  });

  it("counts every page of schedules by state, reads each when few, and shows fan-outs and the DLQ", async () => {
    stack(150);
    const r = await run(status, ["--campaign", "spring", "--json"]);
    const s = JSON.parse(r.stdout);
    assert.strictEqual(scheduler.commandCalls(ListSchedulesCommand).length, 2);
    assert.deepStrictEqual(s.schedules, { total: 150, byState: { DISABLED: 15, ENABLED: 135 } });
    assert.strictEqual(scheduler.commandCalls(GetScheduleCommand).length, 150);
    assert.deepStrictEqual(s.nextSends, {
      sampled: 150,
      estimated: false,
      recurring: 0,
      byHour: [
        { hour: "2026-12-01T13:00Z", count: 75 },
        { hour: "2026-12-01T14:00Z", count: 75 },
      ],
    });
    assert.deepStrictEqual(
      s.executions.map((e: any) => [e.name, e.status, e.items.failed]),
      [["spring-aaa", "SUCCEEDED", 3]],
    );
    assert.deepStrictEqual(s.deadLetterQueue, { url: DLQ, visible: 2, inFlight: 1 });
  });

  it("a plan launched in parts (one execution per ItemReader object): each part's fan-out with its own Map Run counts", async () => {
    stack(10);
    const parts = [
      { name: "spring-aaa", status: "SUCCEEDED", total: 6, succeeded: 6 },
      { name: "spring-aaa-p2", status: "RUNNING", total: 4, succeeded: 1 },
    ];
    sfn.on(ListExecutionsCommand).resolves({
      executions: parts.map((p) => ({
        executionArn: execArn(p.name),
        name: p.name,
        status: p.status as any,
        stateMachineArn: SM,
        startDate: new Date(),
      })),
    });
    sfn.on(DescribeExecutionCommand).callsFake((input: any) => ({
      status: parts.find((p) => execArn(p.name) === input.executionArn)!.status,
      input: JSON.stringify({ campaign_id: "spring" }),
    }));
    sfn.on(ListMapRunsCommand).callsFake((input: any) => ({
      mapRuns: [{ mapRunArn: `${input.executionArn}/FanOut:m`, executionArn: input.executionArn }],
    }));
    sfn.on(DescribeMapRunCommand).callsFake((input: any) => {
      const p = parts.find((q) => input.mapRunArn === `${execArn(q.name)}/FanOut:m`)!;
      const pending = p.total - p.succeeded;
      return {
        itemCounts: { total: p.total, succeeded: p.succeeded, failed: 0, pending, running: 0, timedOut: 0, aborted: 0 },
      };
    });
    const s = JSON.parse((await run(status, ["--campaign", "spring", "--json"])).stdout);
    assert.deepStrictEqual(
      s.executions.map((e: any) => [e.name, e.status, e.items.succeeded, e.items.total]),
      [
        ["spring-aaa", "SUCCEEDED", 6, 6],
        ["spring-aaa-p2", "RUNNING", 1, 4],
      ],
    );
  });

  it("samples GetSchedule when there are more schedules than --sample, and says it estimates", async () => {
    stack(150);
    const r = await run(status, ["--campaign", "spring", "--sample", "20"]);
    assert.strictEqual(scheduler.commandCalls(GetScheduleCommand).length, 20);
    assert.match(r.stdout, /pending schedules: 150 \(135 ENABLED, 15 DISABLED\)/);
    assert.match(r.stdout, /next sends per UTC hour \(estimated from 20 sampled\)/);
    assert.match(r.stdout, /spring-aaa {2}SUCCEEDED {2}147\/150 rows scheduled, 3 failed, 0 to go/);
    assert.match(r.stdout, /dead-letter queue \(all campaigns\): 2 messages waiting, 1 in flight/);
  });

  it("schedules in a zone this Node does not know are counted apart and named, the rest still reported", async () => {
    stack(150);
    scheduler.on(GetScheduleCommand).callsFake((input: any) => ({
      Name: input.Name,
      ScheduleExpression: "at(2026-12-01T09:30:00)",
      ScheduleExpressionTimezone: input.Name === "r7-1" ? "Mars/Olympus_Mons" : "America/New_York",
    }));
    const r = await run(status, ["--campaign", "spring"]);
    assert.strictEqual(r.code, 0);
    assert.match(r.stdout, /2026-12-01T14:00Z +149 /);
    assert.match(
      r.stdout,
      /  1 sampled schedule is in a time zone this Node does not know \(r7-1 in "Mars\/Olympus_Mons"\): not counted above\n/,
    );
  });

  it("a campaign without a group has no pending schedules", async () => {
    scheduler.on(GetScheduleGroupCommand).rejects(notFound("campaign-gone"));
    sfn.on(ListExecutionsCommand).resolves({ executions: [] });
    sqs.on(GetQueueAttributesCommand).resolves({ Attributes: {} });
    const r = await run(status, ["--campaign", "gone"]);
    assert.match(
      r.stdout,
      /^Campaign gone: group campaign-gone does not exist\n  state: live\n  pending schedules: 0\n/,
    );
    assert.strictEqual(scheduler.commandCalls(ListSchedulesCommand).length, 0);
  });
});

describe("reschedule over the real wire format, against a local endpoint (AWS_ENDPOINT_URL_SCHEDULER)", function () {
  this.timeout(30_000);
  it("GETs the schedule and PUTs it back whole, with the new expression", async () => {
    const requests: { method: string; url: string; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        requests.push({ method: req.method!, url: req.url!, body });
        res.setHeader("content-type", "application/json");
        if (req.method === "GET" && req.url!.startsWith("/schedules?"))
          res.end(JSON.stringify({ Schedules: [{ Name: "a1-1" }] }));
        else if (req.method === "GET")
          res.end(
            JSON.stringify({
              ...SCHEDULE,
              StartDate: 1793491200,
              EndDate: 1798761600,
              CreationDate: 1795946400,
              LastModificationDate: 1795946400,
            }),
          );
        else res.end(JSON.stringify({ ScheduleArn: SCHEDULE.Arn }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const endpoint = `http://127.0.0.1:${(server.address() as any).port}`;
    const child = spawn(
      process.execPath,
      [
        require.resolve("ts-node/dist/bin"),
        "--transpile-only",
        "scripts/reschedule.ts",
        "--campaign",
        "spring",
        "--recipient",
        "a1",
        "--local-time",
        "2026-12-02T10:30",
        "--now",
        "2026-11-29T12:00:00Z",
        "--region",
        "us-east-1",
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          AWS_ENDPOINT_URL_SCHEDULER: endpoint,
          AWS_ACCESS_KEY_ID: "test",
          AWS_SECRET_ACCESS_KEY: "test",
        },
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise((r) => child.on("exit", r));
    server.close();
    assert.strictEqual(code, 0, stderr);
    assert.deepStrictEqual(
      requests.map((q) => `${q.method} ${q.url}`),
      [
        "GET /schedules/a1-1?groupName=campaign-spring",
        "GET /schedules?MaxResults=100&NamePrefix=a1-&ScheduleGroup=campaign-spring",
        "PUT /schedules/a1-1",
      ],
    );
    const put = JSON.parse(requests[2].body);
    assert.strictEqual(put.ScheduleExpression, "at(2026-12-02T10:30:00)");
    assert.strictEqual(put.ScheduleExpressionTimezone, "America/New_York");
    for (const k of [
      "GroupName",
      "FlexibleTimeWindow",
      "ActionAfterCompletion",
      "State",
      "Description",
      "KmsKeyArn",
      "StartDate",
      "EndDate",
      "Target",
    ])
      assert.ok(k in put, k);
    assert.deepStrictEqual(put.Target, SCHEDULE.Target);
    assert.ok(!("Arn" in put) && !("CreationDate" in put));
  });
});

describe("operator scripts against a misbehaving endpoint on 127.0.0.1 (issue 10, items 1, 2, 6, 8)", function () {
  this.timeout(20_000);
  const realHeartbeat = clock.heartbeatMs;
  let endpoint: Endpoint | undefined;
  let ledger: LocalLedger;
  useFakeWaits();
  before(async () => {
    clock.heartbeatMs = 100;
    ledger = await startLedger([], LEDGER);
  });
  after(async () => {
    clock.heartbeatMs = realHeartbeat;
    await ledger.close();
  });
  afterEach(async () => endpoint?.close());
  /** Scheduler, Step Functions and SQS at `url`; the ledger in dynalite, or at `url` too (`ledgerToo`). */
  const everyService = (url: string, ledgerToo = false) => ({
    AWS_ENDPOINT_URL_SCHEDULER: url,
    AWS_ENDPOINT_URL_SFN: url,
    AWS_ENDPOINT_URL_SQS: url,
    AWS_ENDPOINT_URL_DYNAMODB: ledgerToo ? url : ledger.url,
  });
  const groupMissing: Answer = {
    status: 404,
    headers: { "x-amzn-errortype": "ResourceNotFoundException" },
    json: { Message: "Schedule group campaign-spring does not exist." },
  };

  it("an endpoint that never answers: cancel ends at --timeout-seconds, exit 1, saying what may still send, with progress", async () => {
    endpoint = await startEndpoint(() => "hang");
    const started = Date.now();
    const r = await withEnv(everyService(endpoint.url, true), () =>
      run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.5"]),
    );
    const seconds = (Date.now() - started) / 1000;
    assert.ok(seconds >= 0.45 && seconds < 2.5, `took ${seconds} s`);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stdout,
      /- fan-outs: could not list the running fan-outs, so any of them may still be creating schedules/,
    );
    assert.match(r.stdout, /- schedule group campaign-spring: state unknown, its pending schedules may still fire/);
    assert.match(
      r.stdout,
      /problem: campaign spring: ListExecutions RUNNING on .*: no result within the command's time limit of 0.5 s \(--timeout-seconds\)/,
    );
    assert.match(r.stdout, /- campaign state: not set to cancelled, so sender executions already started keep sending/);
    assert.match(
      r.stderr,
      /still waiting for campaign spring: UpdateItem campaign#spring in ledger-0a1b2c3 .* \(\d s\)/,
    );
  });

  it("an endpoint that never answers: campaign-status ends at --timeout-seconds with one line naming the call", async () => {
    endpoint = await startEndpoint(() => "hang");
    const started = Date.now();
    await assert.rejects(
      withEnv(everyService(endpoint.url), () => run(status, ["--campaign", "spring", "--timeout-seconds", "0.3"])),
      (e: unknown) =>
        e instanceof FindingsError &&
        e.message ===
          "campaign spring: GetScheduleGroup campaign-spring: no result within the command's time limit of 0.3 s (--timeout-seconds)",
    );
    assert.ok(Date.now() - started < 3000);
  });

  it("each HTTP request has its own timeout (HTTP_TIMEOUTS), so one hung attempt fails and is retried", async () => {
    endpoint = await startEndpoint(() => "hang");
    const timeouts = HTTP_TIMEOUTS as { requestMs: number };
    const saved = timeouts.requestMs;
    timeouts.requestMs = 300;
    try {
      await assert.rejects(
        withEnv({ ...everyService(endpoint.url), AWS_MAX_ATTEMPTS: "2" }, () =>
          run(reschedule, ["--campaign", "spring", "--recipient", "a1", "--remove", "--timeout-seconds", "10"]),
        ),
        /campaign spring: DeleteSchedule a1-1 \(recipient a1, step 1\): TimeoutError: .*300/,
      );
    } finally {
      timeouts.requestMs = saved;
    }
    assert.strictEqual(endpoint.requests.length, 2, "the first attempt timed out and the SDK retried once");
  });

  it("a NextToken that repeats is an error, not an endless listing", async () => {
    endpoint = await startEndpoint((q) => {
      if (q.url.startsWith("/schedule-groups/")) return { json: { Name: "campaign-spring", State: "ACTIVE" } };
      if (q.url.startsWith("/schedules?"))
        return { json: { Schedules: [{ Name: "a1-1", State: "ENABLED" }], NextToken: "same-token" } };
      return { status: 400, json: {} };
    });
    await assert.rejects(
      withEnv(everyService(endpoint.url), () => run(status, ["--campaign", "spring", "--timeout-seconds", "10"])),
      (e: unknown) =>
        e instanceof FindingsError &&
        e.message ===
          'campaign spring: ListSchedules in campaign-spring: the service returned page token "same-token" a second time (page 2); stopped instead of looping',
    );
    assert.strictEqual(endpoint.requests.filter((q) => q.url.startsWith("/schedules?")).length, 2);
  });

  it("an HTTP 500 without a body names the call and the status, not 'Unknown: UnknownError'", async () => {
    endpoint = await startEndpoint(() => ({ status: 500 }));
    await assert.rejects(
      withEnv({ ...everyService(endpoint.url), AWS_MAX_ATTEMPTS: "1" }, () => run(status, ["--campaign", "spring"])),
      (e: unknown) =>
        e instanceof FindingsError &&
        e.message ===
          "campaign spring: GetScheduleGroup campaign-spring: HTTP 500 with no error details in the response",
    );
  });

  it("a group the endpoint keeps ACTIVE after DeleteScheduleGroup: exit 1 at the timeout, saying it is ACTIVE", async () => {
    endpoint = await startEndpoint((q) => {
      if (q.target === "AWSStepFunctions.ListExecutions") return { json: { executions: [] } };
      if (q.url === "/schedule-groups/campaign-spring")
        return { json: q.method === "GET" ? { Name: "campaign-spring", State: "ACTIVE" } : {} };
      return { status: 400, json: {} };
    });
    const r = await withEnv(everyService(endpoint.url), () =>
      run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.5", "--poll-seconds", "1"]),
    );
    assert.strictEqual(r.code, 1);
    assert.match(r.stdout, /- schedule group campaign-spring is still ACTIVE: its pending schedules will fire/);
    assert.deepStrictEqual(
      endpoint.requests.filter((q) => q.method === "DELETE").map((q) => q.url.split("?")[0]),
      ["/schedule-groups/campaign-spring"],
    );
  });

  describe("cancel exits 0 only when no send can fire (issue 22, item 8)", () => {
    const sfnAnswers = (q: { target?: string }, running: boolean): Answer | undefined => {
      const e = { executionArn: execArn("spring-aaa"), name: "spring-aaa", stateMachineArn: SM, startDate: 1795946400 };
      if (q.target === "AWSStepFunctions.ListExecutions")
        return { json: { executions: running ? [{ ...e, status: "RUNNING" }] : [] } };
      if (q.target === "AWSStepFunctions.DescribeExecution")
        return { json: { ...e, status: "RUNNING", input: JSON.stringify({ campaign_id: "spring" }) } };
      if (q.target === "AWSStepFunctions.StopExecution") return { json: { stopDate: 1795946500 } };
      return undefined;
    };

    it("a group in a state it does not know (not ACTIVE, not DELETING) is deleted too, and exit 1 while it stays", async () => {
      endpoint = await startEndpoint((q) => {
        const sfnAnswer = sfnAnswers(q, false);
        if (sfnAnswer) return sfnAnswer;
        if (q.url.split("?")[0] === "/schedule-groups/campaign-spring")
          return { json: q.method === "GET" ? { Name: "campaign-spring", State: "SUSPENDED" } : {} };
        return { status: 400, json: {} };
      });
      const r = await withEnv(everyService(endpoint.url), () =>
        run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.5", "--poll-seconds", "1", "--json"]),
      );
      assert.strictEqual(r.code, 1, r.stdout);
      assert.deepStrictEqual(
        endpoint.requests.filter((q) => q.method === "DELETE").map((q) => q.url.split("?")[0]),
        ["/schedule-groups/campaign-spring"],
      );
      const report = JSON.parse(r.stdout);
      assert.strictEqual(report.groupAfter, "SUSPENDED");
      assert.strictEqual(
        report.stillThere[1],
        "schedule group campaign-spring is still there (state SUSPENDED): its pending schedules may still fire",
      );
      assert.match(report.stillThere[0], /^sender executions .* may still be sending until /);
    });

    it("a group the fan-out creates after cancel's first read is read again after the stop, and deleted", async () => {
      let group: "absent" | "ACTIVE" | "gone" = "absent";
      endpoint = await startEndpoint((q) => {
        if (q.target === "AWSStepFunctions.StopExecution") group = group === "absent" ? "ACTIVE" : group; // created meanwhile
        const sfnAnswer = sfnAnswers(q, true);
        if (sfnAnswer) return sfnAnswer;
        if (q.url.split("?")[0] === "/schedule-groups/campaign-spring") {
          if (q.method === "DELETE") {
            group = "gone";
            return { json: {} };
          }
          return group === "ACTIVE" ? { json: { Name: "campaign-spring", State: "ACTIVE" } } : groupMissing;
        }
        return { status: 400, json: {} };
      });
      const r = await withEnv(everyService(endpoint.url), () =>
        run(cancel, ["--campaign", "spring", "--timeout-seconds", "60"]),
      );
      assert.strictEqual(r.code, 0, r.stdout);
      assert.deepStrictEqual(
        endpoint.requests.map((q) => q.target ?? `${q.method} ${q.url.split("?")[0]}`),
        [
          "AWSStepFunctions.ListExecutions",
          "AWSStepFunctions.DescribeExecution",
          "GET /schedule-groups/campaign-spring",
          "AWSStepFunctions.StopExecution",
          "GET /schedule-groups/campaign-spring",
          "DELETE /schedule-groups/campaign-spring",
          "GET /schedule-groups/campaign-spring",
        ],
      );
      assert.match(
        r.stdout,
        /Stopped 1 fan-out \(spring-aaa\)\.\n  Schedule group campaign-spring deleted\.\n  Nothing of campaign spring can send any more since /,
      );
    });
  });

  it("AWS_ENDPOINT_URL_SQS is honoured with the stack's real https://sqs.<region>.amazonaws.com/… queue URL", async () => {
    endpoint = await startEndpoint((q) =>
      q.target === "AmazonSQS.GetQueueAttributes"
        ? { json: { Attributes: { ApproximateNumberOfMessages: "4", ApproximateNumberOfMessagesNotVisible: "0" } } }
        : groupMissing,
    );
    const dlqOnly = path.join(tmp, "dlq-only.json");
    fs.writeFileSync(dlqOnly, JSON.stringify({ deadLetterQueueUrl: DLQ, region: "us-east-1" }));
    let stdout = "";
    const code = await withEnv(everyService(endpoint.url), () =>
      status(["--campaign", "spring", "--outputs", dlqOnly], { out: (t) => (stdout += t), err: () => {} }),
    );
    assert.strictEqual(code, 0);
    assert.match(stdout, /dead-letter queue \(all campaigns\): 4 messages waiting, 0 in flight/);
    const sqsCall = endpoint.requests.find((q) => q.target === "AmazonSQS.GetQueueAttributes")!;
    assert.strictEqual(JSON.parse(sqsCall.body).QueueUrl, DLQ);
  });

  it("a failing DLQ read degrades that line only: the rest of the report is printed, exit 1", async () => {
    endpoint = await startEndpoint((q) =>
      q.target === "AmazonSQS.GetQueueAttributes"
        ? {
            status: 400,
            json: { __type: "com.amazonaws.sqs#QueueDoesNotExist", message: "The specified queue does not exist." },
          }
        : groupMissing,
    );
    const dlqOnly = path.join(tmp, "dlq-only.json");
    fs.writeFileSync(dlqOnly, JSON.stringify({ deadLetterQueueUrl: DLQ, region: "us-east-1" }));
    let stdout = "";
    const code = await withEnv(everyService(endpoint.url), () =>
      status(["--campaign", "spring", "--outputs", dlqOnly], { out: (t) => (stdout += t), err: () => {} }),
    );
    assert.strictEqual(code, 1);
    assert.match(
      stdout,
      /^Campaign spring: group campaign-spring does not exist\n  state: not known \(no ledgerTableName output: the stack predates the occurrence ledger\)\n  pending schedules: 0\n/,
    );
    assert.match(
      stdout,
      /dead-letter queue \(all campaigns\): could not be read: GetQueueAttributes https:\/\/sqs\.us-east-1\.amazonaws\.com\/.*: QueueDoesNotExist: The specified queue does not exist\. \(HTTP 400\)/,
    );
  });
});
