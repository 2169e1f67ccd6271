/**
 * Moving one recipient's send to a new time: a one-time schedule of its own (UpdateSchedule), a recurring one (its
 * time of day, its StartDate and EndDate worked out again), or an entry of a bulk schedule (to a one-entry schedule of
 * its own). Every move keeps the promises of keep-promises.ts.
 */
import {
  atExpression,
  cronExpression,
  parseCronExpression,
  RecurringTime,
} from "../../../../infra/core/plan/schedule-expression";
import {
  ConflictException,
  CreateScheduleCommand,
  CreateScheduleCommandInput,
  GetScheduleCommandOutput,
  SchedulerClient,
  UpdateScheduleCommand,
  UpdateScheduleCommandInput,
} from "@aws-sdk/client-scheduler";
import { campaignGroupName, scheduleName } from "../../../../infra/core/plan/naming";

import {
  endOfLocalDate,
  untilOfEndDate,
  nextOccurrence,
  occurrences,
  recurringEndMs,
} from "../../../../infra/core/timing/recurrence";
import {
  LocalTime,
  localTimeOf,
  ScheduledTime,
  scheduledTime,
  writable,
  zonedInstant,
} from "../../../../infra/core/timing/send-time";
import { CREATE_LEAD_MS, inTimeToCreate, mayHaveFired } from "../../../../infra/core/timing/promises";
import { FindingsError, UsageError } from "../../../../infra/core/errors";
import { bulkRecipients, splitBulkEntry } from "../../planning/bulk-entries";
import { awsCall, Deadline } from "../call";
import { isAwsError } from "../clients";
import { zoneKnown } from "./lookup";
import { bulkHolding, entryWhich, getSchedule, withInput, writableFields } from "./find-send";
import { bulkStepTimes, otherBulkSteps, refuseIfMayHaveFired, refuseIfStepsWouldClash } from "./keep-promises";

const DAY_MS = 86_400_000;

export interface MoveReport {
  campaign: string;
  schedule: string;
  group: string;
  from: { expression?: string; timezone?: string };
  /** A bulk schedule's entry, moved to a one-entry bulk schedule of its own (`schedule`): where it was, what is left. */
  bulk?: { from: string; entriesLeft: number };
  /**
   * `utc`: the send, or a recurring schedule's next occurrence (null when none is left before its EndDate). A recurring
   * one also has its new StartDate and EndDate (and the EndDate it had), and `goneToday`: the occurrence that has gone
   * or is under way on the local date the new time would otherwise also send on (the new time starts the day after).
   */
  to: {
    expression: string;
    timezone: string;
    utc: string | null;
    startDate?: string | null;
    endDate?: string | null;
    previousEndDate?: string | null;
    goneToday?: string | null;
  };
}

/**
 * Where a send moves: an instant (--at: a one-time schedule), a local date and time (--local-time, one-time), or a
 * local time of day (--local-time HH:MM: a recurring one).
 */
export type MoveTarget = { utcMs: number } | LocalTime | { hour: number; minute: number };

const hhmm = (t: { hour: number; minute: number }) =>
  `${String(t.hour).padStart(2, "0")}:${String(t.minute).padStart(2, "0")}`;

export interface MoveOptions {
  campaignId: string;
  recipientId: string;
  step: number;
  at: MoveTarget;
  timezone?: string;
  now: number;
  /** The bulk schedule that holds the recipient's entry (plan.jsonl's schedule_name); default: searched for. */
  bulkSchedule?: string;
}

