/**
 * The promises (infra/core/timing/promises.ts) a change to one send keeps, checked against what the campaign's
 * schedules hold: a send that may have fired is not changed, and a moved send keeps the recipient's steps in order
 * and MIN_GAP_MINUTES apart, its other steps read from their own schedules and from bulk entries.
 */
import {
  GetScheduleCommand,
  GetScheduleCommandOutput,
  ListSchedulesCommand,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import { campaignGroupName, scheduleName } from "../../../../infra/core/plan/naming";
import { mayHaveFired, MIN_GAP_MINUTES, movedSendConflict } from "../../../../infra/core/timing/promises";
import { FindingsError } from "../../../../infra/core/errors";
import { allPages, awsCall, Deadline } from "../call";
import { BulkHolding, findBulkHoldings } from "../bulk-entries";
import { atInstant, zoneKnown } from "./lookup";

/** At most this many pages of ListSchedules (100 names each) are read for one recipient's other steps. */
const MAX_STEP_PAGES = 20;

/**
 * Never two at once, and in order (promises.ts movedSendConflict): the recipient's other pending step schedules are
 * read — ListSchedules by the name prefix the naming rule gives every step of this recipient, then GetSchedule of
 * each name that is one of its steps — and a move that would come within MIN_GAP_MINUTES of one, or before an earlier
 * step or after a later one, is refused (FindingsError), naming that step and its time. A step already sent (its
 * schedule deleted itself) or removed is not there to compare with.
 */
export async function refuseIfStepsWouldClash(
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
export function refuseIfMayHaveFired(current: GetScheduleCommandOutput, which: string, now: number): void {
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

/** The recipient's other steps held as bulk entries, for the in-order and 60-minute checks. */
export async function otherBulkSteps(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number },
) {
  const holdings = await findBulkHoldings(d, scheduler, { campaignId: o.campaignId, recipientId: o.recipientId });
  return bulkStepTimes(holdings.filter((h) => h.step !== o.step));
}

export function bulkStepTimes(holdings: BulkHolding[]): Map<number, { at: number; label: string }> {
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
