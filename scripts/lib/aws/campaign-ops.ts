/**
 * Operating a launched campaign: cancel it, move or remove one recipient's send, see what is pending.
 * Schedule and group names come from infra/core/plan/naming.ts, as in the planner.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  CreateScheduleCommandInput,
  DeleteScheduleCommand,
  DeleteScheduleGroupCommand,
  GetScheduleCommand,
  GetScheduleCommandOutput,
  GetScheduleGroupCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
  UpdateScheduleCommandInput,
} from "@aws-sdk/client-scheduler";
import {
  DescribeExecutionCommand,
  ListExecutionsCommand,
  ListMapRunsCommand,
  SFNClient,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import {
  campaignGroupName,
  campaignIdProblem,
  CLEANUP_SCHEDULE_NAME,
  scheduleName,
} from "../../../infra/core/plan/naming";
import {
  atExpression,
  cronExpression,
  parseAtExpression,
  parseCronExpression,
  RecurringTime,
} from "../../../infra/core/plan/schedule-expression";
import { IANAZone } from "luxon";
import { allPages, awsCall, Deadline, throttled } from "./call";
import { mapRunItems, MapRunItems } from "./launch";
import { count } from "../text/format";
import {
  endOfLocalDate,
  untilOfEndDate,
  nextOccurrence,
  occurrences,
  recurringEndMs,
} from "../../../infra/core/timing/recurrence";
import { LocalTime, localTimeOf, scheduledTime, writable, zonedInstant } from "../../../infra/core/timing/send-time";
import {
  CREATE_LEAD_MS,
  inTimeToCreate,
  MIN_GAP_MINUTES,
  mayHaveFired,
  movedSendConflict,
} from "../../../infra/core/timing/promises";
import { FindingsError, UsageError } from "../../../infra/core/errors";
import { bulkRecipients, splitBulkEntry } from "../planning/bulk-entries";
import { BulkHolding, findBulkHoldings } from "./bulk-entries";
import { isAwsError } from "./clients";

const DAY_MS = 86_400_000;

/** The --campaign flag, checked: `campaign-<id>` must be a valid group name. */
export function requireCampaign(campaign: string | undefined): string {
  if (campaign === undefined) throw new UsageError("--campaign is required (see --help)");
  const problem = campaignIdProblem(campaign);
  if (problem) throw new UsageError(`--campaign: ${problem}`);
  return campaign;
}

export interface CampaignExecution {
  name: string;
  arn: string;
  status: string;
  startDate?: string;
}

/**
 * The fan-out executions of one campaign, recognised by their input's campaign_id whatever their name (a fan-out
 * started by hand may be named anything). Cost: ListExecutions (100 per page) and one DescribeExecution per
 * candidate. `running` lists only RUNNING executions and reads every one of them (cancel: a fan-out that is still
 * creating schedules must be found); `all` also lists finished ones, reading those named `<campaign>-…` (the
 * launcher's naming), so a long history of other campaigns is not read one by one.
 */
export async function campaignExecutions(
  d: Deadline,
  sfn: SFNClient,
  stateMachineArn: string,
  campaignId: string,
  which: "running" | "all",
  progress: (text: () => string) => void = () => {},
): Promise<CampaignExecution[]> {
  const found: CampaignExecution[] = [];
  let listed = 0;
  const statusFilter = which === "running" ? "RUNNING" : undefined;
  for await (const page of allPages(
    d,
    `campaign ${campaignId}: ListExecutions${statusFilter ? " RUNNING" : ""} on ${stateMachineArn}`,
    (nextToken, o) =>
      sfn.send(new ListExecutionsCommand({ stateMachineArn, statusFilter, maxResults: 100, nextToken }), o),
    (p) => p.nextToken,
  )) {
    for (const e of page.executions ?? []) {
      listed++;
      progress(() => `looking for campaign ${campaignId}'s fan-outs: ${count(listed)} executions listed`);
      if (e.status !== "RUNNING" && !e.name?.startsWith(`${campaignId}-`)) continue;
      const described = await awsCall(d, `campaign ${campaignId}: DescribeExecution ${e.name}`, (o) =>
        sfn.send(new DescribeExecutionCommand({ executionArn: e.executionArn }), o),
      );
      if (inputCampaignId(described.input) === campaignId)
        found.push({
          name: e.name!,
          arn: e.executionArn!,
          status: described.status ?? e.status ?? "UNKNOWN",
          startDate: e.startDate?.toISOString(),
        });
    }
  }
  return found;
}