export async function moveSchedule(d: Deadline, scheduler: SchedulerClient, o: MoveOptions): Promise<MoveReport> {
  const Name = scheduleName(o.recipientId, o.step);
  const GroupName = campaignGroupName(o.campaignId);
  const current =
    o.bulkSchedule === undefined
      ? await getSchedule(d, scheduler, o.campaignId, o.recipientId, o.step, true)
      : undefined;
  if (current === undefined) return moveBulkEntry(d, scheduler, o);
  const which = `schedule ${Name} (recipient ${o.recipientId}, step ${o.step})`;
  const zone = o.timezone ?? current.ScheduleExpressionTimezone ?? "UTC";
  if (!zoneKnown(zone))
    throw new FindingsError(
      `campaign ${o.campaignId}: ${which} is in time zone "${zone}", which this Node's time zone data does not know; give --timezone with a zone it knows, or update Node`,
    );
  const recurring = parseCronExpression(current.ScheduleExpression);
  const input = writableFields(current);
  let to: MoveReport["to"];
  if (recurring) {
    if (!("minute" in o.at) || "year" in o.at)
      throw new UsageError(
        `${"utcMs" in o.at ? "--at" : "--local-time"}: ${which} repeats (${current.ScheduleExpression}): give the new local time of every occurrence as --local-time HH:MM`,
      );
    const oldZone = current.ScheduleExpressionTimezone ?? "UTC";
    if (!zoneKnown(oldZone))
      throw new FindingsError(
        `campaign ${o.campaignId}: ${which} is in time zone "${oldZone}", which this Node's time zone data does not know; update Node`,
      );
    const moved = recurringMove(
      current,
      recurring,
      { ...recurring, ...o.at },
      zone,
      o.now,
      `campaign ${o.campaignId}: ${which}`,
    );
    const expression = cronExpression({ ...recurring, ...o.at });
    Object.assign(
      input,
      { Name, GroupName, ScheduleExpression: expression, ScheduleExpressionTimezone: zone },
      moved.dates,
    );
    to = { expression, timezone: zone, utc: moved.next, ...moved.report };
  } else to = await oneTimeMove(d, scheduler, o, current, { which, zone, input });
  await awsCall(
    d,
    `campaign ${o.campaignId}: UpdateSchedule ${Name} (recipient ${o.recipientId}, step ${o.step})`,
    (opts) => scheduler.send(new UpdateScheduleCommand(input as unknown as UpdateScheduleCommandInput), opts),
  );
  return {
    campaign: o.campaignId,
    schedule: Name,
    group: GroupName,
    from: { expression: current.ScheduleExpression, timezone: current.ScheduleExpressionTimezone },
    to,
  };
}

/** A one-time send's move: the promises checked, the new expression written into `input`; what it moved to. */
async function oneTimeMove(
  d: Deadline,
  scheduler: SchedulerClient,
  o: MoveOptions,
  current: GetScheduleCommandOutput,
  c: { which: string; zone: string; input: Record<string, unknown> },
): Promise<MoveReport["to"]> {
  const { which, zone, input } = c;
  const { utcMs, t } = oneTimeTarget(current, o, which, zone);
  // A one-entry bulk schedule of its own (a moved entry): the recipient's other steps may be entries of bulk ones.
  const bulkSteps = bulkRecipients(current.Target?.Input ?? "") ? await otherBulkSteps(d, scheduler, o) : undefined;
  await refuseIfStepsWouldClash(d, scheduler, { ...o, which, utcMs, extra: bulkSteps });
  Object.assign(input, {
    Name: scheduleName(o.recipientId, o.step),
    GroupName: campaignGroupName(o.campaignId),
    ScheduleExpression: atExpression(t.send_at),
    ScheduleExpressionTimezone: t.timezone,
  });
  return { expression: atExpression(t.send_at), timezone: t.timezone, utc: new Date(utcMs).toISOString() };
}

/**
 * The checks of every one-time move, of a schedule of its own and of a bulk entry alike: --at is a date and time, the
 * send may not have fired, the new time is at least a minute ahead and can be written. The new time, as written.
 */
