/**
 * The operator scripts on recurring schedules (launch-campaign --every): reschedule moves every occurrence to another
 * local time on the same days up to the same last day (in a new zone too), never twice on one local day; campaign-status
 * counts each at its next occurrence, in its zone.
 * Expected instants are worked out by hand (offsets named in each comment) or with luxon.
 */
import * as assert from "assert";
import {
  GetScheduleCommand,
  GetScheduleGroupCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from "@aws-sdk/client-scheduler";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";
import { DateTime } from "luxon";
import { main as status } from "../../scripts/campaign-status";
import { main as reschedule } from "../../scripts/reschedule";
import { startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { runMain } from "../helpers/cli";

const DIGEST = {
  Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-digest/par-1",
  Name: "par-1",
  GroupName: "campaign-digest",
  ScheduleExpression: "cron(0 9 ? * MON,THU *)",
  ScheduleExpressionTimezone: "Europe/Paris",
  FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: 3 },
  ActionAfterCompletion: "DELETE",
  State: "ENABLED",
  StartDate: new Date("2026-11-30T12:05:01Z"),
  EndDate: new Date("2027-03-31T22:00:00Z"),
  CreationDate: new Date("2026-11-30T12:00:00Z"),
  LastModificationDate: new Date("2026-11-30T12:00:00Z"),
  Target: {
    Arn: "arn:aws:scheduler:::aws-sdk:sesv2:sendEmail",
    RoleArn: "arn:aws:iam::123456789012:role/scheduler-target-role",
    Input: JSON.stringify({ FromEmailAddress: "news@example.com", Destination: { ToAddresses: ["par@example.com"] } }),
    RetryPolicy: { MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 5 },
    DeadLetterConfig: { Arn: "arn:aws:sqs:us-east-1:123456789012:dlq" },
  },
} as const;
const region = ["--region", "us-east-1"];

describe("operator scripts on recurring schedules", () => {
  let scheduler: AwsClientStub<SchedulerClient>;
  before(() => (scheduler = mockClient(SchedulerClient)));
  beforeEach(() => scheduler.reset());
  after(() => scheduler.restore());

  describe("reschedule --at HH:MM", () => {
    const move = (...args: string[]) =>
      runMain(reschedule, [
        "--campaign",
        "digest",
        "--recipient",
        "par",
        ...args,
        "--now",
        "2026-12-10T12:00:00Z",
        ...region,
      ]);

    /** One move of a recurring schedule (DIGEST unless given) at `now`: what it reports and what it sent. */
    const moveAt = async (now: string, at: string, schedule: object = DIGEST, ...more: string[]) => {
      scheduler.reset();
      scheduler.on(GetScheduleCommand).resolves(schedule as any);
      scheduler.on(UpdateScheduleCommand).resolves({});
      const r = await runMain(reschedule, [
        "--campaign",
        "digest",
        "--recipient",
        "par",
        "--local-time",
        at,
        "--now",
        now,
        ...more,
        "--json",
        ...region,
      ]);
      assert.strictEqual(r.code, 0, r.stderr);
      return { to: JSON.parse(r.stdout).to, put: scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input };
    };

    it("moves every occurrence to the new local time on the same days; EndDate kept, starting after the day's gone send", async () => {
      scheduler.on(GetScheduleCommand, { Name: "par-1", GroupName: "campaign-digest" }).resolves(DIGEST as any);
      scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: DIGEST.Arn });
      const r = await move("--local-time", "07:30");
      assert.strictEqual(r.code, 0, r.stderr);
      const { Arn, CreationDate, LastModificationDate, ...kept } = DIGEST;
      assert.deepStrictEqual(scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input, {
        ...kept,
        ScheduleExpression: "cron(30 7 ? * MON,THU *)",
        // Thursday's 09:00 send went at 08:00Z: the new time starts at Paris midnight after 12-10 (luxon).
        StartDate: DateTime.fromISO("2026-12-11T00:00", { zone: "Europe/Paris" }).toJSDate(),
      });
      // Thursday 2026-12-10 07:30 in Paris has passed at 12:00Z; next is Monday 12-14, 07:30 CET (UTC+1) = 06:30Z.
      assert.strictEqual(
        r.stdout,
        "Moved digest/par-1 from cron(0 9 ? * MON,THU *) Europe/Paris to cron(30 7 ? * MON,THU *) Europe/Paris (next 2026-12-14T06:30:00.000Z).\n" +
          "Its occurrence of 2026-12-10T08:00:00.000Z has gone or is under way: the new time starts the next local day (StartDate 2026-12-10T23:00:00.000Z), so that day gets no second send.\n",
      );
    });

    it("a StartDate still to come is kept", async () => {
      scheduler.on(GetScheduleCommand).resolves({ ...DIGEST, StartDate: new Date("2027-01-04T00:00:00Z") } as any);
      scheduler.on(UpdateScheduleCommand).resolves({});
      const r = await move("--local-time", "18:00", "--json");
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(
        scheduler.commandCalls(UpdateScheduleCommand)[0].args[0].input.StartDate,
        new Date("2027-01-04T00:00:00Z"),
      );
      // The first Monday or Thursday from 2027-01-04: Monday 01-04, 18:00 CET = 17:00Z.
      assert.strictEqual(JSON.parse(r.stdout).to.utc, "2027-01-04T17:00:00.000Z");
    });

    describe("one send per local day: the day's occurrence gone or under way keeps its day", () => {
      const paris = (iso: string) => DateTime.fromISO(iso, { zone: "Europe/Paris" }).toUTC().toISO();

      it("Thursday after its 09:00 send, --at 18:00: starts at Paris midnight, next is Monday (was: 18:00 the same Thursday)", async () => {
        const { to, put } = await moveAt("2026-12-10T12:00:00Z", "18:00");
        assert.strictEqual(put.StartDate!.toISOString(), paris("2026-12-11T00:00"));
        assert.strictEqual(to.utc, paris("2026-12-14T18:00"));
        assert.strictEqual(to.goneToday, paris("2026-12-10T09:00"));
        // The text says so.
        scheduler.reset();
        scheduler.on(GetScheduleCommand).resolves(DIGEST as any);
        scheduler.on(UpdateScheduleCommand).resolves({});
        const r = await move("--local-time", "18:00");
        assert.match(
          r.stdout,
          /\(next 2026-12-14T17:00:00\.000Z\)\.\nIts occurrence of 2026-12-10T08:00:00\.000Z has gone or is under way/,
        );
      });

      it("due within a minute counts as gone (promises.ts mayHaveFired, as for a one-time send); a minute ahead, or a day without an occurrence, starts now", async () => {
        // 07:59:01Z = 08:59:01 Paris, 59 s before Thursday's 09:00 (08:00Z).
        let { to, put } = await moveAt("2026-12-10T07:59:01Z", "18:00");
        assert.strictEqual(put.StartDate!.toISOString(), paris("2026-12-11T00:00"));
        assert.strictEqual(to.utc, paris("2026-12-14T18:00"));
        // 07:59:00Z: 09:00 is a minute away and is replaced by 18:00 the same day, one send.
        ({ to, put } = await moveAt("2026-12-10T07:59:00Z", "18:00"));
        assert.strictEqual(put.StartDate!.toISOString(), "2026-12-10T07:59:00.000Z");
        assert.strictEqual(to.utc, paris("2026-12-10T18:00"));
        assert.strictEqual(to.goneToday, null);
        // Wednesday 12-09: no send that day, so 18:00 Thursday is next.
        ({ to, put } = await moveAt("2026-12-09T12:00:00Z", "18:00"));
        assert.strictEqual(put.StartDate!.toISOString(), "2026-12-09T12:00:00.000Z");
        assert.strictEqual(to.utc, paris("2026-12-10T18:00"));
      });
    });

    describe("--timezone: the same last day, in the new zone", () => {
      // Daily 09:00 in Paris until 2026-12-31: EndDate at Paris midnight after it (CET, UTC+1) = 23:00Z.
      const DAILY = { ...DIGEST, ScheduleExpression: "cron(0 9 * * ? *)", EndDate: new Date("2026-12-31T23:00:00Z") };
      const moveTo = (zone: string, at: string) => moveAt("2026-12-20T12:00:00Z", at, DAILY, "--timezone", zone);
      const at = (zone: string, iso: string) => DateTime.fromISO(iso, { zone }).toMillis();

      for (const [zone, time] of [
        ["Pacific/Kiritimati", "09:00"], // kept the Paris EndDate: also sent 2027-01-01 09:00 local (2026-12-31T19:00Z)
        ["America/Los_Angeles", "20:00"], // kept it: lost 2026-12-31 20:00 local (2027-01-01T04:00Z)
      ])
        it(`to ${zone} at ${time}: sends through 2026-12-31 local, not 2027-01-01`, async () => {
          const { to, put } = await moveTo(zone, time);
          const end = put.EndDate!.getTime();
          // The 2026-12-31 send, invoked anywhere in its 3-minute window, is before EndDate; the 2027-01-01 one is not.
          assert.ok(
            end > at(zone, `2026-12-31T${time}`) + 3 * 60_000,
            `EndDate ${put.EndDate!.toISOString()} drops 2026-12-31`,
          );
          assert.ok(
            end <= at(zone, `2027-01-01T${time}`),
            `EndDate ${put.EndDate!.toISOString()} lets 2027-01-01 through`,
          );
          assert.strictEqual(to.previousEndDate, "2026-12-31T23:00:00.000Z");
          assert.strictEqual(to.endDate, put.EndDate!.toISOString());
        });

      it("an EndDate past midnight (a daily 09:00 launched now: a minute before the 2027-01-01 send) moved to 07:00", async () => {
        // launch-campaign --every daily --hour 9 --until 2026-12-31 in Paris: EndDate 2027-01-01 08:59 local.
        const { put } = await moveAt("2026-12-20T12:00:00Z", "07:00", {
          ...DAILY,
          EndDate: new Date(at("Europe/Paris", "2027-01-01T08:59")),
        });
        const end = put.EndDate!.getTime();
        // Kept as it was, 07:00 on 2027-01-01 would be sent: an extra day after --until.
        assert.ok(
          end > at("Europe/Paris", "2026-12-31T07:03") && end <= at("Europe/Paris", "2027-01-01T07:00"),
          new Date(end).toISOString(),
        );
      });

      it("to Los Angeles, after the Paris send went at 00:00 LA that day: 20:00 LA starts the next LA day", async () => {
        // 2026-12-20 09:00 Paris = 08:00Z = 00:00 in Los Angeles (PST, UTC-8): that LA day has had its send.
        const { to, put } = await moveTo("America/Los_Angeles", "20:00");
        assert.strictEqual(put.StartDate!.getTime(), at("America/Los_Angeles", "2026-12-21T00:00"));
        assert.strictEqual(to.utc, new Date(at("America/Los_Angeles", "2026-12-21T20:00")).toISOString());
      });
    });

    it("nothing left to move when the last day's send has gone: exit 1, no update", async () => {
      // Until Thursday 2026-12-10 (EndDate Paris midnight after it), at 12:00Z that day, its 09:00 send has gone.
      scheduler.on(GetScheduleCommand).resolves({ ...DIGEST, EndDate: new Date("2026-12-10T23:00:00Z") } as any);
      const r = await move("--local-time", "18:00");
      assert.strictEqual(r.code, 1);
      assert.match(
        r.stderr,
        /schedule par-1 \(recipient par, step 1\): nothing left to move, no occurrence at 18:00 comes before its EndDate \(its last one, 2026-12-10T08:00:00\.000Z, has gone or is under way\); it ends by itself$/m,
      );
      assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
    });

    it("refuses a date and time for a recurring schedule, HH:MM for a one-time one, and an ended schedule; changes nothing", async () => {
      scheduler.on(GetScheduleCommand).resolves(DIGEST as any);
      let r = await move("--local-time", "2026-12-14T07:30");
      assert.strictEqual(r.code, 2);
      assert.match(
        r.stderr,
        /schedule par-1 \(recipient par, step 1\) repeats \(cron\(0 9 \? \* MON,THU \*\)\): give the new local time of every occurrence as --local-time HH:MM/,
      );
      scheduler.on(GetScheduleCommand).resolves({ ...DIGEST, ScheduleExpression: "at(2026-12-14T09:00:00)" } as any);
      r = await move("--local-time", "07:30");
      assert.strictEqual(r.code, 2);
      assert.match(r.stderr, /is a one-time send \(at\(2026-12-14T09:00:00\)\): give --local-time YYYY-MM-DDTHH:MM/);
      scheduler.on(GetScheduleCommand).resolves({ ...DIGEST, EndDate: new Date("2026-12-01T00:00:00Z") } as any);
      r = await move("--local-time", "07:30");
      assert.strictEqual(r.code, 1);
      assert.match(r.stderr, /has ended \(EndDate 2026-12-01T00:00:00\.000Z\)/);
      r = await move("--local-time", "24:00");
      assert.strictEqual(r.code, 2);
      assert.strictEqual(scheduler.commandCalls(UpdateScheduleCommand).length, 0);
    });
  });

  it("campaign-status counts a recurring schedule at its next occurrence in its zone: a DST gap skipped, ended ones apart", async () => {
    const schedules: Record<string, object> = {
      // Daily 02:30 New York: 2027-03-14 02:30 does not exist (DST starts), so after 2027-03-13T12:00Z comes 03-15.
      "ny-1": {
        ScheduleExpression: "cron(30 2 * * ? *)",
        ScheduleExpressionTimezone: "America/New_York",
        EndDate: new Date("2027-06-01T04:00:00Z"),
      },
      "ny2-1": {
        ScheduleExpression: "cron(30 2 * * ? *)",
        ScheduleExpressionTimezone: "America/New_York",
        StartDate: new Date("2026-12-01T00:00:00Z"),
      },
      // Monthly on the 31st in Paris: 2027-03-31 09:00, summer time from 03-28.
      "par-1": {
        ScheduleExpression: "cron(0 9 31 * ? *)",
        ScheduleExpressionTimezone: "Europe/Paris",
        EndDate: new Date("2027-12-31T23:00:00Z"),
      },
      // Ended before now: no occurrence left.
      "old-1": {
        ScheduleExpression: "cron(0 9 * * ? *)",
        ScheduleExpressionTimezone: "UTC",
        EndDate: new Date("2027-03-01T00:00:00Z"),
      },
      "one-1": { ScheduleExpression: "at(2027-03-20T10:00:00)", ScheduleExpressionTimezone: "America/New_York" },
    };
    scheduler.on(GetScheduleGroupCommand).resolves({ State: "ACTIVE" });
    scheduler.on(ListSchedulesCommand).resolves({
      Schedules: Object.keys(schedules).map((Name) => ({
        Name,
        GroupName: "campaign-digest",
        State: "ENABLED" as const,
      })),
    });
    scheduler.on(GetScheduleCommand).callsFake((input: any) => ({ Name: input.Name, ...schedules[input.Name] }));
    const r = await runMain(status, ["--campaign", "digest", "--now", "2027-03-13T12:00:00Z", "--json", ...region]);
    assert.strictEqual(r.code, 0, r.stderr);
    const hour = (zone: string, iso: string) => DateTime.fromISO(iso, { zone }).toUTC().toISO()!.slice(0, 13) + ":00Z";
    assert.deepStrictEqual(JSON.parse(r.stdout).nextSends, {
      sampled: 5,
      estimated: false,
      recurring: 4,
      byHour: [
        { hour: hour("America/New_York", "2027-03-15T02:30"), count: 2 },
        { hour: hour("America/New_York", "2027-03-20T10:00"), count: 1 },
        { hour: hour("Europe/Paris", "2027-03-31T09:00"), count: 1 },
        { hour: "no occurrence left", count: 1 },
      ],
    });
    assert.strictEqual(hour("America/New_York", "2027-03-15T02:30"), "2027-03-15T06:00Z");
  });
});