function inputCampaignId(input: string | undefined): string | undefined {
  try {
    return JSON.parse(input ?? "{}")?.campaign_id;
  } catch {
    return undefined; // not one of ours
  }
}

/** ACTIVE, DELETING (or any other state AWS reports), or undefined when the group does not exist. */
export async function groupState(
  d: Deadline,
  scheduler: SchedulerClient,
  campaignId: string,
): Promise<string | undefined> {
  const Name = campaignGroupName(campaignId);
  return awsCall(
    d,
    `campaign ${campaignId}: GetScheduleGroup ${Name}`,
    async (o) => (await scheduler.send(new GetScheduleGroupCommand({ Name }), o)).State ?? "ACTIVE",
    () => undefined,
  );
}

export interface CancelReport {
  campaign: string;
  group: string;
  dryRun: boolean;
  nothingToCancel: boolean;
  /** Running fan-outs found (dry run: that would be stopped). */
  executionsFound: string[];
  executionsStopped: string[];
  groupBefore: string | null;
  /** deleted, absent, ACTIVE, DELETING, or unknown (could not be read). */
  groupAfter: string;
  /** Everything of the campaign that could still send when the command ended; empty when the cancel is complete. */
  stillThere: string[];
  /** What went wrong on the way (AWS errors, the time limit), one line each. */
  problems: string[];
}

/**
 * Stops the campaign's running fan-outs first (so no new schedule appears), reads the group again (a stopped fan-out
 * may have created it after the first read), deletes it in any state but DELETING, and waits until it is gone (read
 * as absent) or the deadline comes. Whatever fails is recorded, never hidden: `stillThere` lists every
 * part of the campaign that could still send.
 */
export async function cancelCampaign(
  d: Deadline,
  clients: { sfn: SFNClient; scheduler: SchedulerClient },
  o: { campaignId: string; stateMachineArn: string; dryRun: boolean; pollSeconds: number },
): Promise<CancelReport> {
  const group = campaignGroupName(o.campaignId);
  const r: CancelReport = {
    campaign: o.campaignId,
    group,
    dryRun: o.dryRun,
    nothingToCancel: false,
    executionsFound: [],
    executionsStopped: [],
    groupBefore: null,
    groupAfter: "unknown",
    stillThere: [],
    problems: [],
  };
  const attempt = async <T>(step: () => Promise<T>): Promise<T | Failed> => {
    try {
      return await step();
    } catch (e) {
      if (!(e instanceof FindingsError)) throw e;
      if (!r.problems.includes(e.message)) r.problems.push(e.message);
      return FAILED;
    }
  };
  const running = await attempt(() =>
    campaignExecutions(d, clients.sfn, o.stateMachineArn, o.campaignId, "running", throttled(d.progress)),
  );
  const before = await attempt(() => groupState(d, clients.scheduler, o.campaignId));
  if (running !== FAILED) r.executionsFound = running.map((e) => e.name);
  if (before !== FAILED) r.groupBefore = r.groupAfter = before ?? "absent";
  r.nothingToCancel = running !== FAILED && running.length === 0 && before === undefined;
  if (o.dryRun || r.nothingToCancel) return finishCancel(r, running);

  const notStopped = await stopExecutions(d, clients.sfn, o.campaignId, running === FAILED ? [] : running, r, attempt);
  // A fan-out creates the group first thing: one stopped after the read above may have created it meanwhile.
  const afterStop =
    r.executionsStopped.length || notStopped.length
      ? await attempt(() => groupState(d, clients.scheduler, o.campaignId))
      : before;
  if (afterStop !== FAILED) r.groupAfter = afterStop ?? "absent";
  const present = afterStop === FAILED ? before : afterStop;
  // Every state but absent is still there; one already DELETING is not deleted again, only waited for.
  if (present !== undefined && present !== FAILED && present !== "DELETING") {
    d.progress(`deleting schedule group ${group}`);
    await attempt(() =>
      awsCall(
        d,
        `campaign ${o.campaignId}: DeleteScheduleGroup ${group}`,
        (opts) => clients.scheduler.send(new DeleteScheduleGroupCommand({ Name: group }), opts),
        () => "already gone",
      ),
    );
  }
  if (present !== undefined) await waitForGroup(d, clients.scheduler, o, r, attempt);
  return finishCancel(r, running, notStopped);
}