function oneTimeTarget(
  current: GetScheduleCommandOutput,
  o: MoveOptions,
  which: string,
  zone: string,
): { utcMs: number; t: ScheduledTime } {
  if (!("year" in o.at) && !("utcMs" in o.at))
    throw new UsageError(
      `--local-time ${hhmm(o.at)}: ${which} is a one-time send (${current.ScheduleExpression}): give --local-time YYYY-MM-DDTHH:MM (or --at INSTANT)`,
    );
  const flag = "utcMs" in o.at ? "--at" : "--local-time";
  if ("utcMs" in o.at && o.at.utcMs % 60_000 !== 0)
    throw new UsageError(`--at ${new Date(o.at.utcMs).toISOString()}: a schedule's time is a whole minute`);
  refuseIfMayHaveFired(current, `campaign ${o.campaignId}: ${which}`, o.now);
  // An instant keeps itself: its local time in the zone, and whether that local time is ambiguous (then it is UTC).
  const { utcMs, fold } =
    "utcMs" in o.at
      ? { utcMs: o.at.utcMs, fold: zonedInstant(zone, localTimeOf(zone, o.at.utcMs)).fold }
      : zonedInstant(zone, o.at);
  if (!inTimeToCreate(utcMs, o.now)) {
    throw new UsageError(
      `${flag}: ${new Date(utcMs).toISOString()} (${zone}) is less than a minute from now (${new Date(o.now).toISOString()}); a schedule can only move to a time at least a minute ahead`,
    );
  }
  const t = scheduledTime(zone, utcMs, fold);
  if (!writable(t))
    throw new UsageError(`${flag}: ${which} would move past 9999-12-31, the last date a schedule can be written for`);
  return { utcMs, t };
}

/**
 * A recurring schedule's new StartDate and EndDate for a new time and zone. The dates it sends on are kept: its
 * --until date is read back from its EndDate in its old zone, and the EndDate worked out again for the new time in
 * the new zone (recurrence.ts recurringEndMs, untilOfEndDate): "until December 31" stays December 31 local. At most one send per local date: when an occurrence has gone
 * or may have fired (mayHaveFired: due within a minute, or past), the new time starts at local midnight after its date in the new zone;
 * otherwise now (Scheduler refuses a StartDate more than minutes past); a StartDate still to come is kept.
 */
function recurringMove(
  current: GetScheduleCommandOutput,
  old: RecurringTime,
  time: RecurringTime,
  zone: string,
  now: number,
  which: string,
) {
  const oldZone = current.ScheduleExpressionTimezone ?? "UTC";
  const oldStart = current.StartDate?.getTime();
  const oldEnd = current.EndDate?.getTime();
  if (oldEnd !== undefined && oldEnd <= now)
    throw new FindingsError(`${which} has ended (EndDate ${current.EndDate!.toISOString()})`);
  let endMs = Infinity;
  if (oldEnd !== undefined) {
    const until = untilOfEndDate(old, oldZone, oldEnd);
    if (!until)
      throw new FindingsError(`${which} has no occurrence left before its EndDate ${current.EndDate!.toISOString()}`);
    endMs = recurringEndMs(time, zone, until);
  }
  let startMs = Math.max(oldStart ?? now, now);
  // The last occurrence that may have fired (the same check as a one-time send's): its local day is taken.
  const gone = occurrences(
    old,
    oldZone,
    Math.max(oldStart ?? 0, now - 3 * DAY_MS),
    Math.min(oldEnd ?? Infinity, now + CREATE_LEAD_MS),
  )
    .filter((t) => mayHaveFired(t, now))
    .pop();
  const dayAfterGone = gone === undefined ? undefined : endOfLocalDate(zone, localTimeOf(zone, gone));
  const skipsGoneDay = dayAfterGone !== undefined && dayAfterGone > startMs;
  if (skipsGoneDay) startMs = dayAfterGone;
  const next = startMs < endMs ? nextOccurrence(time, zone, startMs, Math.min(endMs, now + 400 * DAY_MS)) : undefined;
  if (next === undefined)
    throw new FindingsError(
      `${which}: nothing left to move, no occurrence at ${hhmm(time)} comes before its EndDate${gone === undefined ? "" : ` (its last one, ${new Date(gone).toISOString()}, has gone or is under way)`}; it ends by itself`,
    );
  const dates: { StartDate?: Date; EndDate?: Date } = {};
  if (oldStart === undefined ? skipsGoneDay : startMs !== oldStart) dates.StartDate = new Date(startMs);
  if (oldEnd !== undefined) dates.EndDate = new Date(endMs);
  const iso = (ms: number | undefined) => (ms === undefined || ms === Infinity ? null : new Date(ms).toISOString());
  return {
    dates,
    next: iso(next),
    report: {
      startDate: iso(startMs),
      endDate: iso(endMs),
      previousEndDate: iso(oldEnd),
      goneToday: skipsGoneDay ? iso(gone) : null,
    },
  };
}