describe("reschedule of a recurring schedule over the real wire format (AWS_ENDPOINT_URL_SCHEDULER)", () => {
  it("PUTs the schedule back whole: the new cron, StartDate after the day's gone send, the EndDate it had (epoch seconds)", async () => {
    const endpoint = await startEndpoint((q) =>
      q.method === "GET"
        ? {
            headers: { "content-type": "application/json" },
            json: {
              ...DIGEST,
              StartDate: 1796040301,
              EndDate: 1806530400,
              CreationDate: 1796040000,
              LastModificationDate: 1796040000,
            },
          }
        : { headers: { "content-type": "application/json" }, json: { ScheduleArn: DIGEST.Arn } },
    );
    try {
      const r = await withEnv({ AWS_ENDPOINT_URL_SCHEDULER: endpoint.url }, () =>
        runMain(reschedule, [
          "--campaign",
          "digest",
          "--recipient",
          "par",
          "--local-time",
          "07:30",
          "--now",
          "2026-12-10T12:00:00Z",
          ...region,
        ]),
      );
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(
        endpoint.requests.map((q) => `${q.method} ${q.url}`),
        ["GET /schedules/par-1?groupName=campaign-digest", "PUT /schedules/par-1"],
      );
      const put = JSON.parse(endpoint.requests[1].body);
      assert.strictEqual(put.ScheduleExpression, "cron(30 7 ? * MON,THU *)");
      assert.strictEqual(put.ScheduleExpressionTimezone, "Europe/Paris");
      assert.strictEqual(put.StartDate, Date.parse("2026-12-10T23:00:00Z") / 1000); // Paris midnight after Thursday 12-10
      assert.strictEqual(put.EndDate, 1806530400); // 2027-03-31T22:00:00Z, as it was
      assert.deepStrictEqual(put.Target, DIGEST.Target);
    } finally {
      await endpoint.close();
    }
  });
});