const FAILED = Symbol("failed");
type Failed = typeof FAILED;
type Attempt = <T>(step: () => Promise<T>) => Promise<T | Failed>;

/** Stops each running fan-out (no new schedule may appear while the group is deleted); returns those not stopped. */
async function stopExecutions(
  d: Deadline,
  sfn: SFNClient,
  campaignId: string,
  running: { name: string; arn: string }[],
  r: CancelReport,
  attempt: Attempt,
): Promise<string[]> {
  const notStopped: string[] = [];
  for (const e of running) {
    d.progress(`stopping fan-out ${e.name}`);
    const stopped = await attempt(() =>
      awsCall(d, `campaign ${campaignId}: StopExecution ${e.name}`, (opts) =>
        sfn.send(
          new StopExecutionCommand({
            executionArn: e.arn,
            error: "sendtime.Cancelled",
            cause: `campaign ${campaignId} cancelled`,
          }),
          opts,
        ),
      ),
    );
    if (stopped === FAILED) notStopped.push(e.name);
    else r.executionsStopped.push(e.name);
  }
  return notStopped;
}

/** Polls the group until it is gone or the deadline comes; the last state seen goes into the report. */
async function waitForGroup(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; pollSeconds: number },
  r: CancelReport,
  attempt: Attempt,
): Promise<void> {
  while (!d.expired) {
    const state = await attempt(() => groupState(d, scheduler, o.campaignId));
    if (state === FAILED) {
      r.groupAfter = "unknown";
      return;
    }
    if (state === undefined) {
      r.groupAfter = "deleted";
      return;
    }
    r.groupAfter = state;
    d.progress(`group ${r.group} is ${state}; waiting`);
    await d.sleep(o.pollSeconds * 1000);
  }
  if (!r.problems.some((p) => p.includes("--timeout-seconds")))
    r.problems.push(
      `campaign ${o.campaignId}: group ${r.group} still ${r.groupAfter} at the command's time limit of ${d.seconds} s (--timeout-seconds)`,
    );
}

function finishCancel(r: CancelReport, running: CampaignExecution[] | Failed, notStopped: string[] = []): CancelReport {
  if (r.dryRun) return r;
  if (running === FAILED)
    r.stillThere.push("fan-outs: could not list the running fan-outs, so any of them may still be creating schedules");
  for (const name of notStopped)
    r.stillThere.push(`fan-out ${name} is still RUNNING (StopExecution failed): it can still create schedules`);
  // Only a group read as absent is gone: every other state (one this code does not know too) may still send.
  if (r.groupAfter === "ACTIVE")
    r.stillThere.push(`schedule group ${r.group} is still ACTIVE: its pending schedules will fire`);
  else if (r.groupAfter === "DELETING")
    r.stillThere.push(
      `schedule group ${r.group} is still DELETING: AWS is deleting its schedules, and some may still fire until it is gone`,
    );
  else if (r.groupAfter === "unknown")
    r.stillThere.push(`schedule group ${r.group}: state unknown, its pending schedules may still fire`);
  else if (r.groupAfter !== "deleted" && r.groupAfter !== "absent")
    r.stillThere.push(
      `schedule group ${r.group} is still there (state ${r.groupAfter}): its pending schedules may still fire`,
    );
  return r;
}

/** UpdateSchedule replaces the whole schedule: carry over every field GetSchedule returned except the read-only ones. */
const READ_ONLY_SCHEDULE_FIELDS = new Set(["$metadata", "Arn", "CreationDate", "LastModificationDate"]);

/** Whether this Node's time zone data knows `zone` (a schedule written by a newer tzdata may name one it does not). */
const zoneKnown = (zone: string) => IANAZone.isValidZone(zone);

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

