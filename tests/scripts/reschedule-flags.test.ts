/**
 * reschedule's flags that mean what they mean everywhere (issue 35): --at is an instant with an offset (as in
 * launch-campaign), a local wall-clock time is --local-time, and --dry-run says what it would move or remove and
 * changes nothing. Expected local times are worked out by hand from the zones' offsets.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from "@aws-sdk/client-scheduler";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";
import { main as reschedule } from "../../scripts/reschedule";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-reschedule-"));
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(outputs, JSON.stringify({ region: "us-east-1" }));

const SCHEDULE = {
  Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/a1-1",
  Name: "a1-1",
  GroupName: "campaign-spring",
  ScheduleExpression: "at(2026-12-01T09:00:00)",
  ScheduleExpressionTimezone: "America/New_York",
  FlexibleTimeWindow: { Mode: "OFF" },
  ActionAfterCompletion: "DELETE",
  State: "ENABLED",
  Target: {
    Arn: "arn:aws:scheduler:::aws-sdk:sfn:startExecution",
    RoleArn: "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b",
    Input: "{}",
  },
};

const NOW = ["--now", "2026-11-29T12:00:00Z"];

async function run(args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await reschedule(["--campaign", "spring", "--recipient", "a1", ...args, "--outputs", outputs], {
    out: (t: string) => (stdout += t),
    err: (t: string) => (stderr += t),
  });
  return { code, stdout, stderr };
}

describe("reschedule --at INSTANT, --local-time and --dry-run", () => {
  let scheduler: AwsClientStub<SchedulerClient>;
  beforeEach(() => {
    scheduler = mockClient(SchedulerClient);
    scheduler.on(ListSchedulesCommand).resolves({ Schedules: [] });
    scheduler.on(GetScheduleCommand, { Name: "a1-1", GroupName: "campaign-spring" }).resolves(SCHEDULE as never);
    scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: SCHEDULE.Arn });
  });
  afterEach(() => scheduler.restore());

  it("--at an instant with Z: written at its local time in the schedule's zone (15:30Z = 10:30 in New York, EST)", async () => {
    const r = await run(["--at", "2026-12-02T15:30:00Z", ...NOW]);
    assert.strictEqual(r.code, 0, r.stderr);
    const input = scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input;
    assert.deepStrictEqual(
      [input.ScheduleExpression, input.ScheduleExpressionTimezone],
      ["at(2026-12-02T10:30:00)", "America/New_York"],
    );
  });

  it("--at with an offset names one instant: the second 01:30 of New York's fall-back night is written in UTC", async () => {
    // 2027-11-07: New York goes from EDT (-4) to EST (-5) at 02:00; 01:30-05:00 is 06:30Z, the second 01:30 that night.
    const r = await run(["--at", "2027-11-07T01:30-05:00", ...NOW]);
    assert.strictEqual(r.code, 0, r.stderr);
    const input = scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input;
    assert.deepStrictEqual(
      [input.ScheduleExpression, input.ScheduleExpressionTimezone],
      ["at(2027-11-07T06:30:00)", "UTC"],
    );
  });

  it("--at without an offset is refused as everywhere (exit 2), and a local time is --local-time's", async () => {
    await assert.rejects(
      run(["--at", "2026-12-02T10:30", ...NOW]),
      /^Error: --at 2026-12-02T10:30: expected an ISO 8601 instant with Z or an offset, .* \(a time without an offset is ambiguous\)$/,
    );
    await assert.rejects(
      run(["--at", "2026-12-02T15:30:00Z", "--local-time", "2026-12-02T10:30", ...NOW]),
      /^Error: --at and --local-time: give --at INSTANT or --local-time/,
    );
    const r = await run(["--local-time", "2026-12-02T10:30", ...NOW]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(
      scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input.ScheduleExpression,
      "at(2026-12-02T10:30:00)",
    );
  });

  it("--dry-run says what it would move, reads the schedule, and writes nothing", async () => {
    const r = await run(["--at", "2026-12-02T15:30:00Z", "--dry-run", ...NOW]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
    assert.strictEqual(scheduler.commandCalls(GetScheduleCommand).length, 1);
    assert.strictEqual(
      r.stdout,
      "Dry run: would have moved spring/a1-1 from at(2026-12-01T09:00:00) America/New_York to at(2026-12-02T10:30:00) America/New_York (2026-12-02T15:30:00.000Z).\n" +
        "  Nothing changed; not sent: UpdateSchedule campaign-spring/a1-1.\n",
    );
    const json = JSON.parse((await run(["--at", "2026-12-02T15:30:00Z", "--dry-run", "--json", ...NOW])).stdout);
    assert.strictEqual(json.dryRun, true);
    assert.deepStrictEqual(json.notSent, ["UpdateSchedule campaign-spring/a1-1"]);
    assert.strictEqual(json.to.expression, "at(2026-12-02T10:30:00)");
  });

  it("--remove --dry-run deletes nothing, and still finds a schedule that is not there", async () => {
    scheduler.on(DeleteScheduleCommand).resolves({});
    const r = await run(["--remove", "--dry-run", ...NOW]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(scheduler.commandCalls(DeleteScheduleCommand).length, 0);
    assert.match(r.stdout, /^Dry run: would have removed spring\/a1-1: recipient a1 will not get step 1\.\n/);
    // A schedule that does not exist: the dry run's GetSchedule finds it missing, as a real DeleteSchedule would.
    scheduler
      .on(GetScheduleCommand, { Name: "a1-1", GroupName: "campaign-spring" })
      .rejects(Object.assign(new Error("Schedule a1-1 does not exist."), { name: "ResourceNotFoundException" }));
    await assert.rejects(run(["--remove", "--dry-run", ...NOW]));
    assert.strictEqual(scheduler.commandCalls(DeleteScheduleCommand).length, 0);
  });
});
