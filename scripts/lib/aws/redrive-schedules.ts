/**
 * The redriven schedules themselves (redrive.ts decides what is sent again): each a one-time schedule of the one sender
 * in the campaign's group, named `<original>-r<N>` after the first free N, its Description naming the send it
 * re-sends, so that a name taken by this very send means an earlier run redrove it.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  GetScheduleCommand,
  GetScheduleCommandOutput,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import { atExpression } from "../../../infra/core/plan/schedule-expression";
import { inTimeToCreate } from "../../../infra/core/timing/promises";
import { FindingsError } from "../../../infra/core/errors";
import { QuietTime } from "../../../infra/core/timing/quiet-time";
import {
  FailedSend,
  FoundRow,
  MAX_REDRIVE_GENERATIONS,
  redriveBase,
  redriveDescription,
  redriveIdentity,
  redriveInput,
  redriveName,
  RedriveQuiet,
  RedriveTime,
  redriveTime,
  SenderFields,
  StackScope,
} from "../planning/dead-letters";
import { awsCall, clock, Deadline } from "./call";
import { isAwsError } from "./clients";

/** What creating a redrive's schedule needs: the run's time limit, Scheduler, the stack's fields and the queue. */
export interface ScheduleContext {
  d: Deadline;
  clients: { scheduler: SchedulerClient };
  o: {
    dryRun: boolean;
    schedulerRoleArn: string;
    scope: StackScope;
    sender: SenderFields;
    /** The redriven schedule's flexible window (the stack's default); none: OFF. */
    windowMinutes?: number;
  };
  /** The dead-letter queue, the redriven schedule's own dead letter too. */
  queueArn: string;
}

/** The plan row's launch, as far as the schedule's time reads it. */
type Row = FoundRow<{ quiet: QuietTime | null }>;

export interface Placed {
  name: string;
  at: number;
  created: boolean;
  quiet: RedriveQuiet;
}

/**
 * Creates the redriven schedule under the first free `-r<N>` name, at `time` or else as redriveTime puts it from now;
 * a name taken by this very send (its Description) means an earlier run redrove it. Dry run: GetSchedule only.
 */
export async function placeRedrive(
  c: ScheduleContext,
  send: FailedSend,
  found: Row,
  recipients: string[],
  time?: RedriveTime,
): Promise<Placed | { reason: string }> {
  const { o } = c;
  const identity = redriveIdentity(send, found);
  const description = redriveDescription(identity);
  const base = redriveBase(send, found);
  for (let n = 1; n <= MAX_REDRIVE_GENERATIONS; n++) {
    const Name = redriveName(base, n);
    const { atMs: at, quiet } = time ?? redriveTime(clock.now(), found, found.launch.quiet, o.windowMinutes);
    if (!o.dryRun) {
      // The promise every path keeps: never created less than a minute before it is due (a guard: at is 2 minutes on).
      if (!inTimeToCreate(at, clock.now()))
        return { reason: `${identity}: ${new Date(at).toISOString()} came too close to create` };
      const created = await createSchedule(c, send, Name, at, description, found, recipients);
      if (created) return { name: Name, at, created: true, quiet };
    }
    const existing = await getSchedule(c, send, Name);
    if (existing === undefined) {
      if (o.dryRun) return { name: Name, at, created: true, quiet };
      return {
        reason: `CreateSchedule ${send.group}/${Name}: ConflictException, yet no such schedule (is the group being deleted?)`,
      };
    }
    if (existing.Description === description) return { name: Name, at: atOf(existing) ?? at, created: false, quiet };
  }
  return {
    reason: `${identity}: every name up to ${redriveName(base, MAX_REDRIVE_GENERATIONS)} is taken by other sends`,
  };
}

/**
 * The schedule an earlier run created to redrive this send, if any (GetSchedule only, up to the first free name): a
 * send not sent again now may have been sent again before, by a run whose DeleteMessage did not happen.
 */
export async function findRedrive(c: ScheduleContext, send: FailedSend, found: Row): Promise<Placed | undefined> {
  const description = redriveDescription(redriveIdentity(send, found));
  const base = redriveBase(send, found);
  for (let n = 1; n <= MAX_REDRIVE_GENERATIONS; n++) {
    const Name = redriveName(base, n);
    const existing = await getSchedule(c, send, Name);
    if (existing === undefined) return undefined;
    if (existing.Description === description) {
      // (As placeRedrive reports a schedule it finds: its time as written, quiet time as it reads now.)
      const now = redriveTime(clock.now(), found, found.launch.quiet, c.o.windowMinutes);
      return { name: Name, at: atOf(existing) ?? now.atMs, created: false, quiet: now.quiet };
    }
  }
  return undefined;
}

/** GetSchedule of one name in the send's group; undefined when there is none. */
function getSchedule(
  c: ScheduleContext,
  send: FailedSend,
  Name: string,
): Promise<GetScheduleCommandOutput | undefined> {
  return awsCall(
    c.d,
    `GetSchedule ${send.group}/${Name}`,
    (opts) => c.clients.scheduler.send(new GetScheduleCommand({ Name, GroupName: send.group }), opts),
    () => undefined,
  );
}

/**
 * CreateSchedule of one redrive: a one-time schedule at `at` (UTC) of the one sender, its input rebuilt from the plan
 * row, the stack's scheduler role and this queue as its dead letter. False: the name is taken (ConflictException).
 * It stays after it fires (ActionAfterCompletion NONE): a later redrive of the same send meets it by name and
 * Description instead of sending again; the campaign's group (cancel, or its housekeeping) removes it.
 */
async function createSchedule(
  c: ScheduleContext,
  send: FailedSend,
  Name: string,
  at: number,
  Description: string,
  found: Row,
  recipients: string[],
): Promise<boolean> {
  const { o } = c;
  const input = redriveInput(o.sender, send.campaignId, found, recipients);
  const request = {
    Name,
    GroupName: send.group,
    ScheduleExpression: atExpression(new Date(at).toISOString().slice(0, 19)),
    ScheduleExpressionTimezone: "UTC",
    Description,
    FlexibleTimeWindow: o.windowMinutes
      ? { Mode: "FLEXIBLE" as const, MaximumWindowInMinutes: o.windowMinutes }
      : { Mode: "OFF" as const },
    ActionAfterCompletion: "NONE" as const,
    Target: {
      Arn: o.scope.senderArn,
      RoleArn: o.schedulerRoleArn,
      Input: JSON.stringify(input),
      DeadLetterConfig: { Arn: c.queueArn },
    },
  };
  return awsCall(
    c.d,
    `CreateSchedule ${send.group}/${Name} (redrive of ${send.original})`,
    async (opts) => {
      try {
        await c.clients.scheduler.send(new CreateScheduleCommand(request), opts);
        return true;
      } catch (e) {
        if (e instanceof ConflictException || isAwsError(e, "ConflictException")) return false;
        throw e;
      }
    },
    () => {
      throw new FindingsError(
        `CreateSchedule ${send.group}/${Name}: the group ${send.group} does not exist (the campaign was cancelled or its sends are over): not redriven`,
      );
    },
  );
}

/** The time of an existing redriven schedule (written in UTC), for the report. */
function atOf(s: { ScheduleExpression?: string }): number | undefined {
  const m = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/.exec(s.ScheduleExpression ?? "");
  return m ? Date.parse(`${m[1]}Z`) : undefined;
}