/** Where a send moves: a local date and time (a one-time schedule), or a local time of day (a recurring one). */
export type MoveTarget = LocalTime | { hour: number; minute: number };

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
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(current)) if (!READ_ONLY_SCHEDULE_FIELDS.has(k) && v !== undefined) input[k] = v;
  let to: MoveReport["to"];
  if (recurring) {
    if ("year" in o.at)
      throw new UsageError(
        `--at: ${which} repeats (${current.ScheduleExpression}): give the new local time of every occurrence as HH:MM`,
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
  if (!("year" in o.at))
    throw new UsageError(
      `--at ${hhmm(o.at)}: ${which} is a one-time send (${current.ScheduleExpression}): give --at YYYY-MM-DDTHH:MM`,
    );
  refuseIfMayHaveFired(current, `campaign ${o.campaignId}: ${which}`, o.now);
  const { utcMs, fold } = zonedInstant(zone, o.at);
  if (!inTimeToCreate(utcMs, o.now)) {
    throw new UsageError(
      `--at: ${new Date(utcMs).toISOString()} (${zone}) is less than a minute from now (${new Date(o.now).toISOString()}); a schedule can only move to a time at least a minute ahead`,
    );
  }
  const t = scheduledTime(zone, utcMs, fold);
  if (!writable(t))
    throw new UsageError(`--at: ${which} would move past 9999-12-31, the last date a schedule can be written for`);
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

/** At most this many pages of ListSchedules (100 names each) are read for one recipient's other steps. */
const MAX_STEP_PAGES = 20;

/**
 * Never two at once, and in order (promises.ts movedSendConflict): the recipient's other pending step schedules are
 * read — ListSchedules by the name prefix the naming rule gives every step of this recipient, then GetSchedule of
 * each name that is one of its steps — and a move that would come within MIN_GAP_MINUTES of one, or before an earlier
 * step or after a later one, is refused (FindingsError), naming that step and its time. A step already sent (its
 * schedule deleted itself) or removed is not there to compare with.
 */
async function refuseIfStepsWouldClash(
  d: Deadline,
  scheduler: SchedulerClient,
  o: {
    campaignId: string;
    recipientId: string;
    step: number;
    which: string;
    utcMs: number;
    extra?: Map<number, { at: number; label: string }>;
  },
): Promise<void> {
  const GroupName = campaignGroupName(o.campaignId);
  const own = scheduleName(o.recipientId, o.step);
  const NamePrefix = own.slice(0, own.length - String(o.step).length);
  const steps = new Map<number, string>();
  let pages = 0;
  for await (const page of allPages(
    d,
    `campaign ${o.campaignId}: ListSchedules ${NamePrefix}* in ${GroupName} (the other steps of recipient ${o.recipientId})`,
    (NextToken, opts) =>
      scheduler.send(new ListSchedulesCommand({ GroupName, NamePrefix, MaxResults: 100, NextToken }), opts),
    (p) => p.NextToken,
  )) {
    if (++pages > MAX_STEP_PAGES)
      throw new FindingsError(
        `campaign ${o.campaignId}: more than ${MAX_STEP_PAGES * 100} schedules in ${GroupName} are named ${NamePrefix}…: cannot read recipient ${o.recipientId}'s other steps to keep them in order; not moved`,
      );
    for (const s of page.Schedules ?? []) {
      const step = /^[1-9]\d{0,5}$/.test(s.Name?.slice(NamePrefix.length) ?? "")
        ? Number(s.Name!.slice(NamePrefix.length))
        : undefined;
      if (step !== undefined && step !== o.step && scheduleName(o.recipientId, step) === s.Name)
        steps.set(step, s.Name);
    }
  }
  const sends: (number | undefined)[] = [];
  const due = new Map<number, string>();
  // The recipient's steps held as entries of bulk schedules (none without --bulk).
  for (const [step, e] of o.extra ?? []) if (step !== o.step) ((sends[step - 1] = e.at), due.set(step, e.label));
  if (steps.size === 0 && !due.size) return;
  for (const [step, Name] of [...steps].sort((a, b) => a[0] - b[0])) {
    const other = await awsCall(
      d,
      `campaign ${o.campaignId}: GetSchedule ${Name} (recipient ${o.recipientId}, step ${step})`,
      (opts) => scheduler.send(new GetScheduleCommand({ Name, GroupName }), opts),
      () => undefined, // sent (deleted itself) since it was listed
    );
    const zone = other?.ScheduleExpressionTimezone ?? "UTC";
    const at = other && zoneKnown(zone) ? atInstant(other.ScheduleExpression, zone) : undefined;
    if (at === undefined) continue; // gone, or not a one-time send of ours
    sends[step - 1] = at;
    due.set(step, `${Name}, due ${new Date(at).toISOString()}: ${other!.ScheduleExpression} ${zone}`);
  }
  sends[o.step - 1] = o.utcMs;
  for (let i = 0; i < sends.length; i++) if (!(i in sends)) sends[i] = undefined;
  const conflict = movedSendConflict(sends, o.step - 1);
  if (!conflict) return;
  const step = conflict.with + 1;
  const moved = `campaign ${o.campaignId}: ${o.which} moved to ${new Date(o.utcMs).toISOString()}`;
  throw new FindingsError(
    conflict.reason === "too-close"
      ? `${moved} would come within ${MIN_GAP_MINUTES} minutes of step ${step} (${due.get(step)}): not moved, so the recipient never gets two sends within ${MIN_GAP_MINUTES} minutes`
      : `${moved} would come ${step > o.step ? "after" : "before"} step ${step} (${due.get(step)}): not moved, so the recipient's steps stay in order`,
  );
}

/**
 * A one-time send is not moved once it may have fired (promises.ts mayHaveFired: its time has passed, its window is
 * open, or it is due within the create lead): UpdateSchedule does not stop an invocation under way, and the moved
 * schedule would send a second time.
 */
function refuseIfMayHaveFired(current: GetScheduleCommandOutput, which: string, now: number): void {
  const zone = current.ScheduleExpressionTimezone ?? "UTC";
  const due = atInstant(current.ScheduleExpression, zone);
  if (due === undefined)
    throw new FindingsError(
      `${which} has the expression ${JSON.stringify(current.ScheduleExpression)}, not at(...) or cron(...) of ours: not moved`,
    );
  if (mayHaveFired(due, now))
    throw new FindingsError(
      `${which} is due at ${new Date(due).toISOString()} (${current.ScheduleExpression} ${zone}) and may have fired already (its time has passed, its window is open, or it is due within a minute): not moved, so the recipient cannot get it twice`,
    );
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

export async function removeSchedule(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number; now: number; bulkSchedule?: string },
): Promise<RemoveReport> {
  const Name = scheduleName(o.recipientId, o.step);
  const GroupName = campaignGroupName(o.campaignId);
  const deleted =
    o.bulkSchedule === undefined &&
    (await awsCall(
      d,
      `campaign ${o.campaignId}: DeleteSchedule ${Name} (recipient ${o.recipientId}, step ${o.step})`,
      (opts) => scheduler.send(new DeleteScheduleCommand({ Name, GroupName }), opts).then(() => true),
      () => false,
    ));
  if (deleted) return { campaign: o.campaignId, schedule: Name, group: GroupName, removed: true };
  return removeBulkEntry(d, scheduler, o);
}

export interface RemoveReport {
  campaign: string;
  schedule: string;
  group: string;
  removed: true;
  /** When the send was an entry of a bulk schedule (`schedule`): the entries it still holds (0: it was deleted). */
  bulk?: { entriesLeft: number };
}

/**
 * The recipient's entry of `step` in a bulk schedule, and the send times of its other steps held in bulk schedules.
 * Not found: the same finding as a missing schedule of its own, saying where else it looked.
 */
async function bulkHolding(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number; bulkSchedule?: string },
) {
  const holdings = await findBulkHoldings(d, scheduler, {
    campaignId: o.campaignId,
    recipientId: o.recipientId,
    only: o.bulkSchedule,
  });
  const mine = holdings.filter((h) => h.step === o.step);
  const where =
    o.bulkSchedule === undefined
      ? "nor an entry of any bulk schedule of the campaign"
      : `nor an entry of bulk schedule ${o.bulkSchedule}`;
  if (!mine.length) throw new FindingsError(`${notFound(o.campaignId, o.recipientId, o.step)} (${where})`);
  if (mine.length > 1)
    throw new FindingsError(
      `campaign ${o.campaignId}: recipient ${o.recipientId} step ${o.step} is an entry of ${mine.length} schedules (${mine.map((h) => `${h.name} entry ${h.index + 1}`).join(", ")}): not changed; remove the extra ones first`,
    );
  return { holding: mine[0], others: holdings.filter((h) => h.step !== o.step) };
}

const entryWhich = (o: { recipientId: string; step: number }, h: BulkHolding) =>
  `recipient ${o.recipientId} step ${o.step} (entry ${h.index + 1} of ${h.entries} of bulk schedule ${h.name})`;

/** The fields of a schedule GetSchedule returned that UpdateSchedule and CreateSchedule take, with a new Input. */
function withInput(current: GetScheduleCommandOutput, Input: string): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(current)) if (!READ_ONLY_SCHEDULE_FIELDS.has(k) && v !== undefined) input[k] = v;
  return { ...input, Target: { ...current.Target, Input } };
}