/**
 * Moves one entry of a bulk schedule: the entry leaves it (UpdateSchedule, every other entry byte for byte) and is
 * sent by a one-entry bulk schedule of its own at the new time, named as the recipient-step's own schedule
 * (`<id>-<step>`), so that a later move or remove finds it by name and a re-run meets it. Removed first, created
 * second: a failed create puts the entry back (UpdateSchedule with the Input as it was), so the send is never held
 * twice and never dropped silently. An entry alone in its schedule: the schedule itself is moved.
 */
async function moveBulkEntry(d: Deadline, scheduler: SchedulerClient, o: MoveOptions): Promise<MoveReport> {
  const { holding: h, others } = await bulkHolding(d, scheduler, o);
  const GroupName = campaignGroupName(o.campaignId);
  const which = `campaign ${o.campaignId}: ${entryWhich(o, h)}`;
  const zone = o.timezone ?? h.schedule.ScheduleExpressionTimezone ?? "UTC";
  if (!zoneKnown(zone))
    throw new FindingsError(
      `${which} is in time zone "${zone}", which this Node's time zone data does not know; give --timezone`,
    );
  const { utcMs, t } = oneTimeTarget(h.schedule, o, entryWhich(o, h), zone);
  await refuseIfStepsWouldClash(d, scheduler, { ...o, which: entryWhich(o, h), utcMs, extra: bulkStepTimes(others) });
  const time = { ScheduleExpression: atExpression(t.send_at), ScheduleExpressionTimezone: t.timezone };
  const original = h.schedule.Target!.Input!;
  const update = (fields: Record<string, unknown>, what: string) =>
    awsCall(d, `${which}: UpdateSchedule ${h.name} (${what})`, (opts) =>
      scheduler.send(
        new UpdateScheduleCommand({
          ...withInput(h.schedule, original),
          ...fields,
        } as unknown as UpdateScheduleCommandInput),
        opts,
      ),
    );
  const report = (schedule: string): MoveReport => ({
    campaign: o.campaignId,
    schedule,
    group: GroupName,
    from: { expression: h.schedule.ScheduleExpression, timezone: h.schedule.ScheduleExpressionTimezone },
    to: {
      expression: time.ScheduleExpression,
      timezone: time.ScheduleExpressionTimezone,
      utc: new Date(utcMs).toISOString(),
    },
  });
  if (h.entries === 1) {
    await update(time, "its only entry: the schedule moves");
    return report(h.name);
  }
  const { rest, alone } = splitBulkEntry(original, h.index);
  const Name = scheduleName(o.recipientId, o.step);
  await update({ Target: { ...h.schedule.Target, Input: rest } }, "the entry taken out");
  const create = { ...withInput(h.schedule, alone), Name, GroupName, ...time } as unknown as CreateScheduleCommandInput;
  try {
    await awsCall(
      d,
      `${which}: CreateSchedule ${Name} (the entry alone, at ${create.ScheduleExpression} ${t.timezone})`,
      (opts) => scheduler.send(new CreateScheduleCommand(create), opts),
    );
  } catch (e) {
    const conflict = e instanceof ConflictException || isAwsError(e, "ConflictException");
    if (!(e instanceof FindingsError) && !conflict) throw e;
    const why = e instanceof Error ? e.message : String(e);
    const back = await update({}, "the entry put back").then(
      () => "the entry was put back in it: nothing changed",
      (f) =>
        `putting it back failed too (${f instanceof Error ? f.message : f}): the entry is in neither; its Input: ${alone}`,
    );
    throw new FindingsError(`${why}; ${back}`);
  }
  return { ...report(Name), bulk: { from: h.name, entriesLeft: h.entries - 1 } };
}