/**
 * Removes one entry of a bulk schedule: UpdateSchedule with every other field and every other entry's bytes as they
 * were (bulk-entries.ts splitBulkEntry), or DeleteSchedule when it was the only one. Not once the schedule may have
 * fired (promises.ts mayHaveFired): an update does not stop an invocation under way.
 */
async function removeBulkEntry(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number; now: number; bulkSchedule?: string },
): Promise<RemoveReport> {
  const { holding: h } = await bulkHolding(d, scheduler, o);
  const GroupName = campaignGroupName(o.campaignId);
  const which = `campaign ${o.campaignId}: ${entryWhich(o, h)}`;
  refuseIfMayHaveFired(h.schedule, which, o.now);
  if (h.entries === 1)
    await awsCall(d, `${which}: DeleteSchedule ${h.name}`, (opts) =>
      scheduler.send(new DeleteScheduleCommand({ Name: h.name, GroupName }), opts),
    );
  else {
    const { rest } = splitBulkEntry(h.schedule.Target!.Input!, h.index);
    await awsCall(d, `${which}: UpdateSchedule ${h.name}`, (opts) =>
      scheduler.send(
        new UpdateScheduleCommand(withInput(h.schedule, rest) as unknown as UpdateScheduleCommandInput),
        opts,
      ),
    );
  }
  return {
    campaign: o.campaignId,
    schedule: h.name,
    group: GroupName,
    removed: true,
    bulk: { entriesLeft: h.entries - 1 },
  };
}

/** The recipient's other steps held as bulk entries, for the in-order and 60-minute checks. */
async function otherBulkSteps(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number },
) {
  const holdings = await findBulkHoldings(d, scheduler, { campaignId: o.campaignId, recipientId: o.recipientId });
  return bulkStepTimes(holdings.filter((h) => h.step !== o.step));
}

function bulkStepTimes(holdings: BulkHolding[]): Map<number, { at: number; label: string }> {
  const times = new Map<number, { at: number; label: string }>();
  for (const h of holdings) {
    const zone = h.schedule.ScheduleExpressionTimezone ?? "UTC";
    const at = zoneKnown(zone) ? atInstant(h.schedule.ScheduleExpression, zone) : undefined;
    if (at !== undefined)
      times.set(h.step, {
        at,
        label: `entry of ${h.name}, due ${new Date(at).toISOString()}: ${h.schedule.ScheduleExpression} ${zone}`,
      });
  }
  return times;
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
  if (!("year" in o.at))
    throw new UsageError(`--at ${hhmm(o.at)}: ${entryWhich(o, h)} is a one-time send: give --at YYYY-MM-DDTHH:MM`);
  const zone = o.timezone ?? h.schedule.ScheduleExpressionTimezone ?? "UTC";
  if (!zoneKnown(zone))
    throw new FindingsError(
      `${which} is in time zone "${zone}", which this Node's time zone data does not know; give --timezone`,
    );
  refuseIfMayHaveFired(h.schedule, which, o.now);
  const { utcMs, fold } = zonedInstant(zone, o.at);
  if (!inTimeToCreate(utcMs, o.now))
    throw new UsageError(
      `--at: ${new Date(utcMs).toISOString()} (${zone}) is less than a minute from now; a send can only move to a time at least a minute ahead`,
    );
  const t = scheduledTime(zone, utcMs, fold);
  if (!writable(t))
    throw new UsageError(
      `--at: ${entryWhich(o, h)} would move past 9999-12-31, the last date a schedule can be written for`,
    );
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

/** The recipient-step's own schedule; missing: a finding, or undefined with `orNone` (it may be a bulk entry). */
async function getSchedule(
  d: Deadline,
  scheduler: SchedulerClient,
  campaignId: string,
  recipientId: string,
  step: number,
  orNone = false,
): Promise<GetScheduleCommandOutput | undefined> {
  const Name = scheduleName(recipientId, step);
  return awsCall(
    d,
    `campaign ${campaignId}: GetSchedule ${Name} (recipient ${recipientId}, step ${step})`,
    (opts) => scheduler.send(new GetScheduleCommand({ Name, GroupName: campaignGroupName(campaignId) }), opts),
    () => {
      if (orNone) return undefined;
      throw new FindingsError(notFound(campaignId, recipientId, step));
    },
  );
}

const notFound = (campaignId: string, recipientId: string, step: number) =>
  `campaign ${campaignId}: no schedule "${scheduleName(recipientId, step)}" (recipient ${recipientId}, step ${step}) in ${campaignGroupName(campaignId)}: already sent, removed, or never planned`;

export interface StatusReport {
  campaign: string;
  group: { name: string; state: string | null };
  schedules: { total: number; byState: Record<string, number> };
  /**
   * Pending sends per UTC hour, from GetSchedule on every schedule or on a sample (then scaled, `sampled` > 0). A
   * recurring schedule counts at its next occurrence (in its zone, from now or its StartDate, before its EndDate);
   * `recurring` is how many of the schedules repeat (scaled likewise).
   */
  nextSends: { sampled: number; estimated: boolean; recurring: number; byHour: { hour: string; count: number }[] };
  /** Sampled schedules whose zone this Node does not know: counted apart, with a few names, never guessed. */
  unknownZones: { count: number; examples: { schedule: string; zone: string }[] };
  executions: (CampaignExecution & { items: MapRunItems | null })[];
  /** The queue's depth, or why it could not be read (that line of the report only). */
  deadLetterQueue: { url: string; visible: number; inFlight: number } | { url: string; error: string } | null;
}

/** The instant of an `at(...)` expression in its zone. */
export function atInstant(expression: string | undefined, timezone: string | undefined): number | undefined {
  const wall = parseAtExpression(expression);
  return wall && zonedInstant(timezone ?? "UTC", wall).utcMs;
}

export async function campaignStatus(
  d: Deadline,
  clients: { scheduler: SchedulerClient; sfn?: SFNClient; sqs?: SQSClient },
  o: {
    campaignId: string;
    stateMachineArn?: string;
    deadLetterQueueUrl?: string;
    sampleSize: number;
    random?: () => number;
    /** What "next" is counted from (default: the current time). */
    now?: number;
  },
): Promise<StatusReport> {
  const GroupName = campaignGroupName(o.campaignId);
  const state = await groupState(d, clients.scheduler, o.campaignId);
  const listing =
    state === undefined ? { total: 0, byState: {}, sample: [] } : await listSchedules(d, clients.scheduler, o);
  const { hours, unknownZones, recurring } = await nextSendsOf(
    d,
    clients.scheduler,
    o.campaignId,
    listing.sample,
    o.now ?? Date.now(),
  );
  const scale = listing.sample.length ? listing.total / listing.sample.length : 0;
  return {
    campaign: o.campaignId,
    group: { name: GroupName, state: state ?? null },
    schedules: { total: listing.total, byState: listing.byState },
    nextSends: {
      sampled: listing.sample.length,
      estimated: listing.sample.length < listing.total,
      recurring: Math.round(recurring * scale),
      byHour: [...hours].sort().map(([hour, count]) => ({ hour, count: Math.round(count * scale) })),
    },
    unknownZones,
    executions:
      clients.sfn && o.stateMachineArn
        ? await executionsWithCounts(d, clients.sfn, o.stateMachineArn, o.campaignId)
        : [],
    deadLetterQueue:
      clients.sqs && o.deadLetterQueueUrl ? await deadLetterDepth(d, clients.sqs, o.deadLetterQueueUrl) : null,
  };
}

/** Every page of the group's schedules, counted by state, with a uniform sample of names (reservoir sampling). */
async function listSchedules(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; sampleSize: number; random?: () => number },
): Promise<{ total: number; byState: Record<string, number>; sample: string[] }> {
  const GroupName = campaignGroupName(o.campaignId);
  const byState: Record<string, number> = {};
  const sample: string[] = [];
  const random = o.random ?? Math.random;
  const progress = throttled(d.progress);
  let total = 0;
  for await (const page of allPages(
    d,
    `campaign ${o.campaignId}: ListSchedules in ${GroupName}`,
    (NextToken, opts) => scheduler.send(new ListSchedulesCommand({ GroupName, MaxResults: 100, NextToken }), opts),
    (p) => p.NextToken,
  )) {
    for (const s of page.Schedules ?? []) {
      if (s.Name === CLEANUP_SCHEDULE_NAME) continue; // the group's own housekeeping, not a send
      total++;
      byState[s.State ?? "UNKNOWN"] = (byState[s.State ?? "UNKNOWN"] ?? 0) + 1;
      // Every schedule equally likely to be read, memory bounded by the sample size.
      if (sample.length < o.sampleSize) sample.push(s.Name!);
      else {
        const j = Math.floor(random() * total);
        if (j < o.sampleSize) sample[j] = s.Name!;
      }
    }
    progress(() => `listing schedules in ${GroupName}: ${count(total)} so far`);
  }
  return { total, byState, sample };
}

/** Days ahead a recurring schedule's next occurrence is looked for: every shape fires within two months. */
const NEXT_OCCURRENCE_DAYS = 400;

/**
 * GetSchedule on each sampled name: sends per UTC hour (a recurring schedule's next occurrence); a zone this Node
 * does not know is counted apart.
 */
async function nextSendsOf(d: Deadline, scheduler: SchedulerClient, campaignId: string, sample: string[], now: number) {
  const GroupName = campaignGroupName(campaignId);
  const hours = new Map<string, number>();
  const unknownZones: StatusReport["unknownZones"] = { count: 0, examples: [] };
  let recurring = 0;
  const progress = throttled(d.progress);
  for (const [i, Name] of sample.entries()) {
    progress(() => `reading schedules in ${GroupName}: ${count(i)} of ${count(sample.length)}`);
    const s = await awsCall(d, `campaign ${campaignId}: GetSchedule ${Name}`, (opts) =>
      scheduler.send(new GetScheduleCommand({ Name, GroupName }), opts),
    );
    const zone = s.ScheduleExpressionTimezone ?? "UTC";
    if (!zoneKnown(zone)) {
      unknownZones.count++;
      if (unknownZones.examples.length < 3) unknownZones.examples.push({ schedule: Name, zone });
      continue;
    }
    const cron = parseCronExpression(s.ScheduleExpression);
    if (cron) recurring++;
    const from = Math.max(now, s.StartDate?.getTime() ?? now);
    const utc = cron
      ? nextOccurrence(
          cron,
          zone,
          from,
          Math.min(s.EndDate?.getTime() ?? Infinity, from + NEXT_OCCURRENCE_DAYS * 86_400_000),
        )
      : atInstant(s.ScheduleExpression, zone);
    const hour =
      utc !== undefined
        ? new Date(utc).toISOString().slice(0, 13) + ":00Z"
        : cron
          ? "no occurrence left"
          : "not a schedule of ours";
    hours.set(hour, (hours.get(hour) ?? 0) + 1);
  }
  return { hours, unknownZones, recurring };
}

async function executionsWithCounts(d: Deadline, sfn: SFNClient, stateMachineArn: string, campaignId: string) {
  const executions: StatusReport["executions"] = [];
  for (const e of await campaignExecutions(d, sfn, stateMachineArn, campaignId, "all", throttled(d.progress))) {
    const runs = await awsCall(d, `campaign ${campaignId}: ListMapRuns ${e.name}`, (opts) =>
      sfn.send(new ListMapRunsCommand({ executionArn: e.arn }), opts),
    );
    const mapRunArn = runs.mapRuns?.[0]?.mapRunArn;
    const items = await mapRunItems(d, sfn, mapRunArn, `campaign ${campaignId}: `);
    executions.push({ ...e, items });
  }
  return executions;
}

/** The DLQ's depth; a failure here is reported on that line only (the queue is shared and may be elsewhere). */
async function deadLetterDepth(
  d: Deadline,
  sqs: SQSClient,
  url: string,
): Promise<NonNullable<StatusReport["deadLetterQueue"]>> {
  try {
    const a = await awsCall(d, `GetQueueAttributes ${url}`, (opts) =>
      sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
        opts,
      ),
    );
    return {
      url,
      visible: Number(a.Attributes?.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  } catch (e) {
    if (!(e instanceof FindingsError) || d.expired) throw e;
    return { url, error: e.message };
  }
}
